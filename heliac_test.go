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
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/plan"
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
		{"unknown platform CPU", heliac.Options{PlatformSpec: &plan.Platform{Name: "board", CPU: "cortex-a9",
			Banks: []plan.Bank{{Name: "SRAM", Writable: true}}}}, `platform board's cpu: kernels: unknown CPU "cortex-a9"`},
		{"unknown CPU", heliac.Options{CPU: "cortex-a9"}, `unknown CPU "cortex-a9"`},
		{"overwrite and keep inputs", heliac.Options{OverwriteInputs: true, KeepInputs: true}, "--overwrite-inputs (the default) and --keep-inputs contradict"},
		{"unknown schedule", heliac.Options{Schedule: "random"}, `unknown schedule "random"`},
		{"exact overlap neither on nor off", heliac.Options{ExactOverlap: "maybe"}, `--exact-overlap: "maybe" is neither on nor off`},
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
	assert.Equal(t, kernels.Any, cfg.Kernels.Name, "a plan every kernel library computes right with")
	assert.Len(t, cfg.Kernels.Members(), 4, "the reference kernels and CMSIS-NN on three code paths")
	assert.Equal(t, cfg.Kernels, cfg.Liveness.Kernels, "in place with the same library")
	assert.Equal(t, kernels.CortexM, cfg.Target)
	assert.True(t, cfg.Liveness.OverwriteInputs, "in-place outputs may take model inputs' bytes, as TFLM's planner reuses them")
	for _, tt := range []struct {
		opts      heliac.Options
		overwrite bool
	}{
		{heliac.Options{OverwriteInputs: true}, true},
		{heliac.Options{KeepInputs: true}, false},
		{heliac.Options{NoInPlace: true, OverwriteInputs: true}, false},
	} {
		cfg, err := tt.opts.Config()
		require.NoError(t, err)
		assert.Equal(t, tt.overwrite, cfg.Liveness.OverwriteInputs, "%+v", tt.opts)
	}
	cfg, err = heliac.Options{TFLMTarget: "host64"}.Config()
	require.NoError(t, err)
	assert.Equal(t, int64(8), cfg.Target.PointerSize, "a 64-bit host's kernels ask for pointer-sized scratch of 8 bytes a pointer")
	assert.Equal(t, "any (portable)", cfg.Kernels.String(), "a host runs CMSIS-NN's portable code")
	for _, tt := range []struct {
		opts heliac.Options
		want string
		cpu  string
	}{
		{heliac.Options{Platform: "apollo510"}, "any (mve)", "cortex-m55"},
		{heliac.Options{Platform: "apollo4p"}, "any (dsp)", "cortex-m4"},
		{heliac.Options{Platform: "apollo4p", CPU: "cortex-m55"}, "any (mve)", "cortex-m55"},
		{heliac.Options{Kernels: kernels.CMSISNN}, "cmsis-nn", ""},
		{heliac.Options{Kernels: kernels.CMSISNN, CPU: "generic", TFLMTarget: "host64"}, "cmsis-nn (portable)", "generic"},
		{heliac.Options{Kernels: kernels.TFLMReference, Platform: "apollo510"}, "tflm-reference", "cortex-m55"},
		// The runtime runs whichever kernels the plan is for: by default
		// every build, the one the application links.
		{heliac.Options{Runtime: "tflm"}, "any", ""},
		{heliac.Options{Runtime: "tflm", TFLMTarget: "host64"}, "any (portable)", "generic"},
		{heliac.Options{Runtime: "tflm", Kernels: kernels.CMSISNN, CPU: "cortex-m55"}, "cmsis-nn (mve)", "cortex-m55"},
		{heliac.Options{Runtime: "tflm", Kernels: kernels.CMSISNN, CPU: "generic", TFLMTarget: "host64"}, "cmsis-nn (portable)", "generic"},
		{heliac.Options{Runtime: "tflm", Kernels: kernels.TFLMReference}, "tflm-reference", ""},
	} {
		cfg, err := tt.opts.Config()
		require.NoError(t, err, "%+v", tt.opts)
		assert.Equal(t, tt.want, cfg.Kernels.String(), "%+v", tt.opts)
		assert.Equal(t, tt.cpu, cfg.Target.CPU, "%+v", tt.opts)
	}
	_, err = heliac.Compile(context.Background(), []byte("not a model"), heliac.Options{})
	require.Error(t, err)
	var oe *heliac.OptionError
	assert.NotErrorAs(t, err, &oe, "a bad model is not a bad option")
}

// TestExactOverlapSwitch: the default plan of a model with a
// concatenation of contiguous blocks relies on exact-overlap copies;
// ExactOverlap "off" makes none rely on one.
func TestExactOverlapSwitch(t *testing.T) {
	shared := corpus.Require(t)
	data, err := os.ReadFile(filepath.Join(shared, "corpus", "esphome-mww", "vad_v2.tflite"))
	require.NoError(t, err)
	copies := func(o heliac.Options) int {
		out, err := heliac.Compile(context.Background(), data, o)
		require.NoError(t, err)
		n := 0
		for _, a := range out.Plan.Allocs {
			if a.Copy != nil {
				n++
			}
		}
		return n
	}
	assert.Positive(t, copies(heliac.Options{}), "on by default")
	assert.Positive(t, copies(heliac.Options{ExactOverlap: "on"}))
	assert.Zero(t, copies(heliac.Options{ExactOverlap: "off"}))
}
