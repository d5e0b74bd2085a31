package driver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/stripe"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

// requireCachedApply skips a test until stripe.Apply builds cached halos:
// on some candidate region of person_detect in 2 stripes, its rewrite
// with Halo cache must differ from the one with recompute (an Apply that
// does not know cached halos builds recompute for both, or refuses).
func requireCachedApply(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpus.Require(t), "corpus", "tflite-micro/person_detect.tflite"))
	require.NoError(t, err)
	orig, err := tflite.Load(data)
	require.NoError(t, err)
	for _, c := range stripe.Candidates(orig) {
		if len(c.Ops) < 2 {
			continue
		}
		c.Rows = stripe.EvenRows(orig.Tensor(c.Subgraph, c.Output).Shape[1], 2)
		re, err := stripe.Apply(orig, []graph.StripeRegion{c})
		if err != nil {
			continue
		}
		c.Halo = graph.HaloCache
		ca, err := stripe.Apply(orig, []graph.StripeRegion{c})
		if err == nil && (len(ca.Subgraphs[0].Ops) != len(re.Subgraphs[0].Ops) || len(ca.Subgraphs[0].Tensors) != len(re.Subgraphs[0].Tensors)) {
			return
		}
	}
	t.Skip("stripe.Apply does not build cached halos yet: its rewrites with Halo cache are the recompute ones")
}

// TestStripeRebuildMatchesApplyCached is TestStripeRebuildMatchesApply
// with halos cached: on three models, for every candidate region of more
// than one operator (the first 40 of a model), in 2 stripes and in as
// many as the output's rows allow (at most 10), the verifier's rebuild is
// exactly what stripe.Apply writes; and where Apply refuses the region
// (a stripe that would compute no new row, ...), the verifier refuses the
// record too, before it counts MACs.
func TestStripeRebuildMatchesApplyCached(t *testing.T) {
	requireCachedApply(t)
	rebuildMatchesApplyCached(t, []string{"tflite-micro/person_detect.tflite", "ambiq/cnn_s_quantized.tflite", "tflite-micro/magic_wand.tflite"})
}

// TestStripeRebuildMatchesApplyCachedCorpus is
// TestStripeRebuildMatchesApplyCached over every corpus model: a sweep.
func TestStripeRebuildMatchesApplyCachedCorpus(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("-short: TestStripeRebuildMatchesApplyCached's three models")
	}
	requireCachedApply(t)
	var files []string
	for _, e := range corpus.Manifest(t) {
		files = append(files, e.File)
	}
	rebuildMatchesApplyCached(t, files)
}

func rebuildMatchesApplyCached(t *testing.T, files []string) {
	base := stripeCorpusModel(t, "tflite-micro/person_detect.tflite", 2)
	dir := corpus.Require(t)
	built, refused := 0, 0
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(dir, "corpus", file))
		require.NoError(t, err)
		orig, err := tflite.Load(data)
		if err != nil {
			continue // models the loader refuses have their own tests
		}
		cands := stripe.Candidates(orig)
		if len(cands) > 40 {
			cands = cands[:40]
		}
		for _, c := range cands {
			if len(c.Ops) < 2 {
				continue // one operator: no tensor to cache
			}
			h := orig.Tensor(c.Subgraph, c.Output).Shape[1]
			for _, k := range []int{2, min(10, int(h))} {
				r := c
				if r.Rows = stripe.EvenRows(h, k); r.Rows == nil {
					continue
				}
				r.Halo = graph.HaloCache
				m, err := stripe.Apply(orig, []graph.StripeRegion{r})
				if err != nil {
					// The verifier must refuse the same record, whatever
					// MACs it gives.
					refused++
					js := stripesJSON(t, base.js, &graph.Model{Stripes: []graph.StripeRegion{r}})
					v := verify.Rewrite(orig, orig, js)
					if assert.NotEmpty(t, v, "%s: %d -> %d, k %d: Apply refuses (%v), the verifier builds it", file, r.Input, r.Output, k, err) {
						assert.Equal(t, verify.BadStripes, v[0].Kind)
						assert.NotContains(t, v[0].Msg, "extra_macs", "%s: %d -> %d, k %d: Apply refuses (%v)", file, r.Input, r.Output, k, err)
					}
					continue
				}
				built++
				require.True(t, m.Stripes[0].Cached())
				js := stripesJSON(t, base.js, m)
				assert.Empty(t, verify.Rewrite(orig, m, js), "%s: %d -> %d, k %d", file, r.Input, r.Output, k)
			}
		}
	}
	t.Logf("%d rewrites with cached halos rebuilt, %d refused by both", built, refused)
	assert.NotZero(t, built)
}

// TestStripeCachedRewriteVerified: a rewrite with cached halos, planned
// as a compile plans it, verifies: the plan and C module against the
// original and the record (the cached operators' tensors in the plan),
// the rewrite against the verifier's rebuild, and the .tflite
// --emit-tflite writes (operators in the schedule's order, unused
// intermediates of height 0) against it too.
func TestStripeCachedRewriteVerified(t *testing.T) {
	requireCachedApply(t)
	for _, tt := range []struct {
		file string
		k    int
	}{{"tflite-micro/person_detect.tflite", 4}, {"ambiq/cnn_s_quantized.tflite", 3}} {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			c := stripeCorpusModelHalo(t, tt.file, tt.k, graph.HaloCache)
			require.True(t, c.m.Stripes[0].Cached())
			assert.Empty(t, verifyOutput(c.orig, c.m, c.js, cModule(c.files)))
			assert.Empty(t, verify.Rewrite(c.orig, c.m, c.js))
			data, err := tflite.Encode(c.m, tflite.EncodeOptions{})
			require.NoError(t, err)
			tfl, err := withOfflinePlan(data, c.m, c.p)
			require.NoError(t, err)
			emitted, err := tflite.Load(tfl.Data)
			require.NoError(t, err)
			assert.Empty(t, verify.RewriteFile(c.orig, emitted, c.js))
		})
	}
}
