package heliac_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/kernels"
)

// TestCompileConcurrent compiles every bundled model from several
// goroutines at once and expects, for each, the bytes of compiling it
// alone: Compile shares no state between calls (the race detector
// watches in make test).
func TestCompileConcurrent(t *testing.T) {
	files, err := filepath.Glob("testdata/models/*.tflite")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	type job struct {
		name  string
		model []byte
		opts  heliac.Options
	}
	var jobs []job
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, o := range []heliac.Options{{}, {Platform: "apollo510", Kernels: kernels.CMSISNN, CPU: "cortex-m55"}, {NoInPlace: true, Schedule: driver.ScheduleModel}} {
			o.Name = emit.ModelName(f)
			jobs = append(jobs, job{f, data, o})
		}
	}
	alone := make([][]byte, len(jobs))
	for i, j := range jobs {
		out, err := heliac.Compile(context.Background(), j.model, j.opts)
		require.NoError(t, err, j.name)
		alone[i] = setBytes(out)
	}
	var wg sync.WaitGroup
	together := make([][]byte, len(jobs))
	errs := make([]error, len(jobs))
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := heliac.Compile(context.Background(), j.model, j.opts)
			if errs[i] = err; err == nil {
				together[i] = setBytes(out)
			}
		}()
	}
	wg.Wait()
	for i, j := range jobs {
		require.NoError(t, errs[i], j.name)
		assert.True(t, bytes.Equal(alone[i], together[i]), "%s %+v: the same bytes alone and together", j.name, j.opts)
	}
}

// setBytes is every file of a compile, concatenated.
func setBytes(out *driver.Output) []byte {
	var b bytes.Buffer
	for _, f := range out.Files() {
		b.WriteString(f.Name)
		b.Write(f.Data)
	}
	return b.Bytes()
}

// TestOptions: options Compile cannot use are OptionErrors naming them;
// the zero Options compile as the heliac command does with no flags.
func TestOptions(t *testing.T) {
	tests := []struct {
		name string
		opts heliac.Options
		want string
	}{
		{"unknown platform", heliac.Options{Platform: "apollo9"}, `unknown platform "apollo9"`},
		{"unknown kernels", heliac.Options{Kernels: "arc-mli"}, `unknown kernel library "arc-mli"`},
		{"cmsis-nn without a CPU", heliac.Options{Kernels: kernels.CMSISNN}, "give --cpu"},
		{"unknown CPU", heliac.Options{CPU: "cortex-a9"}, `unknown CPU "cortex-a9"`},
		{"overwrite without in-place", heliac.Options{NoInPlace: true, OverwriteInputs: true}, "cannot go with --no-in-place"},
		{"unknown schedule", heliac.Options{Schedule: "random"}, `unknown schedule "random"`},
		{"a Cortex-M CPU on a 64-bit host", heliac.Options{CPU: "cortex-m55", TFLMTarget: "host64"}, "is a 64-bit host"},
		{"unknown patches", heliac.Options{Patches: "always"}, `--patches: unknown value "always" (known: auto, off)`},
		{"patch MACs above the whole model", heliac.Options{Patches: "auto", PatchMACs: 1.5}, "--patch-macs: 1.5 is outside 0..1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := heliac.Compile(context.Background(), nil, tt.opts)
			var oe *heliac.OptionError
			require.ErrorAs(t, err, &oe)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	cfg, err := heliac.Options{}.Config()
	require.NoError(t, err)
	assert.Equal(t, "model", cfg.ModelName)
	assert.Equal(t, kernels.TFLMReference, cfg.Kernels.Name)
	assert.Equal(t, cfg.Kernels, cfg.Liveness.Kernels, "in place with the same library")
	assert.Equal(t, kernels.CortexM, cfg.Target)
	cfg, err = heliac.Options{TFLMTarget: "host64"}.Config()
	require.NoError(t, err)
	assert.Equal(t, int64(8), cfg.Target.PointerSize, "a 64-bit host's kernels ask for pointer-sized scratch of 8 bytes a pointer")
	_, err = heliac.Compile(context.Background(), []byte("not a model"), heliac.Options{})
	require.Error(t, err)
	var oe *heliac.OptionError
	assert.NotErrorAs(t, err, &oe, "a bad model is not a bad option")
}
