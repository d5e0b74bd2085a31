package driver_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// skipUnderRace skips a corpus sweep under the race detector. Such a test
// runs heliac once per model and then external tools (tflm_run, QEMU,
// compilers, Python): the detector slows it about tenfold and finds
// nothing the package's own tests under -race do not. `make test` runs
// the sweeps again without -race (the Makefile's SWEEPS);
// TestSweepsListed keeps that list complete.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("a corpus sweep: `make test` runs it without -race (SWEEPS in the Makefile)")
	}
}

// sweepDirs are the packages whose sweeps the Makefile's second step
// runs: the driver's, the Cortex-M55 and Cortex-M4 examples', stripe's
// (its TFLM proof), emit's (the corpus through the C compilers) and the
// command's (the zoo on the corpus).
var sweepDirs = []string{".", filepath.Join("..", "examples", "cortex-m55", "test"), filepath.Join("..", "examples", "cortex-m4", "test"),
	filepath.Join("..", "stripe"), filepath.Join("..", "emit"), filepath.Join("..", "cmd", "heliac")}

// TestSweepsListed checks that the Makefile's SWEEPS names exactly the
// tests of sweepDirs that skip under -race: those that call skipUnderRace
// and those in files built only without it; and that its second step runs
// them in both packages.
func TestSweepsListed(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join("..", "Makefile"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^SWEEPS\s*:=\s*\^\((.*)\)\$\$$`).FindSubmatch(mk)
	require.NotNil(t, m, "the Makefile defines SWEEPS := ^(TestA|TestB)$$")
	listed := strings.Split(string(m[1]), "|")
	sort.Strings(listed)

	for _, dir := range sweepDirs {
		pkg := "./" + filepath.ToSlash(strings.TrimPrefix(dir, ".."+string(filepath.Separator)))
		if dir == "." {
			pkg = "./driver/"
		} else {
			pkg += "/"
		}
		assert.Contains(t, string(mk), pkg, "the Makefile's test target runs SWEEPS in %s", pkg)
	}
	var files []string
	for _, dir := range sweepDirs {
		f, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		require.NoError(t, err)
		files = append(files, f...)
	}
	var sweeps []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		file, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ParseComments)
		require.NoError(t, err)
		noRace := strings.HasPrefix(string(src), "//go:build !race")
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			calls := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "skipUnderRace" {
						calls = true
					}
				}
				return !calls
			})
			if noRace || calls {
				sweeps = append(sweeps, fn.Name.Name)
			}
		}
	}
	// A name SWEEPS lists once runs in every package that has it (both
	// examples' TestQEMU).
	sort.Strings(sweeps)
	sweeps = slices.Compact(sweeps)
	require.Equal(t, sweeps, listed, "SWEEPS in the Makefile lists the tests that skip under -race")
}
