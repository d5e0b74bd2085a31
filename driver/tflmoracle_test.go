package driver_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// verdict is what a tflm_run run at a given arena says about TFLM.
type verdict int

const (
	// allocFailed: TFLM's AllocateTensors failed (status=error with
	// TFLM's own message, before anything else ran).
	allocFailed verdict = iota
	// ran: TFLM allocated the model and every invocation ran.
	ran
	// other: anything else (an invocation failed, no output).
	other
)

// runOracle runs tool (tflm_run or tflm_run_m55) on model with an arena
// of n bytes (0: the tool's default), one invocation, and classifies it;
// it returns the key=value lines too.
func runOracle(ctx context.Context, tool, model string, n int64, timeout time.Duration) (verdict, map[string]string) {
	ctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	args := []string{"--quiet", "--invokes", "1"}
	if n > 0 {
		args = append(args, "--arena-bytes", strconv.FormatInt(n, 10))
	}
	cmd := exec.CommandContext(ctx, tool, append(args, model)...)
	// tflm_run_m55 runs QEMU under timeout(1), which stops it at
	// QEMU_TIMEOUT; past that, SIGTERM (timeout(1) hands it on to QEMU),
	// never SIGKILL first, which would leave QEMU running.
	cmd.Env = append(os.Environ(), "QEMU_TIMEOUT="+strconv.Itoa(max(int(timeout.Seconds()), 1)))
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	v := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		if k, val, ok := strings.Cut(sc.Text(), "="); ok {
			v[k] = val
		}
	}
	switch {
	case v["status"] == "ok" && v["invoke.0"] == "ok" && v["warning"] == "" && err == nil:
		return ran, v
	case v["status"] == "error" && tflmAllocError(v["error"]):
		return allocFailed, v
	}
	return other, v
}

// tflmAllocError reports whether a log line holds one of TFLM's arena
// allocator's failure messages (single_arena_buffer_allocator.cc,
// greedy_memory_planner.cc).
func tflmAllocError(e string) bool {
	for _, s := range []string{"Failed to allocate", "Failed to resize buffer", "Too many buffers", "Unable to allocate", "Failed starting model allocation"} {
		if strings.Contains(e, s) {
			return true
		}
	}
	return false
}
