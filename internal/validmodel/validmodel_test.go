package validmodel_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/internal/validmodel"
	"github.com/heliac/heliac/tflite"
)

// TestDeterministic: a seed gives one model, byte for byte, and loads.
func TestDeterministic(t *testing.T) {
	for seed := int64(1); seed <= 50; seed++ {
		a, fa := validmodel.Generate(seed)
		b, fb := validmodel.Generate(seed)
		da, err := tflite.Encode(a, tflite.EncodeOptions{})
		require.NoError(t, err, "seed %d", seed)
		db, err := tflite.Encode(b, tflite.EncodeOptions{})
		require.NoError(t, err)
		assert.Equal(t, da, db, "seed %d", seed)
		assert.Equal(t, fa, fb)
		_, err = tflite.Load(da)
		require.NoError(t, err, "seed %d", seed)
	}
}

// TestTFLMRunsGeneratedModels: stock TFLM allocates and invokes every
// generated model, and computes the same thing whatever the arena held
// before (no operator reads bytes nothing wrote); a model it rejects is a
// generator bug.
func TestTFLMRunsGeneratedModels(t *testing.T) {
	tool := tflmrun.Require(t)
	n := 200
	if testing.Short() {
		n = 20
	}
	if s := os.Getenv("HELIAC_VALID_MODELS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	dir := t.TempDir()
	var total validmodel.Features
	for seed := int64(1); seed <= int64(n); seed++ {
		m, f := validmodel.Generate(seed)
		total.Add(f)
		data, err := tflite.Encode(m, tflite.EncodeOptions{})
		require.NoError(t, err, "seed %d", seed)
		path := filepath.Join(dir, strconv.FormatInt(seed, 10)+".tflite")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		var digests []string
		for _, fill := range []int{1, 2} {
			res, err := tflmrun.Run(context.Background(), tool, path,
				tflmrun.Options{Seed: 1, FillSeed: fill, Invokes: 3, ArenaBytes: 4 << 20, Trace: true, Timeout: 20 * time.Second})
			if !assert.NoError(t, err, "seed %d", seed) || !assert.True(t, res.OK(), "seed %d: TFLM rejects the generated model: %s", seed, res.Error()) {
				break
			}
			digests = append(digests, res.Values["trace_digest"])
		}
		if len(digests) == 2 {
			assert.Equal(t, digests[0], digests[1], "seed %d: the trace depends on the arena's fill: an operator reads bytes nothing wrote", seed)
		}
	}
	t.Logf("%d models: %+v", n, total)
}

// TestHandlesAsLoaded: the features the differential test counts on are in
// the file TFLM reads, not only in the generator's intent: read back, some
// VAR_HANDLEs name a container and others of the same shared name name
// none.
func TestHandlesAsLoaded(t *testing.T) {
	withContainer, mixed := 0, 0
	for seed := int64(1); seed <= 100; seed++ {
		m, _ := validmodel.Generate(seed)
		data, err := tflite.Encode(m, tflite.EncodeOptions{})
		require.NoError(t, err, "seed %d", seed)
		loaded, err := tflite.Load(data)
		require.NoError(t, err, "seed %d", seed)
		with, without := map[string]bool{}, map[string]bool{}
		for _, sg := range loaded.Subgraphs {
			for _, op := range sg.Ops {
				if r := op.Resource; r != nil {
					if r.HasContainer {
						with[r.SharedName] = true
						withContainer++
					} else {
						without[r.SharedName] = true
					}
				}
			}
		}
		for name := range without {
			if with[name] {
				mixed++
			}
		}
	}
	assert.Positive(t, withContainer, "no VAR_HANDLE names a container once written")
	assert.Positive(t, mixed, "no shared name is reached by handles with and without a container")
}
