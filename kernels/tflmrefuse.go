package kernels

import (
	"fmt"
	"slices"
	"strings"

	"github.com/heliac/heliac/graph"
)

// Refusal is one reason stock TFLM (tflite-micro@90b983c, its reference
// kernels) does not run a model: an operator it has no kernel for, an
// operator whose kernel refuses its tensors' types or shapes (in Prepare,
// or in Eval on the first Invoke), or a tensor of a type TFLM cannot size.
// heliac still plans such a model; the plan is of no use to TFLM until the
// model changes.
type Refusal struct {
	// Op is the operator refused; for a tensor, the first operator of its
	// subgraph that reads or writes it (Op.Op -1 when none does).
	Op graph.OpRef
	// Name is the operator's name ("CONV_2D", "CUSTOM:edgetpu-custom-op").
	Name string
	// Tensor is the tensor refused, or graph.NoTensor for an operator.
	Tensor graph.TensorID
	// Reason says what TFLM refuses, naming the tensors.
	Reason string
	// Source is the TFLM source that says so, file:lines (function).
	Source string
}

// String is the refusal as one line: "op 0:3 CONV_2D: <reason> (<source>)",
// or for a tensor "tensor 0:1: <reason> (<source>)"; without a source when
// the reason cites its own.
func (r Refusal) String() string {
	src := ""
	if r.Source != "" {
		src = " (" + r.Source + ")"
	}
	if r.Tensor != graph.NoTensor {
		return fmt.Sprintf("tensor %d:%d: %s%s", r.Op.Subgraph, r.Tensor, r.Reason, src)
	}
	return fmt.Sprintf("op %v %s: %s%s", r.Op, r.Name, r.Reason, src)
}

// TFLMRefusals lists why stock TFLM does not run m, in subgraph order:
// first the tensors whose type it cannot size, then at most one reason per
// operator, in operator order (TFLM stops at the first). An empty list
// says none of these checks refuses the model; TFLM may still refuse it
// for a reason they do not model.
func TFLMRefusals(m *graph.Model) []Refusal {
	var out []Refusal
	hybrid := map[graph.OpRef]HybridOp{}
	for _, h := range Hybrid(m) {
		hybrid[h.Op] = h
	}
	for si := range m.Subgraphs {
		sg := &m.Subgraphs[si]
		out = append(out, unsizedTensors(graph.SubgraphIndex(si), sg)...)
		for oi := range sg.Ops {
			ref := graph.OpRef{Subgraph: graph.SubgraphIndex(si), Op: graph.OpIndex(oi)}
			op := &sg.Ops[oi]
			reason, source := opRefusal(m, ref, op, hybrid)
			if reason != "" {
				out = append(out, Refusal{Op: ref, Name: op.Name(), Tensor: graph.NoTensor, Reason: reason, Source: source})
			}
		}
	}
	return out
}

// dataSource is the source of a refusal the kernels' arena data knows of
// (their Init and Prepare; kernels/tflmtail_*.go cites each).
const dataSource = tflmCommit + ": the kernel's Init and Prepare, as kernels/tflmtail_*.go reads them"

// opRefusal is the one check of why TFLM refuses operator op (at ref in
// m): no kernel registered for it, a type or shape its kernel refuses
// (refuseOp), a hybrid operator (hybrid: Hybrid's of m, by operator), a
// math kernel's refusal, or the kernel data's Refused. It returns the
// reason and the TFLM source that says so, or "" when none of these
// refuses it.
func opRefusal(m *graph.Model, ref graph.OpRef, op *graph.Op, hybrid map[graph.OpRef]HybridOp) (reason, source string) {
	sg := &m.Subgraphs[ref.Subgraph]
	if reason, source = refuseOp(sg, op); reason != "" {
		return reason, source
	}
	if h, ok := hybrid[ref]; ok {
		return h.what(m), h.Source
	}
	if op.Code != graph.Custom {
		if why := tflmMathRefusal(m, sg, op); why != "" {
			return why, dataSource
		}
	}
	if k, ok := TFLM(m, ref.Subgraph, op, 8); ok && k.Refused != "" {
		return k.Refused, dataSource
	}
	return "", ""
}

// unsizedTensors are the tensors of sg whose type TFLM cannot size:
// AllocateTensors fails on them without a message.
func unsizedTensors(si graph.SubgraphIndex, sg *graph.Subgraph) []Refusal {
	var out []Refusal
	for ti := range sg.Tensors {
		t := &sg.Tensors[ti]
		if _, ok := tflmTypeSizes[t.Type]; ok {
			continue
		}
		r := Refusal{Op: graph.OpRef{Subgraph: si, Op: -1}, Tensor: graph.TensorID(ti),
			Reason: fmt.Sprintf("%q is of type %s, which TFLM cannot size: AllocateTensors fails without a message", t.Name, t.Type),
			Source: tflmCommit + ": tensorflow/lite/micro/memory_helpers.cc:48-105 (TfLiteTypeSizeOf, from BytesRequiredForTensor)"}
		for oi := range sg.Ops {
			op := &sg.Ops[oi]
			if slices.Contains(op.Inputs, graph.TensorID(ti)) || slices.Contains(op.Outputs, graph.TensorID(ti)) {
				r.Op.Op, r.Name = graph.OpIndex(oi), op.Name()
				break
			}
		}
		out = append(out, r)
	}
	return out
}

// tflmTypeSizes are the tensor types TFLM sizes
// (tensorflow/lite/micro/memory_helpers.cc:48-105 @90b983c, TfLiteTypeSizeOf;
// any other type returns kTfLiteError).
var tflmTypeSizes = map[graph.ElementType]bool{
	graph.Float16: true, graph.BFloat16: true, graph.Float32: true, graph.Float64: true,
	graph.Int16: true, graph.Int32: true, graph.Uint32: true, graph.Uint8: true, graph.Uint16: true,
	graph.Int8: true, graph.Int64: true, graph.Uint64: true, graph.Bool: true, graph.Resource: true,
	graph.Complex64: true, graph.Complex128: true, graph.Int4: true,
}

// refuseOp says why TFLM refuses op, an operator of sg, or "" when no
// check here does.
func refuseOp(sg *graph.Subgraph, op *graph.Op) (reason, source string) {
	const registration = tflmCommit + ": tensorflow/lite/micro/micro_op_resolver.cc:24-54 (GetRegistrationFromOpCode), " +
		"tensorflow/lite/micro/micro_interpreter.cc:126-133 (PrepareNodeAndRegistrationDataFromFlatbuffer)"
	switch {
	case op.Code == graph.Custom && op.CustomName == "ethos-u":
		return "TFLM's reference and CMSIS-NN builds have no kernel for custom operator \"ethos-u\" (Register_ETHOSU returns null); " +
			"only a TFLM build for an Ethos-U NPU runs it", tflmCommit + ": " + microDir + "ethosu.cc:23 (Register_ETHOSU)"
	case op.Code == graph.Custom && !tflmRegisteredCustom[op.CustomName]:
		return fmt.Sprintf("TFLM has no kernel for custom operator %q (\"Failed to get registration from op code CUSTOM\")", op.CustomName), registration
	case op.Code != graph.Custom && !tflmRegistered[op.CodeName]:
		return fmt.Sprintf("TFLM has no kernel for it (\"Didn't find op for builtin opcode '%s'\")", op.Name()), registration
	}
	tensor := func(i int) (*graph.Tensor, bool) {
		if i >= len(op.Inputs) || op.Inputs[i] < 0 || int(op.Inputs[i]) >= len(sg.Tensors) {
			return nil, false
		}
		return &sg.Tensors[op.Inputs[i]], true
	}
	output := func(i int) (*graph.Tensor, bool) {
		if i >= len(op.Outputs) || op.Outputs[i] < 0 || int(op.Outputs[i]) >= len(sg.Tensors) {
			return nil, false
		}
		return &sg.Tensors[op.Outputs[i]], true
	}
	if r, ok := typeRules[op.Code]; ok {
		if in, ok := tensor(r.input); ok && !slices.Contains(r.accepts, in.Type) {
			return fmt.Sprintf("its input %q is %s; TFLM's kernel takes %s", in.Name, in.Type, typeList(r.accepts)), r.source
		}
	}
	switch op.Code {
	case opBatchMatmul:
		lhs, ok1 := tensor(0)
		rhs, ok2 := tensor(1)
		out, ok3 := output(0)
		if !ok1 || !ok2 || !ok3 {
			return "", ""
		}
		const src = tflmCommit + ": " + microDir + "batch_matmul.cc:191-201 (BatchMatMulPrepare)"
		if lhs.Type != rhs.Type {
			return fmt.Sprintf("its inputs %q (%s) and %q (%s) differ in type; TFLM's kernel takes one type for both", lhs.Name, lhs.Type, rhs.Name, rhs.Type), src
		}
		if out.Type != lhs.Type {
			return fmt.Sprintf("its output %q is %s, its inputs %s; TFLM's kernel writes their type", out.Name, out.Type, lhs.Type), src
		}
	case opSVDF:
		return refuseSVDF(op, tensor, output)
	case opLSTM:
		var variant []string
		for _, i := range lstmVariantInputs {
			if t, ok := tensor(i); ok {
				variant = append(variant, fmt.Sprintf("%d %q", i, t.Name))
			}
		}
		if len(variant) > 0 {
			return fmt.Sprintf("it has optional input(s) %s (peephole, projection or layer norm), an LSTM variant TFLM's kernel refuses",
				strings.Join(variant, ", ")), tflmCommit + ": " + microDir + "lstm_eval.cc:89-101 (LstmTensors::ValidateTensorStatus, from UnidirectionalSequenceLstmPrepare)"
		}
	}
	return "", ""
}

// refuseSVDF checks an SVDF's output against its feature weights and rank,
// as PrepareSvdf does.
func refuseSVDF(op *graph.Op, input, output func(int) (*graph.Tensor, bool)) (string, string) {
	const src = tflmCommit + ": " + microDir + "svdf_common.cc:393-414 (PrepareSvdf)"
	w, ok1 := input(1)
	out, ok2 := output(0)
	if !ok1 || !ok2 || len(w.Shape) < 1 || len(out.Shape) != 2 {
		return "", ""
	}
	rank := int32(0)
	if o := op.Resolved(); o != nil {
		rank = int32(o.Int("rank"))
	}
	switch {
	case rank <= 0 || w.Shape[0]%rank != 0:
		return fmt.Sprintf("its rank %d does not divide the %d filters of %q", rank, w.Shape[0], w.Name), src
	case out.Shape[1] != w.Shape[0]/rank:
		return fmt.Sprintf("its output %q has %d units where its %d filters of rank %d give %d", out.Name, out.Shape[1], w.Shape[0], rank, w.Shape[0]/rank), src
	}
	return "", ""
}

// lstmVariantInputs are the optional inputs of UNIDIRECTIONAL_SEQUENCE_LSTM
// TFLM's kernel requires absent: peephole (9-11), projection (16, 17) and
// layer norm (20-23) (lstm_shared.h, lstm_eval.cc:89-101 @90b983c).
var lstmVariantInputs = []int{9, 10, 11, 16, 17, 20, 21, 22, 23}

// typeRule is the element types TFLM's kernel for an operator takes for
// one input; any other makes the kernel fail.
type typeRule struct {
	input   int
	accepts []graph.ElementType
	source  string
}

// typeRules are the operators whose kernels refuse an input type, UINT8
// above all: TF1-style quantized models (uint8 activations) ran on
// TFLite's kernels, and TFLM's have dropped them.
var typeRules = func() map[graph.Opcode]typeRule {
	f32, i8, i16 := graph.Float32, graph.Int8, graph.Int16
	return map[graph.Opcode]typeRule{
		opConv: {0, []graph.ElementType{f32, i16, i8},
			tflmCommit + ": " + microDir + "conv_common.cc:159-165 (ConvPrepare: \"Hybrid models are not supported on TFLite Micro.\")"},
		opDepthwise: {0, []graph.ElementType{f32, i8, i16},
			tflmCommit + ": " + microDir + "depthwise_conv.cc:67-179 (DepthwiseConvEval: \"Input type %s (%d) not supported.\")"},
		opFullyConnected: {0, []graph.ElementType{f32, i8, i16},
			tflmCommit + ": " + microDir + "fully_connected.cc:139-350 (FullyConnectedEval: \"Input type %s (%d) not supported.\")"},
		opConcatenation: {0, []graph.ElementType{f32, i8, i16, graph.Int32, graph.Int64, graph.Bool},
			tflmCommit + ": " + microDir + "concatenation.cc:148-151 (ConcatenationPrepare)"},
		opAvgPool: {0, []graph.ElementType{f32, i8, i16},
			tflmCommit + ": " + microDir + "pooling_common.cc:78-89 (PoolingPrepare: \"Type %s (%d) not supported.\")"},
		opMaxPool: {0, []graph.ElementType{f32, i8, i16},
			tflmCommit + ": " + microDir + "pooling_common.cc:78-89 (PoolingPrepare: \"Type %s (%d) not supported.\")"},
		opSoftmax: {0, []graph.ElementType{f32, i8, i16},
			tflmCommit + ": " + microDir + "softmax_common.cc:89-134 (CalculateSoftmaxParams, from SoftmaxPrepare)"},
		opBatchMatmul: {0, []graph.ElementType{f32, i8, i16},
			tflmCommit + ": " + microDir + "batch_matmul.cc:191-193 (BatchMatMulPrepare)"},
	}
}()

// typeList joins types as "FLOAT32, INT8 or INT16".
func typeList(ts []graph.ElementType) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// TFLMBuiltinOps lists the builtin operators stock TFLM has a kernel for,
// sorted: those MicroMutableOpResolver has an AddXxx for
// (tensorflow/lite/micro/micro_mutable_op_resolver.h @90b983c), which
// tools/tflm_run registers all of.
func TFLMBuiltinOps() []string { return sortedKeys(tflmRegistered) }

// TFLMCustomOps lists the custom operators stock TFLM has a kernel for,
// sorted (AddCustom's names and the signal library's, as TFLMBuiltinOps).
func TFLMCustomOps() []string { return sortedKeys(tflmRegisteredCustom) }

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
