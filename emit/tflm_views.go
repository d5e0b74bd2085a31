package emit

import "github.com/heliac/heliac/graph"

// A view operator's output holds its input's bytes under another shape.
// When the plan puts the output on the input's bytes (liveness aliases
// views by default), TFLM's kernel has nothing left to do at invoke: it
// checks the type and copies the bytes onto themselves, or not at all.
// The runtime then leaves the operator out of the invoke order (order_<s>
// in <prefix>.tflm.cc); its init and prepare still run, in model order, so
// kernel data, the output's dims and every error are TFLM's.
//
// What each kernel's Eval does (tensorflow/lite/micro/kernels @90b983c),
// and the types for which it returns kTfLiteOk; for other types the
// operator runs, so that it fails as in TFLM:
//
//   - RESHAPE (reshape.cc EvalReshapeReference): input_bytes from
//     TfLiteTypeSizeOf (memory_helpers.cc; an error for a type it does not
//     know) and the input's element count; memcpy only when input and
//     output data differ ("Do nothing for in-place reshape").
//   - SQUEEZE (squeeze.cc SqueezeEval): an error for STRING; the byte
//     lengths of input and output (TfLiteEvalTensorByteLength, through
//     TfLiteTypeSizeOf) must be equal; memcpy(output, input, bytes).
//   - EXPAND_DIMS (expand_dims.cc ExpandDimsEval): for FLOAT32, INT16 and
//     INT8, the input's elements copied one by one into the output; any
//     other type is an error.
//
// None keeps state, reads its kernel data or touches another tensor.

// tflmTypeSized are the types TFLM's TfLiteTypeSizeOf knows
// (memory_helpers.cc @90b983c).
var tflmTypeSized = map[graph.ElementType]bool{
	graph.Float16: true, graph.BFloat16: true, graph.Float32: true, graph.Float64: true,
	graph.Int16: true, graph.Int32: true, graph.Uint32: true, graph.Uint8: true, graph.Uint16: true,
	graph.Int8: true, graph.Int64: true, graph.Uint64: true, graph.Bool: true, graph.Resource: true,
	graph.Complex64: true, graph.Complex128: true, graph.Int4: true,
}

// tflmViewEvalOK says, for each view operator, the input types for which
// its TFLM Eval returns kTfLiteOk (above).
var tflmViewEvalOK = map[string]func(graph.ElementType) bool{
	"RESHAPE": func(t graph.ElementType) bool { return tflmTypeSized[t] },
	"SQUEEZE": func(t graph.ElementType) bool { return tflmTypeSized[t] },
	"EXPAND_DIMS": func(t graph.ElementType) bool {
		return t == graph.Float32 || t == graph.Int16 || t == graph.Int8
	},
}

// skipsInvoke reports whether operator oi of subgraph si is a view whose
// invoke the runtime leaves out: TFLM's own kernel (opIndex is its row in
// t.ops), one output, of the input's type and size, which the plan puts at
// the input's address (the same arena and offset), of a type its Eval
// accepts.
func (t *tflmGen) skipsInvoke(si graph.SubgraphIndex, oi graph.OpIndex, opIndex int) bool {
	op := &t.m.Subgraphs[si].Ops[oi]
	ok, view := tflmViewEvalOK[op.CodeName]
	if !view || t.ops[opIndex].Register != tflmRegisterPrefix+op.CodeName+"()" ||
		len(op.Inputs) == 0 || len(op.Outputs) != 1 || op.Inputs[0] == graph.NoTensor || op.Outputs[0] == graph.NoTensor {
		return false
	}
	in, out := graph.TensorRef{Subgraph: si, Tensor: op.Inputs[0]}, graph.TensorRef{Subgraph: si, Tensor: op.Outputs[0]}
	ri, okIn := t.row[in]
	ro, okOut := t.row[out]
	if !okIn || !okOut {
		return false
	}
	a, b := t.table[ri], t.table[ro]
	ti, to := t.m.Tensor(si, in.Tensor), t.m.Tensor(si, out.Tensor)
	return a.Arena == b.Arena && a.Offset == b.Offset && a.Size == b.Size && ti.Size == to.Size &&
		ti.Type == to.Type && ok(ti.Type)
}
