package driver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/tflmarena"
)

// patchesShort are the models TestPatchesAutoTFLM runs with -short: small
// ones, one whose early layers --patches auto runs in stripes.
var patchesShort = []string{"tflite-micro/magic_wand.tflite", "tflite-micro/hello_world_int8.tflite"}

// patchesCI are the models make test runs TestPatchesAutoTFLM on besides
// patchesShort: those --patches auto stripes (docs/planning.md's table) and
// two it leaves as they are; HELIAC_FULL_SWEEP=1 runs every model.
var patchesCI = []string{"tflite-micro/mobilenet_v2_quantized_1x3x224x224.tflite", "coral/tf2_mobilenet_v2_1.0_224_ptq.tflite",
	"tflite-micro/custom_model_rf_keras.tflite", "tflite-micro/person_detect.tflite", "ambiq/cnn_s_quantized.tflite",
	"mlperf-tiny/vww_96_int8.tflite", "esphome-mww/vad_v2.tflite"}

// TestPatchesAutoTFLM is --patches auto's proof on stock TFLM: for every
// corpus model TFLM runs (make test: patchesShort and patchesCI), the model --patches auto --emit-tflite writes
// (stripes where they pay, heliac's plan as TFLM's offline plan) gives
// outputs byte-identical to the original model under TFLM's own planner,
// over several seeds and invocations, and TFLM's whole arena
// (arena_used_bytes: head and persistent tail) is no larger than the
// original's, nor than with heliac's plan of the model without stripes.
// The models striped are logged with their figures.
func TestPatchesAutoTFLM(t *testing.T) {
	skipUnderRace(t)
	tool := tflmrun.Require(t)
	dir := t.TempDir()
	var (
		mu   sync.Mutex
		rows []string
	)
	t.Run("models", func(t *testing.T) {
		full := os.Getenv(envFullSweep) != ""
		for _, m := range tflmModels(t) {
			if testing.Short() && !slices.Contains(patchesShort, m.File) {
				continue
			}
			if !full && !testing.Short() && !slices.Contains(patchesShort, m.File) && !slices.Contains(patchesCI, m.File) {
				continue
			}
			t.Run(m.File, func(t *testing.T) {
				t.Parallel()
				cfg := referenceConfig(t)
				cfg.Patches, cfg.TFLMTarget = driver.PatchesAuto, tflmarena.Host64.Name
				out, path := emitTFLite(t, m, dir, cfg)
				require.NotNil(t, out.Patches, "--patches auto says what it chose")
				require.NotNil(t, out.Original)
				var orig, mine *tflmrun.Result
				for _, seed := range sweepSeeds() {
					orig = m.run(t, tool, m.Path, seed, false)
					mine = m.run(t, tool, path, seed, false)
					if !outputsFromArena[m.File] {
						assert.Equal(t, orig.Outputs(), mine.Outputs(), "seed %d: outputs of the --patches auto model differ from the original's", seed)
					}
				}
				// TFLM's head is heliac's plan: no tensor the rewrite left
				// unused takes bytes of its own there.
				assert.Equal(t, out.TFLite.Offline.ArenaSize, mine.Int("planner_max_bytes"), "TFLM's head with the --patches auto model")
				used, own := mine.Int("arena_used_bytes"), orig.Int("arena_used_bytes")
				assert.LessOrEqual(t, used, own, "TFLM's whole arena with the --patches auto model")
				if p := out.Patches; len(p.Regions) > 0 {
					// No larger than heliac's plan of the model as given
					// either, as stock TFLM measures both.
					off := cfg
					off.Patches = driver.PatchesOff
					m2 := m
					m2.File = strings.TrimSuffix(m.File, ".tflite") + "_off.tflite"
					_, offPath := emitTFLite(t, m2, dir, off)
					asGiven := m.run(t, tool, offPath, interopSeeds[0], false)
					assert.LessOrEqual(t, used, asGiven.Int("arena_used_bytes"), "TFLM's whole arena with the stripes, against heliac's plan without them")
					assert.Equal(t, p.Regions, out.Model.Stripes)
					ks := make([]string, len(p.Regions))
					for i, r := range p.Regions {
						ks[i] = fmt.Sprint(r.K())
					}
					mu.Lock()
					rows = append(rows, fmt.Sprintf("  %-58s k %-6s +%5.2f%% MACs  arena_used_bytes %9d -> %9d (%.3f)", m.File,
						strings.Join(ks, ","), p.ExtraPercent(), own, used, float64(used)/float64(own)))
					mu.Unlock()
				} else {
					assert.Same(t, out.Original, out.Model, "no stripes: the model as given")
				}
			})
		}
	})
	sort.Strings(rows)
	t.Logf("--patches auto striped %d model(s):\n%s", len(rows), strings.Join(rows, "\n"))
}

// TestPatchesAutoChoice: on magic_wand and person_detect, --patches auto
// returns the rewritten model (its Stripes the regions the summary
// reports) beside the model as given (unchanged), within the cap, with a
// smaller arena than without stripes and the original model's sha256 in
// plan.json; the choice is deterministic (a second compile gives the same
// bytes); a cap no stripe fits leaves the model as given; and without
// --patches nothing changes.
func TestPatchesAutoChoice(t *testing.T) {
	skipUnderRace(t)
	for _, name := range []string{"tflite-micro/magic_wand.tflite", "tflite-micro/person_detect.tflite"} {
		t.Run(name, func(t *testing.T) {
			if testing.Short() && name != "tflite-micro/magic_wand.tflite" {
				t.Skip("-short: magic_wand only")
			}
			data, err := os.ReadFile(filepath.Join(corpus.Require(t), "corpus", name))
			require.NoError(t, err)
			cfg := referenceConfig(t)
			cfg.EmitTFLite = true
			off, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			assert.Nil(t, off.Patches)
			assert.Same(t, off.Original, off.Model)

			cfg.Patches = driver.PatchesAuto
			out, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			p := out.Patches
			require.NotNil(t, p)
			require.NotEmpty(t, p.Regions, "%s gains from stripes", name)
			assert.Equal(t, p.Regions, out.Model.Stripes)
			assert.Empty(t, out.Original.Stripes, "the model as given is not changed")
			assert.Equal(t, len(out.Model.Subgraphs[0].Ops)-len(out.Original.Subgraphs[0].Ops), p.ExtraOps)
			assert.LessOrEqual(t, float64(p.ExtraMACs), driver.DefaultPatchMACs*float64(p.ModelMACs))
			head, _ := out.Plan.ScratchTotals()
			offHead, _ := off.Plan.ScratchTotals()
			assert.Equal(t, head, p.HeadAfter)
			assert.Less(t, head, offHead)
			// The stripes pay for themselves: TFLM's whole arena is no larger
			// than without them.
			assert.LessOrEqual(t, out.TFLMArena.Emitted.Bytes, off.TFLMArena.Emitted.Bytes, "TFLM's whole arena")
			assert.Equal(t, off.TFLMArena.Original, out.TFLMArena.Original, "compared with TFLM's handling of the model as given")
			assert.Equal(t, off.Meta.ModelSHA256, out.Meta.ModelSHA256, "plan.json names the model as given")

			again, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			assert.Equal(t, out.PlanJSON, again.PlanJSON, "deterministic")
			assert.Equal(t, out.TFLite.Data, again.TFLite.Data, "deterministic")

			cfg.PatchMACs = 1e-9
			tight, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			require.NotNil(t, tight.Patches)
			if len(tight.Patches.Regions) == 0 {
				assert.Same(t, tight.Original, tight.Model)
				assert.Equal(t, off.PlanJSON, tight.PlanJSON, "no stripes: the plan without --patches")
			} else {
				assert.LessOrEqual(t, float64(tight.Patches.ExtraMACs), 1e-9*float64(tight.Patches.ModelMACs))
			}
		})
	}
}

// TestPatchesAutoJudgedOnWholeArena: --patches auto keeps a rewrite only
// where TFLM's whole tensor_arena is known and no larger. magic_wand,
// which it stripes (TestPatchesAutoChoice), with a RANK operator added
// after its output (an operator TFLM does not register: heliac has no data
// on what it adds to TFLM's persistent tail) is kept as given, and the
// summary says why; the plain model's stripes leave the whole arena no
// larger on both targets, and the summary leads with it.
func TestPatchesAutoJudgedOnWholeArena(t *testing.T) {
	skipUnderRace(t)
	data, err := os.ReadFile(filepath.Join(corpus.Require(t), "corpus", "tflite-micro/magic_wand.tflite"))
	require.NoError(t, err)
	m, err := tflite.Load(data)
	require.NoError(t, err)
	sg := &m.Subgraphs[0]
	rank := graph.TensorID(len(sg.Tensors))
	sg.Tensors = append(sg.Tensors, graph.Tensor{Name: "rank", Type: graph.Int32, Shape: []int32{}})
	sg.Ops = append(sg.Ops, graph.Op{Code: 110, CodeName: "RANK", Version: 1, Inputs: []graph.TensorID{sg.Outputs[0]}, Outputs: []graph.TensorID{rank}})
	sg.Outputs = append(sg.Outputs, rank)
	unknown, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)

	for _, tc := range []struct {
		name   string
		data   []byte
		target string
	}{
		{"magic_wand", data, ""},
		{"magic_wand host64", data, tflmarena.Host64.Name},
		{"magic_wand with RANK", unknown, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := referenceConfig(t)
			cfg.EmitTFLite, cfg.TFLMTarget = true, tc.target
			off, err := driver.Compile(context.Background(), tc.data, cfg)
			require.NoError(t, err)
			cfg.Patches, cfg.Report = driver.PatchesAuto, true
			out, err := driver.Compile(context.Background(), tc.data, cfg)
			require.NoError(t, err)
			p := out.Patches
			require.NotNil(t, p)
			if strings.Contains(tc.name, "RANK") {
				require.Nil(t, off.TFLMArena, "no figure with an operator TFLM does not register")
				assert.Empty(t, p.Regions, "kept as given")
				assert.Same(t, out.Original, out.Model)
				assert.Equal(t, off.PlanJSON, out.PlanJSON)
				assert.Contains(t, p.Text(), "TFLM's whole arena cannot be sized")
				assert.Contains(t, p.Text(), "RANK")
				assert.Contains(t, string(out.Report), "no stripes: TFLM&#39;s whole arena cannot be sized")
				return
			}
			require.NotEmpty(t, p.Regions, "magic_wand gains from stripes")
			require.NotNil(t, off.TFLMArena)
			assert.LessOrEqual(t, out.TFLMArena.Emitted.Bytes, off.TFLMArena.Emitted.Bytes, "TFLM's whole arena")
			assert.Equal(t, off.TFLMArena.Emitted.Bytes, p.ArenaBefore)
			assert.True(t, strings.HasPrefix(strings.Split(p.Text(), "\n")[1], "  TFLM's whole tensor_arena "), "the summary leads with the whole arena: %s", p.Text())
			assert.Contains(t, string(out.Report), "<p class=\"patches\">--patches auto: TFLM&#39;s whole tensor_arena ", "the report leads with the whole arena")
		})
	}
}

// TestPatchesAutoFitsFirst: person_detect's scratch (55296 B by default)
// does not fit a bank of 34000 B. Without --patches the error says that
// --patches auto makes it fit; with it, the rewrite fits and the summary
// says why it was striped; a bank too small even for the stripes fails
// with a *driver.FitError that says how much they need.
func TestPatchesAutoFitsFirst(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("plans person_detect's stripes three times; skipped with -short")
	}
	data, err := os.ReadFile(filepath.Join(corpus.Require(t), "corpus", "tflite-micro/person_detect.tflite"))
	require.NoError(t, err)
	platform := func(sram int64) *plan.Platform {
		return &plan.Platform{Name: "small", Banks: []plan.Bank{{Name: "SRAM", Capacity: sram, Writable: true}, {Name: "FLASH", Order: 1}}}
	}
	for _, tc := range []struct {
		name    string
		sram    int64
		patches string
		hint    string // the FitError's hint; "" when it compiles
	}{
		{"suggests", 34000, driver.PatchesOff, "it fits with --patches auto: 1 region(s) run stripe by stripe"},
		{"fits", 34000, driver.PatchesAuto, ""},
		{"too small", 20000, driver.PatchesAuto, "even run stripe by stripe by --patches auto"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := heliac.Options{Version: "test"}.Config() // the CLI's defaults
			require.NoError(t, err)
			cfg.Plan.Platform, cfg.Patches = platform(tc.sram), tc.patches
			out, err := driver.Compile(context.Background(), data, cfg)
			if tc.hint != "" {
				var fe *driver.FitError
				require.ErrorAs(t, err, &fe)
				var ce *plan.CapacityError
				require.ErrorAs(t, err, &ce, "still a capacity error")
				assert.Equal(t, "SRAM", ce.Bank)
				assert.Contains(t, fe.Hint, tc.hint)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, out.Patches)
			require.NotEmpty(t, out.Patches.Regions)
			assert.Contains(t, out.Patches.Text(), "the model as given does not fit: its scratch needs 55296 B in bank \"SRAM\", which has 34000")
			size, _ := out.Plan.ScratchTotals()
			assert.LessOrEqual(t, size, int64(34000))
			assert.Equal(t, size, out.Patches.HeadAfter)
		})
	}
}
