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

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/tflmarena"
)

// patchesShort are the models TestPatchesAutoTFLM runs with -short: small
// ones, one whose early layers --patches auto runs in stripes.
var patchesShort = []string{"tflite-micro/magic_wand.tflite", "tflite-micro/hello_world_int8.tflite"}

// TestPatchesAutoTFLM is --patches auto's proof on stock TFLM: for every
// corpus model TFLM runs, the model --patches auto --emit-tflite writes
// (stripes where they pay, heliac's plan as TFLM's offline plan) gives
// outputs byte-identical to the original model under TFLM's own planner,
// over several seeds and invocations, and TFLM's whole arena
// (arena_used_bytes: head and persistent tail) is no larger than the
// original's. The models striped are logged with their figures.
func TestPatchesAutoTFLM(t *testing.T) {
	skipUnderRace(t)
	tool := tflmrun.Require(t)
	dir := t.TempDir()
	var (
		mu   sync.Mutex
		rows []string
	)
	t.Run("models", func(t *testing.T) {
		for _, m := range tflmModels(t) {
			if testing.Short() && !slices.Contains(patchesShort, m.File) {
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
				for _, seed := range interopSeeds {
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
