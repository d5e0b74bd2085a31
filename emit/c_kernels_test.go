package emit_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// TestKernelGuard: the header refuses to compile in a build whose kernels
// are not those the plan was made for (TFLM's CMSIS-NN build defines
// CMSIS_NN; the compiler's target macros pick CMSIS-NN's code path), and
// compiles in every build it was made for. A plan for every library on
// every path checks nothing.
func TestKernelGuard(t *testing.T) {
	m := readModel(t, "../testdata/models/hello_world_int8.tflite")
	lt, err := liveness.Analyze(m, liveness.Options{})
	require.NoError(t, err)
	p, err := plan.Build(context.Background(), m, lt, plan.Options{})
	require.NoError(t, err)
	host := []string{"gcc", "-std=c99"}
	m55 := []string{"arm-none-eabi-gcc", "-mcpu=cortex-m55", "-mfpu=auto", "-mfloat-abi=hard", "-mthumb"} // as TFLM builds it
	m4 := []string{"arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb"}
	type build struct {
		cc    []string
		cmsis bool
		error string // "" compiles
	}
	tests := []struct {
		kernels, path string
		builds        []build
	}{
		{"any", "", []build{{host, false, ""}, {host, true, ""}, {m55, true, ""}, {m4, true, ""}}},
		{"tflm-reference", "", []build{{host, false, ""}, {host, true, "planned for TFLM's reference kernels, but this build defines CMSIS_NN"}}},
		{"cmsis-nn", "", []build{{host, true, ""}, {m4, true, ""}, {host, false, "planned for TFLM's CMSIS-NN kernels, but this build does not define CMSIS_NN"}}},
		{"cmsis-nn", "mve", []build{{m55, true, ""}, {m4, true, "planned for CMSIS-NN's mve code, but CMSIS-NN runs its DSP or portable code"},
			{host, true, "planned for CMSIS-NN's mve code"}, {m55, false, "does not define CMSIS_NN"}}},
		{"any", "dsp", []build{{m4, false, ""}, {m4, true, ""}, {m55, false, ""}, {m55, true, "planned for CMSIS-NN's dsp code, but CMSIS-NN runs its MVE or portable code"},
			{host, true, "planned for CMSIS-NN's dsp code"}}},
		{"any", "portable", []build{{host, true, ""}, {host, false, ""}, {m4, true, "planned for CMSIS-NN's portable code, but CMSIS-NN runs its DSP or MVE code"}}},
	}
	for _, tt := range tests {
		q := *p
		q.Kernels, q.KernelsPath = tt.kernels, tt.path
		files, err := emit.C(m, &q, emit.COptions{Prefix: "g"})
		require.NoError(t, err)
		dir := t.TempDir()
		writeFiles(t, dir, files)
		for _, b := range tt.builds {
			if _, err := exec.LookPath(b.cc[0]); err != nil {
				t.Logf("%s not on PATH", b.cc[0])
				continue
			}
			args := append(append([]string{}, b.cc[1:]...), "-fsyntax-only", "-x", "c", filepath.Join(dir, "g.h"))
			if b.cmsis {
				args = append(args, "-DCMSIS_NN")
			}
			out, err := runOut(t, dir, b.cc[0], args...)
			what := tt.kernels + " " + tt.path + ": " + strings.Join(args, " ")
			if b.error == "" {
				assert.NoError(t, err, "%s\n%s", what, out)
			} else {
				assert.Error(t, err, what)
				assert.Contains(t, out, b.error, what)
			}
		}
	}
}
