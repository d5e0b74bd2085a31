package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/internal/inputfile"
	"github.com/heliac/heliac/zoo"
)

// zooOptions are the zoo command's own flags; the compile flags are those
// of a single model.
type zooOptions struct {
	compileOptions
	roots []string
	jobs  int
}

// zooFailedError says that some models of a zoo failed.
type zooFailedError struct{ failed, total int }

func (e *zooFailedError) Error() string {
	return fmt.Sprintf("zoo: %d of %d model(s) failed; their errors are in summary.csv", e.failed, e.total)
}

func newZooCmd(runF func(*zooOptions) error, stdout, stderr io.Writer) *cobra.Command {
	opts := &zooOptions{compileOptions: compileOptions{stdout: stdout, stderr: stderr}}
	cmd := &cobra.Command{
		Use:   "zoo DIR... -o OUT [-j N]",
		Short: "Compile every model under the given folders, in parallel, and summarize them",
		Long: `zoo compiles every model under the given folders (files named *.tflite, and
any other file that is a TFLite flatbuffer) with the compile flags, as many
at once as -j says. Each model's files go to OUT/<its path below its folder>/;
a model that fails leaves its folder as it was and the others go on. OUT
itself is not searched. A symbolic link to a model is compiled as the file
it names; an entry named *.tflite that is no regular file (a FIFO, a broken
link, a link loop) and a link to a folder are listed as skipped, with why.
OUT/summary.csv and OUT/summary.json give every model's status, error, steps,
arenas, scratch lower bound, scratch arena, how far above the bound, kernel
scratch bytes, compile milliseconds, and whether stock TFLM runs the model
(tflm_runs; tflm_refuses says why not: an operator it has no kernel for,
or one whose kernel refuses its types, such as a TF1-style UINT8 model's). On a terminal a progress bar shows
on stderr; otherwise a line per model on stdout; with --json, summary.json
on stdout instead. The exit status is 1 when any model failed.`,
		Example:       "  heliac zoo ../shared/corpus -o zoo-out/ -j 2",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &usageError{errors.New("expected one or more folders or model files; see 'heliac zoo --help'")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.roots = args
			switch {
			case opts.outDir == "":
				return &usageError{errors.New("-o is empty; give the directory to write the models' folders and the summary into")}
			case opts.prefix != "":
				return &usageError{errors.New("--prefix names one model's C symbols; zoo derives each model's from its file name")}
			case opts.jobs < 1:
				return &usageError{fmt.Errorf("-j must be 1 or more, got %d", opts.jobs)}
			}
			if err := checkCompileFlags(&opts.compileOptions); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runZoo(cmd.Context(), opts)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	addCompileFlags(cmd, &opts.compileOptions)
	cmd.Flags().Lookup("out").Usage = "directory to write each model's folder and summary.csv, summary.json into"
	cmd.Flags().IntVarP(&opts.jobs, "jobs", "j", runtime.NumCPU(), "models compiled at once")
	return cmd
}

// zooCompile compiles each model of a zoo; tests replace it to make one
// panic.
var zooCompile = driver.Compile

// runZoo finds the models, compiles and writes each as the single-model
// command would, then writes the summary.
func runZoo(ctx context.Context, opts *zooOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// The output folder is left out of the search: a rerun must not
	// compile the models an earlier run wrote there (--emit-tflite).
	models, err := zoo.Find(opts.roots, opts.outDir)
	if err != nil {
		return err
	}
	if len(models) == 0 {
		return fmt.Errorf("zoo: no model under %s", strings.Join(opts.roots, ", "))
	}
	cfg, err := compileConfig(&opts.compileOptions)
	if err != nil {
		return err
	}
	compile := func(ctx context.Context, m zoo.Model) (*driver.Output, error) {
		data, err := inputfile.Read(m.Path, inputfile.Model)
		if err != nil {
			return nil, err
		}
		c := cfg
		c.ModelName = emit.ModelName(m.Path)
		out, err := zooCompile(ctx, data, c)
		if err != nil {
			return nil, fmt.Errorf("compile %s: %w", m.Path, err)
		}
		one := opts.compileOptions
		one.model, one.outDir = m.Path, filepath.Join(opts.outDir, filepath.FromSlash(m.Name))
		if err := writeOutput(&one, c.ModelName, out.Files()); err != nil {
			return nil, fmt.Errorf("compile %s: %w", m.Path, err)
		}
		return out, nil
	}
	bar := isTerminal(opts.stderr) && !opts.quiet
	finished, failed, skipped := 0, 0, 0
	start := time.Now()
	results := zoo.Run(ctx, models, opts.jobs, compile, func(r zoo.Result) {
		finished++
		switch {
		case r.Err != nil:
			failed++
		case r.Model.Skip != "":
			skipped++
		}
		if pe := (*zoo.PanicError)(nil); errors.As(r.Err, &pe) {
			// A heliac bug: the summary has its first line, stderr the stack.
			fmt.Fprintf(opts.stderr, "heliac: zoo: %s: %v\n%s\n", r.Model.Path, pe, pe.Stack)
		}
		switch {
		case opts.quiet, opts.json:
		case bar:
			progress(opts.stderr, finished, failed, len(models), r.Model.Name)
		default:
			fmt.Fprintln(opts.stdout, zooLine(finished, len(models), r))
		}
	})
	wall := time.Since(start)
	if bar {
		fmt.Fprintln(opts.stderr)
	}
	rows := zoo.Summarize(results)
	js, err := zoo.JSON(rows)
	if err != nil {
		return err
	}
	summary := emit.Files{{Name: "summary.csv", Data: zoo.CSV(rows)}, {Name: "summary.json", Data: js}}
	if err := writeSet(opts.outDir, summary, nil, ""); err != nil {
		return err
	}
	if opts.json && !opts.quiet {
		if _, err := opts.stdout.Write(js); err != nil {
			return err
		}
	}
	if !opts.quiet && !opts.json {
		var sum time.Duration
		for _, r := range results {
			sum += r.Elapsed
		}
		skips := ""
		if skipped > 0 {
			skips = fmt.Sprintf(", %d skipped", skipped)
		}
		fmt.Fprintf(opts.stdout, "zoo: %d model(s), %d failed%s, in %.1f s with %d job(s); the compiles took %.1f s in all (wall/sum %.2f); wrote %s, %s\n",
			len(models)-skipped, failed, skips, wall.Seconds(), opts.jobs, sum.Seconds(), wall.Seconds()/max(sum.Seconds(), 1e-9),
			filepath.Join(opts.outDir, "summary.csv"), filepath.Join(opts.outDir, "summary.json"))
	}
	if failed > 0 {
		return &zooFailedError{failed, len(models) - skipped}
	}
	return nil
}

// zooLine is the plain line of one finished model.
func zooLine(done, total int, r zoo.Result) string {
	row := zoo.Summarize([]zoo.Result{r})[0]
	if row.Status == zoo.Skipped {
		return fmt.Sprintf("[%d/%d] skipped %s: %s", done, total, row.Model, row.Error)
	}
	if row.Status != zoo.OK {
		return fmt.Sprintf("[%d/%d] failed %s: %s", done, total, row.Model, row.Error)
	}
	tflm := ""
	if row.Kept != "" {
		tflm = fmt.Sprintf(", TFLM's own head %d B (%s)", row.TFLMOwnHead, emit.Difference(row.TFLMOwnHead+row.VsTFLM, row.TFLMOwnHead))
		switch row.Kept {
		case driver.KeptTFLM:
			tflm += ", TFLM's placement kept (heliac's needed more)"
		case driver.KeptModel:
			tflm += ", the model's own plan kept (heliac's needed more)"
		}
	}
	if row.TFLMRefuses != "" {
		tflm += "; TFLM will not run it: " + emit.EscapeName(row.TFLMRefuses)
	}
	return fmt.Sprintf("[%d/%d] ok %s: scratch arena %d B, lower bound %d B (%s)%s, %.0f ms",
		done, total, row.Model, row.Arena, row.Bound, emit.Percent(row.Arena, row.Bound), tflm, row.Milliseconds)
}

// progress redraws the progress bar on a terminal.
func progress(w io.Writer, done, failed, total int, name string) {
	const width = 30
	n := done * width / max(total, 1)
	status := ""
	if failed > 0 {
		status = fmt.Sprintf(", %d failed", failed)
	}
	if len(name) > 40 {
		name = "…" + name[len(name)-39:]
	}
	fmt.Fprintf(w, "\r\033[K[%s%s] %d/%d%s %s", strings.Repeat("#", n), strings.Repeat(".", width-n), done, total, status, name)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
