package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

type verifyOptions struct {
	model  string
	plan   string
	stdout io.Writer
}

func newVerifyCmd(runF func(*verifyOptions) error, stdout io.Writer) *cobra.Command {
	opts := &verifyOptions{stdout: stdout}
	cmd := &cobra.Command{
		Use:   "verify MODEL.tflite DIR|plan.json",
		Short: "Check a plan against its model, independently of the planner",
		Long: `verify re-reads plan.json (or DIR/plan.json) with the model it was made
for and checks, without using the planner: that no two tensors live at the
same step share bytes, that every tensor lies inside its arena, aligned, in
the right class of memory, and that every use lies inside its lifetime.
It exits 4 and lists every violation when the plan is unsafe.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return &usageError{fmt.Errorf("verify: expected a model and a plan, got %d argument(s)", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.model, opts.plan = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return runVerify(opts)
		},
	}
	return cmd
}

func runVerify(opts *verifyOptions) error {
	path := opts.plan
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "plan.json")
	}
	js, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(opts.model)
	if err != nil {
		return err
	}
	var head struct {
		Model struct {
			SHA256 string `json:"sha256"`
		} `json:"model"`
	}
	if err := json.Unmarshal(js, &head); err == nil && head.Model.SHA256 != "" {
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != head.Model.SHA256 {
			return fmt.Errorf("verify: %s was made for a model with sha256 %s, but %s has %s", path, head.Model.SHA256, opts.model, got)
		}
	}
	m, err := tflite.Load(data)
	if err != nil {
		return fmt.Errorf("verify %s: %w", opts.model, err)
	}
	if v := verify.Plan(m, js); len(v) > 0 {
		return fmt.Errorf("%s: %w", path, &driver.VerifyError{Violations: v})
	}
	fmt.Fprintf(opts.stdout, "%s: ok\n", path)
	return nil
}
