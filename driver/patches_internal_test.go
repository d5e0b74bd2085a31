package driver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/stripe"
	"github.com/heliac/heliac/tflite"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParsePatchMACs: --patch-macs takes a percentage or a fraction of the
// model's MACs, and nothing outside 0..100 %.
func TestParsePatchMACs(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
	}{{"10%", 0.10}, {"2.5%", 0.025}, {" 25 % ", 0.25}, {"0.1", 0.1}, {"1", 1}, {"0", 0}, {"100%", 1}} {
		got, err := ParsePatchMACs(tt.in)
		require.NoError(t, err, tt.in)
		assert.InDelta(t, tt.want, got, 1e-12, tt.in)
	}
	for _, in := range []string{"", "ten", "10%%", "-1%", "150%", "1.5", "NaN"} {
		_, err := ParsePatchMACs(in)
		assert.Error(t, err, in)
	}
}

// TestPatchesObjective: a rewrite is better for a smaller cost, its head
// plus its whole arena; of equal costs, for the smaller head. A head 100
// B smaller is worth a whole arena up to 100 B larger (its tail up to 200
// B larger: the head is in the whole arena too); the rewrite of the smallest whole arena breaks ties by
// the head.
func TestPatchesObjective(t *testing.T) {
	for _, tt := range []struct {
		name string
		a, b candidate
		want bool
	}{
		{"smaller head, whole arena larger by less", candidate{head: 100, score: 900}, candidate{head: 200, score: 850}, true},
		{"smaller head, whole arena larger by more", candidate{head: 100, score: 900}, candidate{head: 200, score: 750}, false},
		{"same cost: the smaller head", candidate{head: 100, score: 900}, candidate{head: 200, score: 800}, true},
		{"same cost, larger head", candidate{head: 200, score: 800}, candidate{head: 100, score: 900}, false},
		{"same head: the smaller whole arena", candidate{head: 100, score: 800}, candidate{head: 100, score: 900}, true},
		{"not better than itself", candidate{head: 100, score: 900}, candidate{head: 100, score: 900}, false},
		// mobilenet_v2_quantized, cortex-m: 28 cached stripes against 14.
		{"MobileNetV2: 14 stripes over 28", candidate{head: 403600, score: 709968}, candidate{head: 345648, score: 810176}, true},
	} {
		a, b := tt.a, tt.b
		assert.Equal(t, tt.want, better(&a, &b), tt.name)
	}

	assert.Nil(t, smallestArena(nil))
	small := &candidate{head: 100, score: 900}
	large := &candidate{head: 200, score: 500}
	tie := &candidate{head: 100, score: 800}
	same := &candidate{head: 150, score: 500}
	assert.Same(t, large, smallestArena([]*candidate{small, large, tie}))
	assert.Same(t, same, smallestArena([]*candidate{large, same}), "same whole arena: the smaller head")
}

// TestEstimate: the cheap estimate of a rewrite's peak on magic_wand's
// DEPTHWISE_CONV_2D (4x3, SAME, stride 1: TFLM pads 1 row above, 2 below)
// and 3x3 VALID MAX_POOL_2D, from tensor 1 (128x3x1 FLOAT32, 12 B a row,
// 1536 B) through tensor 4 (128x3x8, 96 B a row) to tensor 14 (42x1x8,
// 32 B a row, 1344 B), in two stripes of 21 rows: worked out by hand,
// stripe 0 reads rows 0-65 of the input (65 x 12 B) into rows 0-63 of
// tensor 4 (63 x 96 B), stripe 1 rows 62-128 (66 x 12 B) into rows
// 63-126: the largest working set is 792 + 6048 B, on top of 1536 + 1344
// B whole. The pools' windows do not overlap, so cached halos hold no
// cache: the same estimate. A MAC budget below the recomputed stripes'
// extra MACs refuses recomputed halos only.
func TestEstimate(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(corpus.Require(t), "corpus", "tflite-micro", "magic_wand.tflite"))
	require.NoError(t, err)
	m, err := tflite.Load(data)
	require.NoError(t, err)
	r := graph.StripeRegion{Subgraph: 0, Input: 1, Output: 14, Ops: []int{0, 1}, Rows: stripe.EvenRows(42, 2)}
	const want = 1536 + 1344 + 792 + 6048
	for _, halo := range halos {
		r.Halo = halo
		got, measured, ok := estimate(m, r, 0)
		require.True(t, ok, halo)
		assert.EqualValues(t, want, got, halo)
		assert.Equal(t, halo, measured.Halo)
	}
	r.Halo = graph.HaloRecompute
	_, _, ok := estimate(m, r, -1<<40)
	assert.False(t, ok, "recomputed halos over the MAC budget")
	r.Halo = graph.HaloCache
	_, _, ok = estimate(m, r, -1<<40)
	assert.True(t, ok, "cached halos compute nothing twice: no budget applies")
	r.Rows = [][2]int32{{0, 42}}
	_, _, ok = estimate(m, r, 0)
	assert.False(t, ok, "one stripe is not a region")
}
