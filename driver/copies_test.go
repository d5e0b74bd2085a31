package driver_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

// copiesModel exercises the exact-overlap copy contracts (float32, NHWC):
//
//	x = NEG(in) [1,8,4,4]
//	s3 = STRIDED_SLICE(x)[:, :, :, 0:2]      (not contiguous: own bytes)
//	s1 = STRIDED_SLICE(x)[0:1, 0:4, 0:4, 0:4] (the stripe rewrite's row slice)
//	s2 = STRIDED_SLICE(x)[0:1, 3:8, 0:4, 0:4] (overlaps s1 by a row)
//	p, q = SPLIT(axis 1, x)
//	sl = SLICE(x, [0,6,0,0], [1,2,-1,-1])
//	w = RELU(x)                               (reads x after the views)
//	a = ABS(s1), b = NEG(s2)
//	y = CONCATENATION(a, b; axis 1) [1,9,4,4]
//	outputs ABS(y), ADD(p, q), ABS(sl), ABS(s3), ABS(w)
//
// The slices' outputs are views of x, a and b live in their slots of y.
func copiesModel(t *testing.T) []byte {
	t.Helper()
	m := &graph.Model{Version: tflite.SchemaVersion, Buffers: []graph.Buffer{{}}}
	sg := graph.Subgraph{}
	add := func(name string, shape ...int32) graph.TensorID {
		size, err := graph.ByteSize(graph.Float32, shape)
		require.NoError(t, err)
		sg.Tensors = append(sg.Tensors, graph.Tensor{Name: name, Type: graph.Float32, Shape: shape, Size: size})
		return graph.TensorID(len(sg.Tensors) - 1)
	}
	ints := func(name string, v ...int32) graph.TensorID {
		data := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(data[4*i:], uint32(x))
		}
		m.Buffers = append(m.Buffers, graph.Buffer{Data: data})
		sg.Tensors = append(sg.Tensors, graph.Tensor{Name: name, Type: graph.Int32, Shape: []int32{int32(len(v))},
			Buffer: graph.BufferIndex(len(m.Buffers) - 1), Size: int64(len(data))})
		return graph.TensorID(len(sg.Tensors) - 1)
	}
	op := func(code graph.Opcode, opts *graph.Options, in []graph.TensorID, out ...graph.TensorID) {
		sg.Ops = append(sg.Ops, graph.Op{Code: code, Version: 1, Inputs: in, Outputs: out, Options: opts})
	}
	const (
		codeAdd, codeConcat, codeRelu, codeStridedSlice, codeSplit graph.Opcode = 0, 2, 19, 45, 49
		codeNeg, codeSlice, codeAbs                                graph.Opcode = 59, 65, 101
	)
	ss := &graph.Options{Table: "StridedSliceOptions"}
	ids := func(v ...graph.TensorID) []graph.TensorID { return v }
	in := add("in", 1, 8, 4, 4)
	x := add("x", 1, 8, 4, 4)
	op(codeNeg, nil, ids(in), x)
	s3 := add("s3", 1, 8, 4, 2)
	op(codeStridedSlice, ss, ids(x, ints("b3", 0, 0, 0, 0), ints("e3", 1, 8, 4, 2), ints("st3", 1, 1, 1, 1)), s3)
	s1 := add("s1", 1, 4, 4, 4)
	op(codeStridedSlice, ss, ids(x, ints("b1", 0, 0, 0, 0), ints("e1", 1, 4, 4, 4), ints("st1", 1, 1, 1, 1)), s1)
	s2 := add("s2", 1, 5, 4, 4)
	op(codeStridedSlice, ss, ids(x, ints("b2", 0, 3, 0, 0), ints("e2", 1, 8, 4, 4), ints("st2", 1, 1, 1, 1)), s2)
	p, q := add("p", 1, 4, 4, 4), add("q", 1, 4, 4, 4)
	op(codeSplit, &graph.Options{Table: "SplitOptions", Fields: []graph.OptionField{{Name: "num_splits", Kind: graph.OptionInt, Int: 2, Present: true}}},
		ids(ints("axis", 1), x), p, q)
	sl := add("sl", 1, 2, 4, 4)
	op(codeSlice, nil, ids(x, ints("bsl", 0, 6, 0, 0), ints("zsl", 1, 2, -1, -1)), sl)
	w := add("w", 1, 8, 4, 4)
	op(codeRelu, nil, ids(x), w)
	a, b := add("a", 1, 4, 4, 4), add("b", 1, 5, 4, 4)
	op(codeAbs, nil, ids(s1), a)
	op(codeNeg, nil, ids(s2), b)
	y := add("y", 1, 9, 4, 4)
	op(codeConcat, &graph.Options{Table: "ConcatenationOptions", Fields: []graph.OptionField{{Name: "axis", Kind: graph.OptionInt, Int: 1, Present: true}}},
		ids(a, b), y)
	outY, outPQ, outSl, outS3, outW := add("out_y", 1, 9, 4, 4), add("out_pq", 1, 4, 4, 4), add("out_sl", 1, 2, 4, 4), add("out_s3", 1, 8, 4, 2), add("out_w", 1, 8, 4, 4)
	op(codeAbs, nil, ids(y), outY)
	op(codeAdd, nil, ids(p, q), outPQ)
	op(codeAbs, nil, ids(sl), outSl)
	op(codeAbs, nil, ids(s3), outS3)
	op(codeAbs, nil, ids(w), outW)
	sg.Inputs = ids(in)
	sg.Outputs = ids(outY, outPQ, outSl, outS3, outW)
	m.Subgraphs = []graph.Subgraph{sg}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	return data
}

// copiesConfig is the default configuration in the model's order (so that
// a moved slot meets the tensor written after it).
func copiesConfig(t *testing.T, on bool) driver.Config {
	cfg := referenceConfig(t)
	cfg.ModelName, cfg.Version, cfg.EmitTFLite, cfg.Schedule = "copies", "test", true, driver.ScheduleModel
	cfg.Liveness.ExactOverlap = on
	return cfg
}

// allocNamed returns the index of the allocation of the tensor named name.
func allocNamed(t *testing.T, out *driver.Output, name string) int {
	t.Helper()
	for i, a := range out.Plan.Allocs {
		if a.Kind == plan.TensorAlloc && out.Model.Tensor(a.Ref.Subgraph, a.Ref.Tensor).Name == name {
			return i
		}
	}
	require.Failf(t, "no allocation", "%s", name)
	return -1
}

// TestExactOverlapPlan: with the switch on, the slices' outputs are views
// of x at their blocks and a, b lie in their slots of y, each recorded as
// an exact-overlap copy, and the verifier accepts the plan; off, no
// allocation relies on an exact-overlap copy.
func TestExactOverlapPlan(t *testing.T) {
	data := copiesModel(t)
	out, err := driver.Compile(context.Background(), data, copiesConfig(t, true))
	require.NoError(t, err)
	require.Empty(t, verify.Plan(out.Model, out.PlanJSON))
	at := func(name string) plan.Alloc { return out.Plan.Allocs[allocNamed(t, out, name)] }
	x, y := at("x"), at("y")
	for name, off := range map[string]int64{"s1": 0, "s2": 3 * 64, "p": 0, "q": 4 * 64, "sl": 6 * 64} {
		a := at(name)
		require.NotNil(t, a.Copy, "%s relies on an exact-overlap copy", name)
		assert.Equal(t, kernels.Block, a.Copy.Contract.Overlap)
		assert.Equal(t, x.Offset+off, a.Offset, "%s lies over its block of x", name)
	}
	for name, off := range map[string]int64{"a": 0, "b": 4 * 64} {
		a := at(name)
		require.NotNil(t, a.Copy, "%s relies on an exact-overlap copy", name)
		assert.Equal(t, kernels.Slot, a.Copy.Contract.Overlap)
		assert.Equal(t, y.Offset+off, a.Offset, "%s lies in its slot of y", name)
	}
	assert.Nil(t, at("s3").Copy, "a slice that is no block of its input keeps its own bytes")
	assert.Contains(t, string(out.PlanJSON), `"exact_overlap_copy"`)
	assert.Contains(t, string(emit.Summary(out.Model, out.Plan)), "7 slice output(s) or concatenation input(s) lie over the bytes their kernel copies")
	// The plan must say it relies on the copy: without the record, a and
	// s1 share bytes nothing in the plan relates.
	for _, name := range []string{"a", "s1"} {
		bad := *out.Plan
		bad.Allocs = slices.Clone(out.Plan.Allocs)
		bad.Allocs[allocNamed(t, out, name)].Copy = nil
		js, err := emit.JSON(out.Model, &bad, out.Meta)
		require.NoError(t, err)
		assert.True(t, slices.ContainsFunc(verify.Plan(out.Model, js), func(v verify.Violation) bool { return v.Kind == verify.BadAlias }),
			"%s without its exact_overlap_copy record", name)
	}

	offOut, err := driver.Compile(context.Background(), data, copiesConfig(t, false))
	require.NoError(t, err)
	for _, a := range offOut.Plan.Allocs {
		assert.Nil(t, a.Copy, "--exact-overlap off: %v relies on no exact-overlap copy", a.Ref)
	}
	assert.NotContains(t, string(offOut.PlanJSON), "exact_overlap_copy")
	s1, _ := out.Plan.ScratchTotals()
	s0, _ := offOut.Plan.ScratchTotals()
	assert.Less(t, s1, s0, "exact-overlap copies lower the arena")
	t.Logf("arena with exact-overlap copies %d B, without %d B", s1, s0)
}

// TestTFLMExactOverlapCopies runs copiesModel in TFLM with heliac's plan:
// its outputs are TFLM's own. Each copy contract broken on purpose is a
// violation to the verifier and changes TFLM's outputs: a's slot one
// element off (a's last element then lies under b's first, written after
// it), a view of a slice that is no contiguous block (s3 over x, which its
// element loop compacts before s1 and s2 read x), and x written (RELU in
// place) while its views s1 and s2 still live.
func TestTFLMExactOverlapCopies(t *testing.T) {
	tool := tflmrun.Require(t)
	dir := t.TempDir()
	data := copiesModel(t)
	orig := filepath.Join(dir, "copies.tflite")
	require.NoError(t, os.WriteFile(orig, data, 0o644))
	out, err := driver.Compile(context.Background(), data, copiesConfig(t, true))
	require.NoError(t, err)
	mine := filepath.Join(dir, "copies.heliac.tflite")
	require.NoError(t, os.WriteFile(mine, out.TFLite.Data, 0o644))
	opts := tflmrun.Options{Seed: 3, Invokes: interopInvokes, ArenaBytes: 64 << 10, Trace: true}
	run := func(path string) *tflmrun.Result {
		res, err := tflmrun.Run(context.Background(), tool, path, opts)
		require.NoError(t, err)
		require.True(t, res.OK(), "%s", res.Error())
		return res
	}
	want := run(orig)
	got := run(mine)
	assert.Equal(t, want.Outputs(), got.Outputs(), "outputs with heliac's exact-overlap plan")
	assert.Equal(t, want.Values["trace_digest"], got.Values["trace_digest"], "every intermediate with heliac's exact-overlap plan")

	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	x, y := allocNamed(t, out, "x"), allocNamed(t, out, "y")
	tests := []struct {
		name string
		edit func(q *plan.Plan)
	}{
		{name: "a slot one element off", edit: func(q *plan.Plan) {
			a := allocNamed(t, out, "a")
			q.Allocs[a].Offset += 4
			q.Allocs[a].AliasOffset += 4
		}},
		{name: "a view of a slice that is no contiguous block", edit: func(q *plan.Plan) {
			s3 := allocNamed(t, out, "s3")
			m := out.Model
			var contract kernels.Contract
			for _, c := range lib.Copies() {
				if c.Name == "STRIDED_SLICE" {
					contract = c
				}
			}
			op := slices.IndexFunc(m.Subgraphs[0].Ops, func(o graph.Op) bool { return o.Outputs[0] == q.Allocs[s3].Ref.Tensor })
			xr := q.Allocs[x].Ref
			if q.Allocs[x].AliasOf != nil {
				xr = *q.Allocs[x].AliasOf
			}
			q.Allocs[s3].Offset, q.Allocs[s3].AliasOf, q.Allocs[s3].AliasOffset = q.Allocs[x].Offset, &xr, q.Allocs[x].AliasOffset
			q.Allocs[s3].Copy = &liveness.Copy{Op: graph.OpRef{Op: graph.OpIndex(op)}, With: q.Allocs[x].Ref, Contract: contract}
		}},
		{name: "the input written while its views live", edit: func(q *plan.Plan) {
			w := allocNamed(t, out, "w")
			m := out.Model
			op := slices.IndexFunc(m.Subgraphs[0].Ops, func(o graph.Op) bool { return o.Outputs[0] == q.Allocs[w].Ref.Tensor })
			var contract kernels.Contract
			for _, p := range lib.InPlace(m, 0, &m.Subgraphs[0].Ops[op]) {
				contract = p.Contract
			}
			xr := q.Allocs[x].Ref
			q.Allocs[w].Offset, q.Allocs[w].AliasOf = q.Allocs[x].Offset, &xr
			q.Allocs[w].InPlace = &liveness.InPlace{Op: graph.OpRef{Op: graph.OpIndex(op)}, Input: xr, Contract: contract}
		}},
	}
	_ = y
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := *out.Plan
			bad.Allocs = slices.Clone(out.Plan.Allocs)
			tt.edit(&bad)
			growArenas(&bad)
			js, err := emit.JSON(out.Model, &bad, out.Meta)
			require.NoError(t, err)
			vs := verify.Plan(out.Model, js)
			var kinds []string
			for _, v := range vs {
				kinds = append(kinds, v.String())
			}
			t.Logf("verifier: %s", strings.Join(kinds, "\n"))
			assert.True(t, slices.ContainsFunc(vs, func(v verify.Violation) bool { return v.Kind == verify.BadAlias }),
				"the verifier reports the broken contract")
			op, err := emit.TFLMOfflinePlan(out.Model, &bad)
			require.NoError(t, err)
			moved, _, err := tflite.SetMetadata(data, graph.OfflinePlanName, op.Data)
			require.NoError(t, err)
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".tflite")
			require.NoError(t, os.WriteFile(path, moved, 0o644))
			res, err := tflmrun.Run(context.Background(), tool, path, opts)
			require.NoError(t, err)
			assert.True(t, !res.OK() || !slices.Equal(want.Outputs(), res.Outputs()), "TFLM's outputs differ")
		})
	}
}
