// Command testprogress runs `go test -json ...` (its arguments: the
// command) and turns its output into the lines `make test` prints: a line
// when each package starts and when it ends (ok or FAIL, its time, how many
// tests passed and were skipped, and the tests that took 20 s or more),
// the whole output of every failed test
// and of build failures, and a last line that counts packages and tests,
// skipped ones included ("0 skipped" too), with the reasons tests gave for
// skipping. It exits 1 when the command or a test failed, so `make test`
// keeps go test's verdict. Lines that are not go test's JSON are printed as
// they are; the command's standard error passes through.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testprogress go test -json [flags] [packages]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "testprogress: %v\n", err)
		os.Exit(1)
	}
	ok := report(out, os.Stdout, time.Now)
	if err := cmd.Wait(); err != nil || !ok {
		os.Exit(1)
	}
}

// event is one line of go test -json (test2json's TestEvent).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
	// ImportPath names the test binary a build-output or build-fail
	// event is about, and a package's FailedBuild the one that failed.
	ImportPath  string
	FailedBuild string
}

// pkgState is what has been seen of a package.
type pkgState struct {
	passed, skipped, failed int
	// slow are the top-level tests that passed in slowTest or more,
	// "name 12.3s".
	slow []string
	// output holds each running test's output until it passes (then
	// dropped) or fails (then printed); "" is the package's own.
	output map[string][]string
}

// slowTest is the time from which a passed test is named on its
// package's line: where CI's minutes go.
const slowTest = 20.0

// report reads go test -json from r, writes the progress lines to w and
// reports whether everything passed. now stamps the lines.
func report(r io.Reader, w io.Writer, now func() time.Time) bool {
	pkgs := map[string]*pkgState{}
	state := func(p string) *pkgState {
		s := pkgs[p]
		if s == nil {
			s = &pkgState{output: map[string][]string{}}
			pkgs[p] = s
		}
		return s
	}
	stamp := func() string { return now().Format("15:04:05") }
	ok := true
	builds := map[string][]string{} // a test binary's build output
	skipReasons := map[string]int{}
	nPkgs, nFailedPkgs := 0, 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		switch e.Action {
		case "build-output":
			builds[e.ImportPath] = append(builds[e.ImportPath], e.Output)
			continue
		case "build-fail":
			ok = false
			continue
		}
		s := state(e.Package)
		switch e.Action {
		case "start":
			fmt.Fprintf(w, "%s start %s\n", stamp(), e.Package)
		case "output":
			s.output[e.Test] = append(s.output[e.Test], e.Output)
		case "pass":
			if e.Test == "" {
				nPkgs++
				fmt.Fprintf(w, "%s ok    %s %.1fs (%d passed, %d skipped)\n", stamp(), e.Package, e.Elapsed, s.passed, s.skipped)
				if len(s.slow) > 0 {
					fmt.Fprintf(w, "         slowest: %s\n", strings.Join(s.slow, ", "))
				}
			} else if !strings.Contains(e.Test, "/") {
				s.passed++
				if e.Elapsed >= slowTest {
					s.slow = append(s.slow, fmt.Sprintf("%s %.1fs", e.Test, e.Elapsed))
				}
			}
			delete(s.output, e.Test)
		case "skip":
			if e.Test == "" {
				nPkgs++
				fmt.Fprintf(w, "%s ok    %s (no tests)\n", stamp(), e.Package)
			} else if !strings.Contains(e.Test, "/") {
				s.skipped++
				skipReasons[skipReason(s.output[e.Test])]++
			}
			delete(s.output, e.Test)
		case "fail":
			ok = false
			if e.Test != "" {
				if !strings.Contains(e.Test, "/") {
					s.failed++
				}
				fmt.Fprintf(w, "--- FAIL: %s %s\n%s", e.Package, e.Test, strings.Join(s.output[e.Test], ""))
				delete(s.output, e.Test)
				continue
			}
			nPkgs++
			nFailedPkgs++
			fmt.Fprintf(w, "%s%sFAIL  %s %.1fs (%d passed, %d skipped, %d failed)\n", strings.Join(builds[e.FailedBuild], ""),
				strings.Join(s.output[""], ""), e.Package, e.Elapsed, s.passed, s.skipped, s.failed)
			delete(s.output, "")
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(w, "testprogress: reading go test's output: %v\n", err)
		ok = false
	}
	passed, skipped, failed := 0, 0, 0
	for _, s := range pkgs {
		passed, skipped, failed = passed+s.passed, skipped+s.skipped, failed+s.failed
	}
	fmt.Fprintf(w, "%d package(s), %d failed; %d test(s) passed, %d failed, %d skipped\n", nPkgs, nFailedPkgs, passed, failed, skipped)
	reasons := make([]string, 0, len(skipReasons))
	for r := range skipReasons {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if skipReasons[reasons[i]] != skipReasons[reasons[j]] {
			return skipReasons[reasons[i]] > skipReasons[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	for _, r := range reasons {
		fmt.Fprintf(w, "  %4d skipped: %s\n", skipReasons[r], r)
	}
	return ok
}

// skipReason is the message a skipped test gave (its last line of
// output that is not the "--- SKIP" line), without the file:line prefix.
func skipReason(out []string) string {
	for i := len(out) - 1; i >= 0; i-- {
		l := strings.TrimSpace(out[i])
		if l == "" || strings.HasPrefix(l, "--- SKIP") || strings.HasPrefix(l, "=== ") {
			continue
		}
		if _, msg, found := strings.Cut(l, ": "); found && strings.Contains(l[:strings.Index(l, ": ")], ".go:") {
			return msg
		}
		return l
	}
	return "(no reason given)"
}
