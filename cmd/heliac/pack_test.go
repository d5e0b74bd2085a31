package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// staircase is five buffers, each live with the next: the busiest step
// holds 40+50 bytes, so the lower bound is 90; stacking needs 150.
const staircase = `id,lower,upper,size
0,0,2,10
1,1,3,20
2,2,4,30
3,3,5,40
4,4,6,50
`

func TestPack(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "p.csv")
	require.NoError(t, os.WriteFile(in, []byte(staircase), 0o644))
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("id,lower,upper,size\n0,5,1,10\n"), 0o644))
	tests := []struct {
		name    string
		args    []string
		code    int
		stdout  string
		errPart string
	}{
		{"greedy", []string{"pack", in, "--strategy", "greedy"}, exitOK, `^height=90 lower_bound=90 buffers=5 seconds=[0-9.]+ optimal=true\n$`, ""},
		{"tflm", []string{"pack", in, "--strategy", "tflm"}, exitOK, `^height=90 lower_bound=90 buffers=5 seconds=[0-9.]+ optimal=true\n$`, ""},
		{"best", []string{"pack", in, "--strategy", "best"}, exitOK, `^height=90 lower_bound=90 `, ""},
		{"linear stacks everything", []string{"pack", in, "--strategy", "linear"}, exitOK, `^height=150 lower_bound=90 `, ""},
		{"capacity too small", []string{"pack", in, "--capacity", "50"}, exitNoFit, "", "infeasible"},
		{"unknown strategy", []string{"pack", in, "--strategy", "magic"}, exitUsage, "", `pack: unknown strategy "magic" (known: best, tflm, linear)`},
		{"bad time limit", []string{"pack", in, "--time-limit", "0s"}, exitUsage, "", "--time-limit"},
		{"malformed problem", []string{"pack", bad}, exitFailure, "", "line 2"},
		{"missing file", []string{"pack", filepath.Join(dir, "nope.csv")}, exitFailure, "", "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runHeliac(tt.args...)
			assert.Equal(t, tt.code, code, stderr)
			if tt.stdout != "" {
				assert.Regexp(t, regexp.MustCompile(tt.stdout), stdout)
			}
			if tt.errPart != "" {
				assert.Contains(t, stderr, tt.errPart)
			}
		})
	}
}

func TestPackWritesOffsets(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "p.csv"), filepath.Join(dir, "o.csv")
	require.NoError(t, os.WriteFile(in, []byte(staircase), 0o644))
	code, _, stderr := runHeliac("pack", in, "-o", out)
	require.Equal(t, exitOK, code, stderr)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 6)
	assert.True(t, strings.HasSuffix(lines[0], ",offset"), lines[0])
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary files are left behind")

	// -o naming the input, or a link to it, would lose the problem.
	link := filepath.Join(dir, "link.csv")
	require.NoError(t, os.Link(in, link))
	for _, o := range []string{in, link} {
		code, _, stderr = runHeliac("pack", in, "-o", o)
		assert.Equal(t, exitFailure, code)
		assert.Equal(t, "heliac: pack "+in+": writing "+o+" would replace the input CSV file; choose another -o\n", stderr)
		after, err := os.ReadFile(in)
		require.NoError(t, err)
		assert.Equal(t, staircase, string(after))
	}
}
