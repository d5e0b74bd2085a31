package main

import (
	"errors"
	"fmt"
	"io"
	"os"

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
		Use:   "verify [MODEL.tflite] DIR|PLAN.plan.json",
		Short: "Check a plan against its model, independently of the planner",
		Long: `verify re-reads a plan file with the model it was made for and checks,
without using the planner: that no two tensors live at the same step share
bytes, that every tensor lies inside its arena, aligned, in the right class
of memory, and that every use lies inside its lifetime. It exits 4 and lists
every violation when the plan is unsafe.
Given DIR, verify checks every plan file in it (<prefix>.plan.json, and
plan.json as heliac named plans before); with MODEL, DIR must hold one.
The C files of a plan's set (<prefix>.h, <prefix>.c) must carry the plan's
hash: files from different runs of heliac are an error.
Without MODEL, verify looks for the model a plan names (by sha256) among the
regular .tflite and .bin files in the plan's directory, its parent and the
current directory, those named for the model first, hashing at most 64.`,
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

// runVerify verifies every plan file opts.plan names, and returns the
// errors of all that fail.
func runVerify(opts *verifyOptions) error {
	plans, err := driver.PlanFiles(opts.plan)
	if err != nil {
		return err
	}
	if len(plans) > 1 && opts.model != "" {
		return &usageError{fmt.Errorf("verify: %s holds %d plan files; name the one made for %s", opts.plan, len(plans), opts.model)}
	}
	var errs []error
	for _, p := range plans {
		r, err := driver.VerifyPlanFile(p, opts.model)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(opts.stdout, "%s: ok\n", r.Plan)
		if r.EmittedInfo != "" {
			// What the model written with the plan says it was
			// planned for, checked against the plan.
			fmt.Fprintf(opts.stdout, "%s: ok, planned for %s\n", r.Emitted, r.EmittedInfo)
		}
	}
	if st, err := os.Stat(opts.plan); err == nil && st.IsDir() {
		// A set's shared module, against every plan in the directory.
		switch path, err := driver.VerifyShared(opts.plan); {
		case err != nil:
			errs = append(errs, err)
		case path != "":
			fmt.Fprintf(opts.stdout, "%s: ok\n", path)
		}
	}
	return errors.Join(errs...)
}
