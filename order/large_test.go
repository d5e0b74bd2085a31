package order_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/order"
)

// wideModel is a random DAG of n operators in one subgraph: each reads one
// or two earlier values (the input among them) and writes one of 16 to
// 1024 bytes, with a few outputs nobody reads.
func wideModel(seed uint64, n int) *graph.Model {
	rng := rand.New(rand.NewPCG(seed, 7))
	sg := graph.Subgraph{Tensors: []graph.Tensor{b("in", 64)}, Inputs: ids(0)}
	for i := range n {
		out := graph.TensorID(len(sg.Tensors))
		sg.Tensors = append(sg.Tensors, b(fmt.Sprintf("t%d", i), int32(16*(1+rng.IntN(64)))))
		in := []graph.TensorID{graph.TensorID(rng.IntN(int(out)))}
		if rng.IntN(2) == 0 {
			// Mostly recent values, so lifetimes stay local.
			lo := max(0, int(out)-20)
			in = append(in, graph.TensorID(lo+rng.IntN(int(out)-lo)))
		}
		sg.Ops = append(sg.Ops, op(add, in, []graph.TensorID{out}))
	}
	sg.Outputs = ids(len(sg.Tensors) - 1)
	return &graph.Model{Subgraphs: []graph.Subgraph{sg}}
}

// TestWideModels schedules random DAGs, one beyond the size for which
// Schedule computes which operators precede which.
func TestWideModels(t *testing.T) {
	sizes := []int{50, 200, 1000, 9000}
	if testing.Short() || raceEnabled {
		sizes = sizes[:2]
	}
	for _, n := range sizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			data, m := roundTrip(t, wideModel(uint64(n), n))
			start := time.Now()
			r := schedule(t, m, order.Options{})
			t.Logf("%d operators: model %d, best %d, bound %d, proven %v, %v", n, r.ModelPeak, r.Peak, r.LowerBound, r.Proven, time.Since(start))
			if n <= 1000 {
				checkResult(t, fmt.Sprint(n), data, m, mode{name: "plain"}, r)
				return
			}
			// verify checks every pair of buffers: too slow here.
			assert.Equal(t, livePeak(t, m, liveness.Options{Order: r.Order}, order.DefaultAlignment), r.Peak)
			assert.LessOrEqual(t, r.Peak, r.ModelPeak)
			checkDataOrder(t, m, r.Order)
		})
	}
}

// checkDataOrder checks verify's tensor rule naively: an operator that
// writes a tensor and one that reads or writes it keep the model's order.
func checkDataOrder(t *testing.T, m *graph.Model, ord [][]graph.OpIndex) {
	t.Helper()
	for s, sg := range m.Subgraphs {
		pos := make([]int, len(sg.Ops))
		for i, o := range ord[s] {
			pos[o] = i
		}
		writes := map[graph.TensorID][]int{}
		access := map[graph.TensorID][]int{}
		for oi, o := range sg.Ops {
			for _, tn := range o.Outputs {
				writes[tn] = append(writes[tn], oi)
			}
			for _, list := range [][]graph.TensorID{o.Inputs, o.Outputs, o.Intermediates} {
				for _, tn := range list {
					access[tn] = append(access[tn], oi)
				}
			}
		}
		for tn, ws := range writes {
			for _, w := range ws {
				for _, a := range access[tn] {
					if a != w && (a < w) != (pos[a] < pos[w]) {
						t.Errorf("subgraph %d: ops %d and %d both use tensor %d, one writing it, and swap places", s, a, w, tn)
					}
				}
			}
		}
	}
}
