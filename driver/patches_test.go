package driver_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
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
				cfg := defaultConfig(t)
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
