package driver

import (
	"testing"

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

// TestPatchesObjective: a rewrite is better for a smaller head, whatever
// its whole arena; of equal heads, for the smaller whole arena; the
// rewrite of the smallest whole arena breaks ties by the head.
func TestPatchesObjective(t *testing.T) {
	small := &candidate{head: 100, score: 900}
	large := &candidate{head: 200, score: 500}
	assert.True(t, better(small, large), "the smaller head, though its whole arena is larger")
	assert.False(t, better(large, small))
	tie := &candidate{head: 100, score: 800}
	assert.True(t, better(tie, small), "same head: the smaller whole arena")
	assert.False(t, better(small, small), "not better than itself")

	assert.Nil(t, smallestArena(nil))
	same := &candidate{head: 150, score: 500}
	assert.Same(t, large, smallestArena([]*candidate{small, large, tie}))
	assert.Same(t, same, smallestArena([]*candidate{large, same}), "same whole arena: the smaller head")
}
