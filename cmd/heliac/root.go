package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/plan"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitNoFit   = 3
	exitVerify  = 4 // the plan failed verification, or heliac panicked: a heliac bug
)

// noFitError marks plans that do not fit the memory they were given.
type noFitError struct{ err error }

func (e *noFitError) Error() string { return e.err.Error() }
func (e *noFitError) Unwrap() error { return e.err }

// usageError marks errors in how heliac was called.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// argCount accepts between min and max positional arguments; otherwise it
// returns a usage error whose message is format applied to the count.
func argCount(min, max int, format string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) < min || len(args) > max {
			return &usageError{fmt.Errorf(format, len(args))}
		}
		return nil
	}
}

// version is heliac's version; release builds set it with -ldflags -X.
var version = ""

func heliacVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// run executes heliac with args and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	return runWith(nil, args, stdout, stderr)
}

// runWith is run with the main command's action replaced by runF when it
// is not nil (tests). A panic anywhere below it is a heliac bug: it is
// reported on one line, its stack after, with exit code 4, and nothing is
// written, since a set's files are written only after it is complete.
func runWith(runF func(*compileOptions) error, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "heliac: heliac bug: %v (please report it with the model and the command)\n%s", r, debug.Stack())
			code = exitVerify
		}
	}()
	root := newRootCmd(runF, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	// Errors joined (verify's, one per plan) get a line each.
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		fmt.Fprintf(stderr, "heliac: %v\n", e)
	}
	code = exitCode(err)
	if wantsJSON(args) {
		// A caller that parses stdout gets an error object, not nothing.
		printJSONError(stdout, errs, code)
	}
	return code
}

// wantsJSON reports whether args ask for JSON on stdout (--json).
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
}

// jsonError is what --json prints on stdout when heliac fails: the
// errors stderr gets, one a line there, and the exit code.
type jsonError struct {
	Error    string   `json:"error"`
	Errors   []string `json:"errors,omitempty"`
	ExitCode int      `json:"exit_code"`
}

// printJSONError prints errs as a jsonError.
func printJSONError(stdout io.Writer, errs []error, code int) {
	e := jsonError{Error: errs[0].Error(), ExitCode: code}
	if len(errs) > 1 {
		for _, x := range errs {
			e.Errors = append(e.Errors, x.Error())
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(e)
}

// exitCode maps an error to heliac's exit code.
func exitCode(err error) int {
	var ue *usageError
	var mn *driver.ModelNotNamedError
	var ve *driver.VerifyError
	var nf *noFitError
	var ce *plan.CapacityError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue), errors.As(err, &mn):
		return exitUsage
	case errors.As(err, &nf), errors.As(err, &ce):
		return exitNoFit
	case errors.As(err, &ve):
		return exitVerify
	}
	return exitFailure
}

func newRootCmd(runF func(*compileOptions) error, stdout, stderr io.Writer) *cobra.Command {
	opts := &compileOptions{stdout: stdout, stderr: stderr}
	cmd := &cobra.Command{
		Use:   "heliac MODEL.tflite... [-o DIR]",
		Short: "Plan a TFLite model's memory ahead of time and emit C for microcontrollers",
		Long: `heliac reads a TensorFlow Lite model, computes every tensor's lifetime,
places tensors in arenas so that tensors live at the same time never share
bytes, and writes <prefix>.plan.json plus C sources (<prefix>.h, <prefix>.c)
that a firmware build compiles with no allocator and no interpreter. Several
models' files share a directory; a failed run leaves the previous files.
Several models given at once are one firmware that runs one at a time: their
scratch arenas share one buffer, sized to the largest, which the extra
heliac_shared.c defines and heliac_shared_bind() binds to every model.`,
		Example:       "  heliac testdata/models/hello_world_int8.tflite -o out/\n  heliac inspect model.tflite --json",
		Version:       heliacVersion(),
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          argCount(1, 1<<16, "expected one or more model files, got %d argument(s); see 'heliac --help'"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.model, opts.models = args[0], args
			if len(args) > 1 && opts.prefix != "" {
				return &usageError{errors.New("--prefix names one model's C symbols; with several models each takes its file's name")}
			}
			if opts.outDir == "" {
				return &usageError{errors.New("-o is empty; give the directory to write the plan and C files into")}
			}
			if err := checkCompileFlags(opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runCompile(cmd.Context(), opts)
		},
	}
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	addCompileFlags(cmd, opts)
	cmd.AddCommand(newInspectCmd(nil, stdout), newPackCmd(nil, stdout), newVerifyCmd(nil, stdout), newZooCmd(nil, stdout, stderr))
	return cmd
}
