package verify

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/tflmrun"
)

// haloRecord returns the record of a region over the operators ops (X
// the first one's first input, Y the last one's output) in the given
// rows and halo, its MACs worked out with the rebuild's own row rules
// (the test using it is about what TFLM computes, not the MACs); with
// the report instead when the rebuild refuses the rows.
func haloRecord(t *testing.T, m *graph.Model, ops []graph.OpIndex, rows [][2]int64, halo graph.Halo) (stripeRec, report) {
	t.Helper()
	if halo == graph.HaloCache {
		return cachedRecord(t, m, ops, rows)
	}
	sg := &m.Subgraphs[0]
	rec := stripeRec{path: "stripes[0]", input: sg.Ops[ops[0]].Inputs[0], output: sg.Ops[ops[len(ops)-1]].Outputs[0], ops: ops,
		k: int64(len(rows)), rows: rows, halo: halo}
	b := &rebuilder{orig: m}
	rg := b.checkRegion(&rec)
	require.NotNil(t, rg, "%v", b.r)
	for j, r := range rows {
		need := map[graph.TensorID]rowRange{rec.output: {r[0], r[1]}}
		for i := len(ops) - 1; i >= 0; i-- {
			op := &sg.Ops[ops[i]]
			p := need[op.Outputs[0]]
			if _, ok := b.operandRows(rg, j, ops[i], p, need); !ok {
				return rec, b.r
			}
			rec.extra += opMACs(sg, op, p.hi-p.lo)
		}
	}
	for _, oi := range ops {
		op := &sg.Ops[oi]
		rec.macs += opMACs(sg, op, int64(sg.Tensors[op.Outputs[0]].Shape[1]))
	}
	rec.extra -= rec.macs
	return rec, nil
}

// TestGroupsRebuildTFLM runs the verifier's own rebuild of regions of 12
// and 20 stripes, joined in groups (docs/stripes.md "More than 10
// stripes: groups"), in stock TFLM (../shared/tools/tflm_run, reference
// kernels) and compares every output with the original model's, halos
// recomputed and cached: a hand-built FLOAT32 CNN (stride-2 conv, a
// depthwise conv, a residual ADD; 40 rows) and INT8 regions of
// person_detect (ops 0-2, 48 rows; ops 0-6, 24 rows). The same rewrite
// with its first two groups swapped in the final concatenation changes
// the outputs.
func TestGroupsRebuildTFLM(t *testing.T) {
	tool := tflmrun.Require(t)
	swapped := 0
	for name, tt := range map[string]struct {
		model func() *graph.Model
		ops   []graph.OpIndex
		// cached lists the k that must build with cached halos too
		// (others may be refused: a thin last stripe computing no new
		// row of a deep region).
		cached []int64
	}{
		"conv stride 2, depthwise, residual add": {func() *graph.Model {
			n, x := newFloatNet("x", 80, 6, 3)
			a := n.conv(x, "a", 4, 3, 2, 1, true, false)
			b := n.conv(a, "b", 0, 3, 1, 1, true, true)
			return n.done(n.unary(opAdd, "ADD", ids(a, b), "y"))
		}, []graph.OpIndex{0, 1, 2}, []int64{12, 20}},
		"person_detect 0-2": {corpusModel(t, "tflite-micro/person_detect.tflite"), []graph.OpIndex{0, 1, 2}, []int64{12, 20}},
		"person_detect 0-6": {corpusModel(t, "tflite-micro/person_detect.tflite"), []graph.OpIndex{0, 1, 2, 3, 4, 5, 6}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			orig := tt.model()
			want := tflmOutputs(t, tool, orig, "orig.tflite")
			require.NotEmpty(t, want)
			sg := &orig.Subgraphs[0]
			h := int64(sg.Tensors[sg.Ops[tt.ops[len(tt.ops)-1]].Outputs[0]].Shape[1])
			for _, halo := range []graph.Halo{graph.HaloRecompute, graph.HaloCache} {
				for _, k := range []int64{12, 20} {
					rec, refused := haloRecord(t, orig, tt.ops, evenRows(h, k), halo)
					if refused != nil {
						require.False(t, halo == graph.HaloRecompute || slices.Contains(tt.cached, k), "%s k %d: %s", halo, k, refused[0].Msg)
						t.Logf("%s k %d: refused: %s", halo, k, refused[0].Msg)
						continue
					}
					got, bad := rebuildModel(orig, &planDoc{stripes: []stripeRec{rec}})
					require.Empty(t, bad)
					gsg := &got.Subgraphs[0]
					at := slices.IndexFunc(gsg.Ops, func(op graph.Op) bool { return op.Outputs[0] == rec.output })
					require.GreaterOrEqual(t, at, 0)
					final := gsg.Ops[at]
					require.Equal(t, opConcatenation, final.Code)
					require.Len(t, final.Inputs, 2, "%s k %d: two groups", halo, k)
					t.Logf("%s k %d: %d operators, groups of %v rows, extra MACs %d of %d", halo, k, len(gsg.Ops),
						[]int32{gsg.Tensors[final.Inputs[0]].Shape[1], gsg.Tensors[final.Inputs[1]].Shape[1]}, rec.extra, rec.macs)
					assert.Equal(t, want, tflmOutputs(t, tool, got, "groups.tflite"), "%s k %d", halo, k)
					if k != 20 {
						continue
					}
					// The two groups swapped: Y's rows in the wrong order
					// (k 20: two groups of 10 stripes, and of equal rows
					// where the height splits evenly).
					broken := cloneModel(got)
					bsg := &broken.Subgraphs[0]
					in := bsg.Ops[at].Inputs
					in[0], in[1] = in[1], in[0]
					swapped++
					assert.NotEqual(t, want, tflmOutputs(t, tool, broken, "swapped.tflite"), "%s k %d: groups swapped", halo, k)
				}
			}
		})
	}
	assert.NotZero(t, swapped, "some rewrite was broken on purpose")
}
