package kernels

import "github.com/heliac/heliac/graph"

// TFLite builtin operator codes the scratch rules name (schema.fbs,
// BuiltinOperator), beyond those of the contracts.
const (
	opFullyConnected graph.Opcode = 9
	opSVDF           graph.Opcode = 27
	opMean           graph.Opcode = 40
	opLSTM           graph.Opcode = 44 // UNIDIRECTIONAL_SEQUENCE_LSTM
	opSum            graph.Opcode = 74
	opReduceMax      graph.Opcode = 82
	opReduceMin      graph.Opcode = 89
	opMirrorPad      graph.Opcode = 100
	opAddN           graph.Opcode = 106
	opReduceAll      graph.Opcode = 140
)

// Target is what a kernel's scratch sizes depend on besides the model:
// the width of a pointer on the machine the kernels run on (ADD_N asks
// for one per input), and the instruction-set extension CMSIS-NN picks
// its kernels by.
type Target struct {
	// CPU names the target as --cpu does ("cortex-m55"); "" for one
	// described by its fields alone.
	CPU         string
	PointerSize int64
	ISA         ISA
}

// CortexM is a 32-bit Arm Cortex-M target without the DSP extension, for
// libraries whose scratch does not depend on the CPU further.
var CortexM = Target{PointerSize: 4}

// Scratch returns the scratch buffers operator op of subgraph s of m asks
// for under the library, in bytes, in the order its kernel requests them
// (before any rounding), and whether the library knows what the operator
// asks for: false for an operator it has no rule for (a custom operator
// it does not know), whose requests the plan cannot include. A library
// on a code path (On) reads its own path, not t.ISA; a set's requests
// are setScratch's.
//
// For tflm-reference every rule was read from the kernel's Prepare at
// TFLM's pinned commit (see scratchRules); an operator with no rule there
// asks for nothing.
func (l *Library) Scratch(m *graph.Model, s graph.SubgraphIndex, op *graph.Op, t Target) ([]int64, bool) {
	if l == nil || m == nil || s < 0 || int(s) >= len(m.Subgraphs) || op == nil {
		return nil, false
	}
	sg := &m.Subgraphs[s]
	if op.Code == graph.Custom {
		rule, ok := l.customScratch[op.CustomName]
		if !ok {
			return nil, false
		}
		return rule(scratchCtx{m, sg, op, t}), true
	}
	if rule, ok := l.builtinScratch[op.CodeName]; ok && op.CodeName != "" {
		return rule(scratchCtx{m, sg, op, t}), true
	}
	if len(l.members) > 0 {
		return l.setScratch(m, s, op, t)
	}
	if l.onPath {
		t.ISA = l.isa
	}
	if rule, ok := l.scratch[op.Code]; ok {
		return rule(scratchCtx{m, sg, op, t}), true
	}
	return nil, true
}

// scratchCtx is what a scratch rule reads: the operator, its subgraph's
// tensors and the target.
type scratchCtx struct {
	m  *graph.Model
	sg *graph.Subgraph
	op *graph.Op
	t  Target
}

// in returns operand i of the operator's inputs, or nil when it is absent.
func (c scratchCtx) in(i int) *graph.Tensor { return operand(c.sg, c.op.Inputs, i) }

// out returns the operator's first output, or nil.
func (c scratchCtx) out() *graph.Tensor { return operand(c.sg, c.op.Outputs, 0) }

// dim returns dimension i of t, or 0.
func dim(t *graph.Tensor, i int) int64 {
	if t == nil || i < 0 || i >= len(t.Shape) {
		return 0
	}
	return int64(t.Shape[i])
}

// flat returns the element count of t (1 for a scalar), or 0 for none.
func flat(t *graph.Tensor) int64 {
	if t == nil {
		return 0
	}
	return elements(t.Shape)
}

// scratchRule computes an operator's requests.
type scratchRule func(c scratchCtx) []int64

// init registers TFLM's reference kernels' scratch rules, each read from
// the kernel's Prepare at tflmCommit (file, function and lines cited,
// relative to tensorflow/lite/micro/kernels unless a path says otherwise):
// every call of RequestScratchBufferInArena in
// tensorflow/lite/micro/kernels/*.cc and signal/micro/kernels, the
// optimized kernel directories left out. Requests are made once, in
// Prepare, and live while the operator runs.
func init() {
	r := map[graph.Opcode]scratchRule{}
	int4Filter := func(c scratchCtx) []int64 {
		// conv_common.cc ConvPrepare 204-211, depthwise_conv_common.cc
		// DepthwiseConvPrepare 202-209, fully_connected.cc
		// FullyConnectedPrepare 69-76: INT4 weights unpacked, one byte
		// each.
		if f := c.in(1); f != nil && f.Type == graph.Int4 {
			if in := c.in(0); in != nil && in.Type == graph.Int8 {
				return []int64{flat(f)}
			}
		}
		return nil
	}
	r[opConv], r[opDepthwise], r[opFullyConnected] = int4Filter, int4Filter, int4Filter
	// transpose_conv.cc TransposeConvPrepare 193-209 (int32 accumulators
	// for INT8 input, int64 for INT16) and CalculateOpData 123-133 (an
	// INT16 bias widened to int64).
	r[graph.TransposeConv] = func(c scratchCtx) []int64 {
		in := c.in(2)
		if in == nil {
			return nil
		}
		switch in.Type {
		case graph.Int8:
			return []int64{flat(c.out()) * 4}
		case graph.Int16:
			req := []int64{flat(c.out()) * 8}
			if b := c.in(3); b != nil && b.Type == graph.Int16 {
				req = append(req, flat(b)*8)
			}
			return req
		}
		return nil
	}
	// svdf_common.cc PrepareSvdf 479-504: batch × num_filters int32
	// (both types), and batch × num_units int32 for INT8 input.
	r[opSVDF] = func(c scratchCtx) []int64 {
		in, wf := c.in(0), c.in(1)
		if in == nil || wf == nil {
			return nil
		}
		batch, filters, units := dim(in, 0), dim(wf, 0), dim(c.out(), 1)
		switch in.Type {
		case graph.Int8:
			return []int64{batch * filters * 4, batch * units * 4}
		case graph.Float32:
			return []int64{batch * filters * 4}
		}
		return nil
	}
	// unidirectional_sequence_lstm.cc UnidirectionalSequenceLstmPrepare
	// 86-94 with lstm_eval_common.cc CreateLstmSizeInfo 26-38: four
	// buffers of batch × state elements of the cell state's type; the
	// output state (input 18) is [batch, state].
	r[opLSTM] = func(c scratchCtx) []int64 {
		state, cell := c.in(18), c.in(19)
		if state == nil || cell == nil {
			return nil
		}
		n := flat(state) * int64(max(cell.Type.Bits()/8, 1))
		return []int64{n, n, n, n}
	}
	// add_n.cc CalculateOpData 81-100: a pointer per input.
	r[opAddN] = func(c scratchCtx) []int64 {
		return []int64{int64(len(c.op.Inputs)) * c.t.PointerSize}
	}
	// mirror_pad.cc MirrorPadPrepare 196-201: two int arrays of rank.
	r[opMirrorPad] = func(c scratchCtx) []int64 {
		in := c.in(0)
		if in == nil {
			return nil
		}
		rank := int64(len(in.Shape))
		return []int64{4 * rank, 4 * rank}
	}
	// reduce_common.cc PrepareMeanOrSumHelper 238-250: an int32
	// accumulator per output element for INT8 and INT16 input, then
	// int arrays of the input's rank and the axis's element count.
	meanOrSum := func(c scratchCtx) []int64 {
		in, axis := c.in(0), c.in(1)
		if in == nil || axis == nil {
			return nil
		}
		var req []int64
		if in.Type == graph.Int8 || in.Type == graph.Int16 {
			req = append(req, 4*flat(c.out()))
		}
		return append(req, 4*int64(len(in.Shape)), 4*flat(axis))
	}
	r[opMean], r[opSum] = meanOrSum, meanOrSum
	// reduce_common.cc PrepareMinMaxHelper 211-215 and PrepareAllHelper
	// 278-282: int arrays of the input's rank and the axis's elements.
	minMax := func(c scratchCtx) []int64 {
		in, axis := c.in(0), c.in(1)
		if in == nil || axis == nil {
			return nil
		}
		return []int64{4 * int64(len(in.Shape)), 4 * flat(axis)}
	}
	r[opReduceMax], r[opReduceMin], r[opReduceAll] = minMax, minMax, minMax
	tflmReference.scratch = r
	none := func(scratchCtx) []int64 { return nil }
	custom := map[string]scratchRule{}
	// The custom operators micro_mutable_op_resolver.h registers whose
	// kernels ask for no scratch (circular_buffer.cc, decode.cc, and
	// signal/micro/kernels: only rfft.cc requests any).
	// TFLite_Detection_PostProcess asks for eleven buffers sized by its
	// flexbuffer options (detection_postprocess.cc 187-219):
	// detectionPostprocessScratch.
	for _, name := range []string{"CIRCULAR_BUFFER", "TFLM_DECODE", "SignalDelay", "SignalEnergy", "SignalFftAutoScale",
		"SignalFilterBank", "SignalFilterBankLog", "SignalFilterBankSquareRoot", "SignalFilterBankSpectralSubtraction",
		"SignalFramer", "SignalIrfft", "SignalOverlapAdd", "SignalPCAN", "SignalStacker", "SignalWindow"} {
		custom[name] = none
	}
	custom["TFLite_Detection_PostProcess"] = detectionPostprocessScratch
	tflmReference.customScratch = custom
	for name, rule := range map[string]scratchRule{
		// signal/micro/kernels/rfft.cc RfftPrepare 104-105: fft_length
		// elements of T. Both are custom options; T is the input's type
		// and the output holds fft_length/2+1 complex values of T, so
		// fft_length = 2 × (last output dimension / 2 - 1).
		"SignalRfft": func(c scratchCtx) []int64 {
			in, out := c.in(0), c.out()
			if in == nil || out == nil || len(out.Shape) == 0 {
				return nil
			}
			n := 2 * (int64(out.Shape[len(out.Shape)-1])/2 - 1)
			return []int64{n * int64(max(in.Type.Bits()/8, 1))}
		},
	} {
		custom[name] = rule
	}
}
