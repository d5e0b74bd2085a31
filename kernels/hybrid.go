package kernels

import (
	"fmt"
	"strings"

	"github.com/heliac/heliac/graph"
)

// HybridOp is an operator of a hybrid model: it reads FLOAT32 activations
// with weights of another type (INT8, INT4 ...), which TFLM's kernels
// refuse (or, for the LSTM, misread).
type HybridOp struct {
	Op       graph.OpRef
	Name     string         // the operator's name, e.g. "FULLY_CONNECTED"
	Input    graph.TensorID // the FLOAT32 activation
	Weights  []graph.TensorID
	Source   string // the TFLM kernel source that says so
	Misreads bool   // TFLM runs the float kernel over the weights rather than refusing
}

// Describe says what is hybrid about h, naming the tensors of m.
func (h HybridOp) Describe(m *graph.Model) string {
	return fmt.Sprintf("op %v %s %s (%s)", h.Op, h.Name, h.what(m), h.Source)
}

// what is Describe without the operator and the source.
func (h HybridOp) what(m *graph.Model) string {
	sg := &m.Subgraphs[h.Op.Subgraph]
	tensor := func(id graph.TensorID) string {
		t := &sg.Tensors[id]
		return fmt.Sprintf("%d:%d %q (%s)", h.Op.Subgraph, id, t.Name, t.Type)
	}
	weights := make([]string, len(h.Weights))
	for i, w := range h.Weights {
		weights[i] = tensor(w)
	}
	what := "refuse it (\"Hybrid models are not supported on TFLite Micro.\" or the like)"
	if h.Misreads {
		what = "have no hybrid path: the float kernel would read the weights as floats"
	}
	return fmt.Sprintf("reads FLOAT32 activation %s with weights %s: TFLM's kernels %s",
		tensor(h.Input), strings.Join(weights, ", "), what)
}

// hybridRule says which operands of an operator are its activation and
// its weights, and where TFLM checks them. TFLM's reference kernels at
// tflite-micro 90b983c accept FLOAT32 activations only with FLOAT32
// weights for each of these operators (their CMSIS-NN variants as well).
type hybridRule struct {
	input    int
	weights  []int
	source   string
	misreads bool
}

// opTransposeConv is TRANSPOSE_CONV's builtin code (schema.fbs).
const opTransposeConv graph.Opcode = 67

var hybridRules = map[graph.Opcode]hybridRule{
	opConv: {input: 0, weights: []int{1}, source: tflmCommit + ": " + microDir + "conv_common.cc:159-165 (ConvPrepare)"},
	opDepthwise: {input: 0, weights: []int{1},
		source: tflmCommit + ": " + microDir + "depthwise_conv_common.cc:194-200 (DepthwiseConvPrepare)"},
	opFullyConnected: {input: 0, weights: []int{1},
		source: tflmCommit + ": " + microDir + "fully_connected.cc:59-66 (FullyConnectedPrepare: \"Input type: FLOAT32 with filter type: INT8 not supported.\")"},
	opSVDF: {input: 0, weights: []int{1, 2},
		source: tflmCommit + ": " + microDir + "svdf_common.cc:492-493 (PrepareSvdf)"},
	opTransposeConv: {input: 2, weights: []int{1},
		source: tflmCommit + ": " + microDir + "transpose_conv.cc:172-176 (TransposeConvPrepare)"},
	opBatchMatmul: {input: 0, weights: []int{1},
		source: tflmCommit + ": " + microDir + "batch_matmul.cc:197-199 (BatchMatMulPrepare: \"Hybrid input (FLOAT32 LHS, INT8 RHS) is not supported\")"},
	// The LSTM's Eval picks the float kernel by the input's type alone.
	opLSTM: {input: 0, weights: []int{1, 2, 3, 4, 5, 6, 7, 8}, misreads: true,
		source: tflmCommit + ": " + microDir + "unidirectional_sequence_lstm.cc:104-114 (UnidirectionalSequenceLstmEval)"},
}

// Hybrid lists the operators of m, in subgraph and operator order, that
// read FLOAT32 activations with weights of another type: a hybrid model,
// which TFLM's kernels do not run.
func Hybrid(m *graph.Model) []HybridOp {
	var out []HybridOp
	for si := range m.Subgraphs {
		sg := &m.Subgraphs[si]
		typeOf := func(op *graph.Op, i int) (graph.TensorID, graph.ElementType, bool) {
			if i >= len(op.Inputs) || op.Inputs[i] < 0 || int(op.Inputs[i]) >= len(sg.Tensors) {
				return 0, 0, false
			}
			return op.Inputs[i], sg.Tensors[op.Inputs[i]].Type, true
		}
		for oi := range sg.Ops {
			op := &sg.Ops[oi]
			r, ok := hybridRules[op.Code]
			if !ok {
				continue
			}
			in, inType, ok := typeOf(op, r.input)
			if !ok || inType != graph.Float32 {
				continue
			}
			var weights []graph.TensorID
			for _, w := range r.weights {
				if id, t, ok := typeOf(op, w); ok && t != graph.Float32 {
					weights = append(weights, id)
				}
			}
			if len(weights) > 0 {
				out = append(out, HybridOp{Op: graph.OpRef{Subgraph: graph.SubgraphIndex(si), Op: graph.OpIndex(oi)},
					Name: op.Name(), Input: in, Weights: weights, Source: r.source, Misreads: r.misreads})
			}
		}
	}
	return out
}
