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
	path := opts.plan
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "plan.json")
	}
	js, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var head struct {
		Model struct {
			SHA256 string `json:"sha256"`
		} `json:"model"`
	}
	_ = json.Unmarshal(js, &head)
	if opts.model == "" {
		m, err := findModel(path, head.Model.SHA256)
		if err != nil {
			return err
		}
		opts.model = m
	}
	data, err := os.ReadFile(opts.model)
	if err != nil {
		return err
	}
	if head.Model.SHA256 != "" {
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

// findModel looks for the model file whose sha256 plan.json records, in
// the plan's directory, its parent and the current directory.
func findModel(planPath, sum string) (string, error) {
	if sum == "" {
		return "", &usageError{fmt.Errorf("verify: %s names no model sha256; give the model: heliac verify MODEL %s", planPath, planPath)}
	}
	dir := filepath.Dir(planPath)
	for _, d := range []string{dir, filepath.Dir(dir), "."} {
		for _, pat := range []string{"*.tflite", "*.bin"} {
			files, _ := filepath.Glob(filepath.Join(d, pat))
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					continue
				}
				got := sha256.Sum256(data)
				if hex.EncodeToString(got[:]) == sum {
					return f, nil
				}
			}
		}
	}
	return "", fmt.Errorf("verify: no model with sha256 %s next to %s; give it: heliac verify MODEL %s", sum, planPath, planPath)
}
