package driver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/plan"
)

// goldenDir holds, per bundled model, the files heliac emits for it. Set
// HELIAC_UPDATE=1 (make golden) to rewrite them; review their diffs like code.
const goldenDir = "testdata/golden"

// goldenVariant is a golden beside a model's default one: the files of one
// model compiled with other options, in goldenDir/<model>+<name>.
type goldenVariant struct {
	model, name string
	config      func(*driver.Config)
}

// goldenVariants cover the C module's other forms: arenas the application
// binds and constants as binary files with an assembler stub, on a
// platform whose banks name their sections; staged constants written for
// #embed; outputs written over their inputs under TFLM's reference
// kernels' contracts, as the CLI plans by default (micro_speech's
// convolutions sweep over their inputs, a group placed as a rigid shape);
// the scratch TFLM's reference kernels ask for (keyword_scrambled's SVDFs).
var goldenVariants = []goldenVariant{
	{"audio_preprocessor_int8", "in-place", func(c *driver.Config) {
		lib, _ := kernels.Lookup(kernels.TFLMReference)
		c.Liveness.Kernels = lib
	}},
	{"micro_speech_quantized", "in-place", func(c *driver.Config) {
		lib, _ := kernels.Lookup(kernels.TFLMReference)
		c.Liveness.Kernels = lib
	}},
	{"keyword_scrambled_8bit", "kernel-scratch", func(c *driver.Config) {
		lib, _ := kernels.Lookup(kernels.TFLMReference)
		c.Kernels = lib
	}},
	{"call_once_mul", "apollo510-external-incbin", func(c *driver.Config) {
		p, _ := plan.BuiltinPlatform("apollo510")
		c.Plan.Platform = &p
		c.Plan.External = []string{"*"}
		c.Constants = emit.ConstantsIncbin
	}},
	{"hello_world_int8", "staged-embed", func(c *driver.Config) {
		p, _ := plan.BuiltinPlatform("apollo510")
		p.Banks[1].BootInit = true // SRAM: .shared, filled at boot
		c.Plan.Platform = &p
		c.Plan.Rules = []plan.Rule{{Class: "constant", Memory: "DTCM", Source: "MRAM"}}
		c.Constants = emit.ConstantsEmbed
	}},
}

// goldenCase is one golden directory: a model and the options it is
// compiled with.
type goldenCase struct {
	dir, model string
	config     driver.Config
}

// goldenCases lists every golden: each bundled model with testConfig, and
// the variants.
func goldenCases(t *testing.T) []goldenCase {
	var out []goldenCase
	paths := map[string]string{}
	for _, f := range testModels(t) {
		name := emit.ModelName(f)
		paths[name] = f
		out = append(out, goldenCase{dir: name, model: f, config: testConfig(name)})
	}
	for _, v := range goldenVariants {
		path, ok := paths[v.model]
		require.True(t, ok, "golden variant %s: no model %s", v.name, v.model)
		cfg := testConfig(v.model)
		v.config(&cfg)
		out = append(out, goldenCase{dir: v.model + "+" + v.name, model: path, config: cfg})
	}
	return out
}

func TestGolden(t *testing.T) {
	update := os.Getenv("HELIAC_UPDATE") != ""
	dirs := map[string]bool{}
	for _, gc := range goldenCases(t) {
		dirs[gc.dir] = true
		t.Run(gc.dir, func(t *testing.T) {
			data, err := os.ReadFile(gc.model)
			require.NoError(t, err)
			out, err := driver.Compile(context.Background(), data, gc.config)
			require.NoError(t, err)
			files := map[string][]byte{"plan.json": out.PlanJSON}
			for _, cf := range out.CFiles {
				files[cf.Name] = cf.Data
			}
			dir := filepath.Join(goldenDir, gc.dir)
			if update {
				require.NoError(t, os.RemoveAll(dir))
				require.NoError(t, os.MkdirAll(dir, 0o755))
				for n, d := range files {
					require.NoError(t, os.WriteFile(filepath.Join(dir, n), d, 0o644))
				}
				return
			}
			entries, err := os.ReadDir(dir)
			require.NoError(t, err, "no golden files for %s; run make golden", gc.dir)
			assert.Len(t, entries, len(files), "golden files in %s", dir)
			for n, d := range files {
				want, err := os.ReadFile(filepath.Join(dir, n))
				if !assert.NoError(t, err, "run make golden") {
					continue
				}
				assert.Equal(t, string(want), string(d), "%s differs from its golden file; run make golden and review the diff", n)
			}
		})
	}
	// A golden directory whose model or variant is gone is stale.
	entries, err := os.ReadDir(goldenDir)
	if os.IsNotExist(err) {
		return
	}
	require.NoError(t, err)
	for _, e := range entries {
		if !dirs[e.Name()] {
			if update {
				require.NoError(t, os.RemoveAll(filepath.Join(goldenDir, e.Name())))
				continue
			}
			what := "its model is not in testdata/models"
			if strings.Contains(e.Name(), "+") {
				what = "it is no variant of goldenVariants"
			}
			t.Errorf("stale golden directory %s: %s", e.Name(), what)
		}
	}
}
