package liveness_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/stripe"
	"github.com/heliac/heliac/tflite"
)

// blockPeak is the most scratch bytes live at one step with each alias
// group counted as its whole extent over its whole lifetime: the lower
// bound of a rectangle allocator.
func blockPeak(lt *liveness.Lifetimes) int64 {
	live := make([]int64, lt.Schedule.Steps+1)
	for _, tn := range lt.Tensors {
		if tn.Class != liveness.Scratch || tn.AliasOf != nil || tn.Group.First < 0 {
			continue
		}
		for s := tn.Group.First; s <= tn.Group.Last; s++ {
			live[s] += tn.Extent.Size()
		}
	}
	var peak int64
	for _, v := range live {
		peak = max(peak, v)
	}
	return peak
}

// TestBlockCostStripes: on tf2_mobilenet_v2 run stripe by stripe (its
// first 13 operators, 7 stripes), in-place writes chosen by the cost of
// groups as blocks leave a rectangle allocator a lower bound well below
// what the default choice leaves it (a stripe's output, live until the
// concatenation, joined to its chain keeps the chain's extent), and
// every write made is still one a contract allows.
func TestBlockCostStripes(t *testing.T) {
	dir := corpus.Require(t)
	data, err := os.ReadFile(filepath.Join(dir, "corpus", "coral", "tf2_mobilenet_v2_1.0_224_ptq.tflite"))
	require.NoError(t, err)
	m, err := tflite.Load(data)
	require.NoError(t, err)
	r := graph.StripeRegion{Input: 109, Output: 122, Rows: stripe.EvenRows(28, 7)}
	for i := 1; i <= 13; i++ {
		r.Ops = append(r.Ops, i)
	}
	rm, err := stripe.Apply(m, []graph.StripeRegion{r})
	require.NoError(t, err)
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	hull, err := liveness.Analyze(rm, liveness.Options{Kernels: lib})
	require.NoError(t, err)
	block, err := liveness.Analyze(rm, liveness.Options{Kernels: lib, BlockCost: true})
	require.NoError(t, err)
	hp, bp := blockPeak(hull), blockPeak(block)
	t.Logf("block peak: default %d, BlockCost %d", hp, bp)
	assert.Less(t, bp*10, hp*9, "BlockCost saves a rectangle allocator at least 10%%")
	var writes int
	for _, tn := range block.Tensors {
		if tn.InPlace != nil {
			writes++
		}
	}
	assert.Positive(t, writes, "BlockCost still writes in place")
}
