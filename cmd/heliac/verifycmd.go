package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/heliac/heliac/driver"
)

type verifyOptions struct {
	model  string
	plan   string
	stdout io.Writer
}

func newVerifyCmd(runF func(*verifyOptions) error, stdout io.Writer) *cobra.Command {
	opts := &verifyOptions{stdout: stdout}
	cmd := &cobra.Command{
		Use:   "verify [MODEL.tflite] DIR|plan.json",
		Short: "Check a plan against its model, independently of the planner",
		Long: `verify re-reads plan.json (or DIR/plan.json) with the model it was made
for and checks, without using the planner: that no two tensors live at the
same step share bytes, that every tensor lies inside its arena, aligned, in
the right class of memory, and that every use lies inside its lifetime.
It exits 4 and lists every violation when the plan is unsafe.
Without MODEL, verify looks for the model plan.json names (by sha256) among
the .tflite and .bin files in the plan's directory, its parent and the
current directory.`,
		Args: argCount(1, 2, "verify: expected [model] and a plan, got %d argument(s)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 {
				opts.model, opts.plan = args[0], args[1]
			} else {
				opts.plan = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return runVerify(opts)
		},
	}
	return cmd
}

func runVerify(opts *verifyOptions) error {
	r, err := driver.VerifyPlanFile(opts.plan, opts.model)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.stdout, "%s: ok\n", r.Plan)
	return nil
}
