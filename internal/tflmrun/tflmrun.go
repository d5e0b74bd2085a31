// Package tflmrun runs ../shared/tools/tflm_run, a stock TensorFlow Lite
// Micro (reference kernels) built for this machine, and reads what it
// prints: the oracle that real kernels compute the same answer on heliac's
// plan. Tests that use it skip cleanly when it is absent.
//
// It imports no heliac package but internal/corpus.
package tflmrun

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heliac/heliac/internal/corpus"
)

// EnvPath names an environment variable that overrides where tflm_run is
// looked for.
const EnvPath = "HELIAC_TFLM_RUN"

// Path returns the tflm_run binary, or "" when there is none.
func Path() string {
	p := os.Getenv(EnvPath)
	if p == "" {
		d := corpus.SharedDir()
		if d == "" {
			return ""
		}
		p = filepath.Join(d, "tools", "tflm_run")
	}
	if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return ""
	}
	return p
}

// The runners ../shared/tools holds beside tflm_run (its README): the same
// runner with TFLM's CMSIS-NN kernels on the host (portable C), and on
// emulated Cortex-M4F (DSP) and Cortex-M55 (MVE) CPUs under QEMU, and
// with the reference kernels on those CPUs.
const (
	CMSISNN     = "tflm_run_cmsis"
	M4CMSISNN   = "tflm_run_m4_cmsis"
	M55CMSISNN  = "tflm_run_m55_cmsis"
	M4          = "tflm_run_m4"
	M55         = "tflm_run_m55"
	qemuCommand = "qemu-system-arm"
)

// Tool returns the runner of ../shared/tools named name (CMSISNN, ...),
// or "" when it is absent, or when it emulates a CPU and QEMU is not on
// PATH.
func Tool(name string) string {
	d := corpus.SharedDir()
	if d == "" {
		return ""
	}
	p := filepath.Join(d, "tools", name)
	if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return ""
	}
	if name != CMSISNN {
		if _, err := exec.LookPath(qemuCommand); err != nil {
			return ""
		}
	}
	return p
}

// RequireTool returns Tool(name) or skips the test when it is absent.
func RequireTool(tb testing.TB, name string) string {
	tb.Helper()
	p := Tool(name)
	if p == "" {
		tb.Skip(name + " not found (../shared/tools, and qemu-system-arm for an emulated CPU); skipping")
	}
	return p
}

// Require returns the tflm_run binary or skips the test when it is absent.
func Require(tb testing.TB) string {
	tb.Helper()
	p := Path()
	if p == "" {
		tb.Skip("tflm_run not found (../shared/tools/tflm_run or $" + EnvPath + "); skipping TFLM interop tests")
	}
	return p
}

// Options are the runner's flags.
type Options struct {
	Seed       int           // --seed: input values (and the arena's fill)
	FillSeed   int           // --fill-seed: the arena's fill; 0 means Seed's
	Invokes    int           // --invokes; 0 means the tool's default (3)
	ArenaBytes int64         // --arena-bytes; 0 means the tool's default (512 MiB)
	Trace      bool          // --trace: a digest of every operator's outputs
	Timeout    time.Duration // --timeout, and how long the process may run; 0 means 60 s
}

// Result is what one run printed.
type Result struct {
	// Values holds every key=value line.
	Values map[string]string
	// Exit is the process's exit status: 0 ok; 1 TFLM cannot allocate
	// or invoke the model.
	Exit int
}

// OK reports whether TFLM allocated the model and ran every invocation.
func (r *Result) OK() bool { return r.Exit == 0 && r.Values["status"] == "ok" }

// Int returns an integer value, or -1 when the key is absent or not a
// number.
func (r *Result) Int(key string) int64 {
	n, err := strconv.ParseInt(r.Values[key], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// Outputs returns the output digests, "output.<invocation>.<index>"
// lines, sorted, each as "key=value".
func (r *Result) Outputs() []string {
	var out []string
	for k, v := range r.Values {
		if strings.HasPrefix(k, "output.") {
			out = append(out, k+"="+v)
		}
	}
	sort.Strings(out)
	return out
}

// Error describes a failed run from what it printed.
func (r *Result) Error() string {
	if e := r.Values["error"]; e != "" {
		return e
	}
	return fmt.Sprintf("status %q, exit %d", r.Values["status"], r.Exit)
}

// Run runs tflm_run on model with opts.
func Run(ctx context.Context, tool, model string, opts Options) (*Result, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	args := []string{"--quiet", "--seed", strconv.Itoa(opts.Seed), "--timeout", strconv.Itoa(int(timeout.Seconds()))}
	if opts.FillSeed != 0 {
		args = append(args, "--fill-seed", strconv.Itoa(opts.FillSeed))
	}
	if opts.Invokes > 0 {
		args = append(args, "--invokes", strconv.Itoa(opts.Invokes))
	}
	if opts.ArenaBytes > 0 {
		args = append(args, "--arena-bytes", strconv.FormatInt(opts.ArenaBytes, 10))
	}
	if opts.Trace {
		args = append(args, "--trace")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, append(args, model)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := &Result{Values: parse(stdout.Bytes())}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.Exit = exit.ExitCode()
		if res.Exit != 1 {
			return nil, fmt.Errorf("tflm_run %s: exit %d: %s", model, res.Exit, strings.TrimSpace(stderr.String()))
		}
	case err != nil:
		return nil, fmt.Errorf("tflm_run %s: %w", model, err)
	}
	return res, nil
}

// parse reads key=value lines; the first '=' splits.
func parse(out []byte) map[string]string {
	values := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			values[k] = v
		}
	}
	return values
}
