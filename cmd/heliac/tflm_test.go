package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/randmodel"
	"github.com/heliac/heliac/tflite"
)

// jsonOf runs heliac with --json and decodes what it prints.
func jsonOf(t *testing.T, args ...string) jsonSummary {
	t.Helper()
	code, stdout, stderr := runHeliac(append(args, "--json")...)
	require.Equal(t, 0, code, stderr)
	var s jsonSummary
	require.NoError(t, json.Unmarshal([]byte(stdout), &s))
	return s
}

// TestSummaryTFLMHeads: the summary and --json give TFLM's own head beside
// heliac's and the difference; on a model where heliac's own placement
// needs more (rigid in-place shapes), TFLM's is kept and both say so.
func TestSummaryTFLMHeads(t *testing.T) {
	dir := t.TempDir()
	s := jsonOf(t, helloWorld, "-o", filepath.Join(dir, "a"))
	require.NotNil(t, s.TFLM)
	assert.Equal(t, "heliac", s.TFLM.Kept)
	assert.Equal(t, s.Arenas[len(s.Arenas)-1].Size, s.TFLM.Head)
	assert.Equal(t, s.TFLM.Head-s.TFLM.OwnHead, s.TFLM.Difference)

	data, err := tflite.Encode(randmodel.Generate(100, randmodel.Config{Subgraphs: 1, Ops: 200, MaxElements: 256}), tflite.EncodeOptions{})
	require.NoError(t, err)
	model := filepath.Join(dir, "rigid.tflite")
	require.NoError(t, os.WriteFile(model, data, 0o644))
	// TFLM's own planner, by the CLI's flags.
	own := jsonOf(t, model, "-o", filepath.Join(dir, "tflm"), "--planner", "tflm", "--schedule", "model", "--no-alias", "--no-in-place")
	var want int64
	for _, a := range own.Arenas {
		if a.Role == "scratch" {
			want = a.Size
		}
	}
	s = jsonOf(t, model, "-o", filepath.Join(dir, "b"), "--emit-tflite")
	require.NotNil(t, s.TFLM)
	members := []jsonTFLMMember{{"tflm-reference", want, want}, {"cmsis-nn (portable)", want, want}, {"cmsis-nn (dsp)", want, want},
		{"cmsis-nn (mve)", want, want}}
	assert.Equal(t, jsonTFLM{OwnHead: want, Head: want, Kept: "tflm", Discarded: s.TFLM.Discarded, Members: members}, *s.TFLM,
		"the random model's operators ask for no scratch: every kernel build's heads are TFLM's")
	assert.Greater(t, s.TFLM.Discarded, want)
	require.NotNil(t, s.TFLite)
	assert.Equal(t, want, s.TFLite.ArenaSize)

	code, stdout, stderr := runHeliac(model, "-o", filepath.Join(dir, "c"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "  arena head: TFLM's own planner ")
	assert.Contains(t, stdout, "  kept TFLM's own placement (its greedy planner, the model's order, no in-place writes): heliac's own placement needed ")
}

// TestSummaryKeepsTFLMForTheArena: on esphome-mww/vad_v2 with
// --tflm-target host64 heliac's own placement has the smaller head but
// needs a larger tensor_arena than the original (driver's
// TestNeverALargerTFLMArena); --json says TFLM's placement was kept and
// what heliac's would have needed, and the emitted model's arena is no
// larger than the original's.
func TestSummaryKeepsTFLMForTheArena(t *testing.T) {
	model := filepath.Join(corpus.Require(t), "corpus", "esphome-mww", "vad_v2.tflite")
	s := jsonOf(t, model, "-o", t.TempDir(), "--emit-tflite", "--tflm-target", "host64")
	require.NotNil(t, s.TFLM)
	require.NotNil(t, s.TFLite)
	assert.Equal(t, "tflm", s.TFLM.Kept)
	assert.Less(t, s.TFLM.Discarded, s.TFLM.Head)
	assert.Greater(t, s.TFLM.DiscardedTFLMArenaBytes, s.TFLite.TFLMOwnArenaBytes)
	assert.LessOrEqual(t, s.TFLite.TFLMArenaBytes, s.TFLite.TFLMOwnArenaBytes)
}
