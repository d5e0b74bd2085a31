package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/internal/corpus"
)

// TestSummaryPatches: with --patches auto on magic_wand (its first
// convolutions run stripe by stripe) the summary and --json say which
// region, k and rows, the extra operators and MACs within the cap, and
// the arenas before and after; without the flag nothing is said.
func TestSummaryPatches(t *testing.T) {
	model := filepath.Join(corpus.Require(t), "corpus", "tflite-micro", "magic_wand.tflite")
	s := jsonOf(t, model, "-o", t.TempDir(), "--emit-tflite", "--patches", "auto", "--patch-macs", "10%")
	require.NotNil(t, s.Patches)
	p := s.Patches
	require.NotEmpty(t, p.Regions)
	for _, r := range p.Regions {
		assert.Len(t, r.Rows, r.K)
		assert.GreaterOrEqual(t, r.K, 2)
		assert.LessOrEqual(t, r.K, 10)
		assert.NotEmpty(t, r.Operators)
	}
	assert.Greater(t, p.ExtraOperators, 0)
	assert.LessOrEqual(t, p.ExtraMACsPercent, 10.0)
	assert.InDelta(t, 10.0, p.CapPercent, 1e-9)
	assert.Less(t, p.HeadAfter, p.HeadBefore)
	assert.Less(t, p.TFLMArenaAfter, p.TFLMArenaBefore)
	require.NotNil(t, s.TFLite)
	assert.Equal(t, p.TFLMArenaAfter, s.TFLite.TFLMArenaBytes, "the emitted model's arena is the one after")

	code, stdout, stderr := runHeliac(model, "-o", t.TempDir(), "--patches", "auto")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "  --patches auto: 1 region(s) run stripe by stripe: ")
	assert.Contains(t, stdout, "MACs (")

	off := jsonOf(t, model, "-o", t.TempDir())
	assert.Nil(t, off.Patches)
}
