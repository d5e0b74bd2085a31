package liveness_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/tflite"
)

// tflmBuffer is one kind=tensor row of bench/tflm-buffers/<model>.csv.
type tflmBuffer struct {
	ref         graph.TensorRef
	first, last int
	size        int64
}

func readTFLMBuffers(t *testing.T, path string) []tflmBuffer {
	rows, err := corpus.ReadCSV(path)
	require.NoError(t, err)
	var out []tflmBuffer
	for _, r := range rows {
		if r["kind"] != "tensor" {
			continue
		}
		n := func(k string) int {
			v, err := strconv.Atoi(r[k])
			require.NoError(t, err, k)
			return v
		}
		out = append(out, tflmBuffer{
			ref:   graph.TensorRef{Subgraph: graph.SubgraphIndex(n("subgraph")), Tensor: graph.TensorID(n("tensor"))},
			first: n("first_op"), last: n("last_op"), size: int64(n("size_bytes")),
		})
	}
	return out
}

func align16(n int64) int64 { return (n + 15) &^ 15 }

// TestMatchesTFLM checks heliac's scratch tensors, sizes and lifetimes
// against the buffers TFLM hands its planner. TFLM's allocation scopes are
// heliac's steps one for one (see the package doc); TFLM gives tensors of a
// subgraph no operator calls the scope -1, so those are compared by set and
// size only.
func TestMatchesTFLM(t *testing.T) {
	dir := corpus.Require(t)
	for _, e := range corpus.Manifest(t) {
		name := strings.NewReplacer("/", "_", ".tflite", "", ".bin", "").Replace(e.File)
		csvPath := filepath.Join(dir, "bench", "tflm-buffers", name+".csv")
		if _, err := os.Stat(csvPath); err != nil {
			continue
		}
		t.Run(e.File, func(t *testing.T) {
			want := readTFLMBuffers(t, csvPath)
			data, err := os.ReadFile(e.Path)
			require.NoError(t, err)
			m, err := tflite.Load(data)
			require.NoError(t, err)
			lt, err := liveness.Analyze(m, liveness.Options{NoAlias: true})
			require.NoError(t, err)

			wantSet := map[graph.TensorRef]tflmBuffer{}
			for _, b := range want {
				wantSet[b.ref] = b
			}
			for _, tn := range lt.Tensors {
				b, ok := wantSet[tn.Ref]
				if tn.Class != liveness.Scratch {
					// TFLM also plans tensors nothing uses, giving them
					// scope -1; heliac gives them no bytes.
					assert.False(t, ok && b.first >= 0, "tensor %v (%s) is %v in heliac but planned by TFLM", tn.Ref, m.Tensor(tn.Ref.Subgraph, tn.Ref.Tensor).Name, tn.Class)
					continue
				}
				if !assert.True(t, ok, "scratch tensor %v (%s) not planned by TFLM", tn.Ref, m.Tensor(tn.Ref.Subgraph, tn.Ref.Tensor).Name) {
					continue
				}
				assert.Equal(t, b.size, align16(tn.Size), "size of %v", tn.Ref)
			}
			for i, a := range want {
				for _, b := range want[i+1:] {
					if a.first < 0 || b.first < 0 {
						continue
					}
					la, lb := lt.Lookup(a.ref), lt.Lookup(b.ref)
					if la == nil || lb == nil {
						continue
					}
					tflm := a.first <= b.last && b.first <= a.last
					assert.Equal(t, tflm, la.Live.Overlaps(lb.Live), "overlap of %v %v and %v %v (TFLM %d..%d and %d..%d)",
						a.ref, la.Live, b.ref, lb.Live, a.first, a.last, b.first, b.last)
				}
			}
			exact := 0
			for _, b := range want {
				if l := lt.Lookup(b.ref); l != nil && int(l.Live.First) == b.first && int(l.Live.Last) == b.last {
					exact++
				}
			}
			t.Logf("%d of %d lifetimes identical to TFLM's scopes", exact, len(want))
		})
	}
}
