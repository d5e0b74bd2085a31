package driver

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/stripe"
)

// TestStripeRebuildMatchesApplyGroups is TestStripeRebuildMatchesApply
// and TestStripeRebuildMatchesApplyCached with more than 10 stripes,
// joined in groups: on three models, for every candidate region (the
// first 40 of a model) whose output has at least k rows, in k = 12 and
// 16 stripes (two groups), halos recomputed and cached, the verifier's
// rebuild is exactly what stripe.Apply writes; where Apply refuses the
// region, the verifier refuses the record too, before it counts MACs.
func TestStripeRebuildMatchesApplyGroups(t *testing.T) {
	rebuildMatchesApplyGroups(t, []string{"tflite-micro/person_detect.tflite", "ambiq/cnn_s_quantized.tflite", "tflite-micro/magic_wand.tflite"})
}

// TestStripeRebuildMatchesApplyGroupsCorpus is
// TestStripeRebuildMatchesApplyGroups over every corpus model: a sweep.
func TestStripeRebuildMatchesApplyGroupsCorpus(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("-short: TestStripeRebuildMatchesApplyGroups's three models")
	}
	rebuildMatchesApplyGroups(t, corpusFiles(t))
}

func rebuildMatchesApplyGroups(t *testing.T, files []string) {
	base := stripeCorpusModel(t, "tflite-micro/person_detect.tflite", 2)
	built := map[graph.Halo]int{}
	refused := 0
	eachCorpusCandidate(t, files, func(file string, orig *graph.Model, c graph.StripeRegion) {
		h := orig.Tensor(c.Subgraph, c.Output).Shape[1]
		for _, halo := range []graph.Halo{graph.HaloRecompute, graph.HaloCache} {
			for _, k := range []int{12, 16} {
				r := c
				if r.Rows = stripe.EvenRows(h, k); r.Rows == nil {
					continue
				}
				r.Halo = halo
				m := rebuildOrRefuse(t, orig, base.js, file, r)
				if m == nil {
					refused++
					continue
				}
				built[halo]++
				groups := 0
				for _, tt := range m.Subgraphs[r.Subgraph].Tensors {
					if tt.Name == orig.Tensor(r.Subgraph, r.Output).Name+"/group1" {
						groups++
					}
				}
				assert.Equal(t, 1, groups, "%s: %d -> %d, %s k %d: two groups", file, r.Input, r.Output, halo, k)
			}
		}
	})
	t.Logf("rewrites of 12 and 16 stripes rebuilt: %d recomputing, %d caching; %d refused by both", built[graph.HaloRecompute],
		built[graph.HaloCache], refused)
	assert.NotZero(t, built[graph.HaloRecompute])
	assert.NotZero(t, built[graph.HaloCache])
}
