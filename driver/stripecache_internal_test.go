package driver

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/stripe"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

// TestStripeRebuildMatchesApplyCached is TestStripeRebuildMatchesApply
// with halos cached: on three models, for every candidate region of more
// than one operator (the first 40 of a model), in 2 stripes and in as
// many as the output's rows allow (at most 10), the verifier's rebuild is
// exactly what stripe.Apply writes; and where Apply refuses the region
// (a stripe that would compute no new row, ...), the verifier refuses the
// record too, before it counts MACs.
func TestStripeRebuildMatchesApplyCached(t *testing.T) {
	rebuildMatchesApplyCached(t, []string{"tflite-micro/person_detect.tflite", "ambiq/cnn_s_quantized.tflite", "tflite-micro/magic_wand.tflite"})
}

// TestStripeRebuildMatchesApplyCachedCorpus is
// TestStripeRebuildMatchesApplyCached over every corpus model: a sweep.
func TestStripeRebuildMatchesApplyCachedCorpus(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("-short: TestStripeRebuildMatchesApplyCached's three models")
	}
	rebuildMatchesApplyCached(t, corpusFiles(t))
}

func rebuildMatchesApplyCached(t *testing.T, files []string) {
	base := stripeCorpusModel(t, "tflite-micro/person_detect.tflite", 2)
	built, refused := 0, 0
	eachCorpusCandidate(t, files, func(file string, orig *graph.Model, c graph.StripeRegion) {
		if len(c.Ops) < 2 {
			return // one operator: no tensor to cache
		}
		h := orig.Tensor(c.Subgraph, c.Output).Shape[1]
		for _, k := range []int{2, min(10, int(h))} {
			r := c
			if r.Rows = stripe.EvenRows(h, k); r.Rows == nil {
				continue
			}
			r.Halo = graph.HaloCache
			if m := rebuildOrRefuse(t, orig, base.js, file, r); m != nil {
				built++
				require.True(t, m.Stripes[0].Cached())
			} else {
				refused++
			}
		}
	})
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
			tfl, err := withOfflinePlan(data, c.m, c.p, nil)
			require.NoError(t, err)
			emitted, err := tflite.Load(tfl.Data)
			require.NoError(t, err)
			assert.Empty(t, verify.RewriteFile(c.orig, emitted, c.js))
		})
	}
}

// rebuildOrRefuse applies region r to orig and checks that the verifier's
// rebuild from the record (in plan.json js) is exactly stripe.Apply's
// rewrite, which it returns; where Apply refuses the region, the verifier
// must refuse the record too, before it counts MACs (nil).
func rebuildOrRefuse(t *testing.T, orig *graph.Model, js []byte, file string, r graph.StripeRegion) *graph.Model {
	t.Helper()
	what := fmt.Sprintf("%s: %d -> %d, %s k %d", file, r.Input, r.Output, r.HaloKind(), r.K())
	m, err := stripe.Apply(orig, []graph.StripeRegion{r})
	if err != nil {
		v := verify.Rewrite(orig, orig, stripesJSON(t, js, &graph.Model{Stripes: []graph.StripeRegion{r}}))
		if assert.NotEmpty(t, v, "%s: Apply refuses (%v), the verifier builds it", what, err) {
			assert.Equal(t, verify.BadStripes, v[0].Kind)
			assert.NotContains(t, v[0].Msg, "extra_macs", "%s: Apply refuses (%v)", what, err)
		}
		return nil
	}
	assert.Empty(t, verify.Rewrite(orig, m, stripesJSON(t, js, m)), what)
	return m
}
