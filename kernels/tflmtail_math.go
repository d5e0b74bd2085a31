package kernels

import (
	"fmt"
	"strings"

	"github.com/heliac/heliac/graph"
)

// What TFLM's reference kernels of the elementwise, logical, reduction
// and arg operators take from the arena, read at tflmCommit (files in
// tensorflow/lite/micro/kernels unless a path says otherwise; the
// parsers in tensorflow/lite/core/api/flatbuffer_conversions.cc). The
// tables follow tflmtail.go's: sizes are {host64, cortex-m}, checked
// against the compilers by TestTFLMMathSizesMatchHeaders. Their scratch
// requests are scratch.go's (ADD_N, REDUCE_MAX, REDUCE_MIN, REDUCE_ALL;
// the others ask for none).

// tflmMathParams are the builtin parameter structs these operators'
// parsers keep, {sizeof}, {alignof} on {host64, cortex-m}; the parsers
// of the operators not listed keep none (ParseAddN, ParseCeil, ...
// return without allocating).
var tflmMathParams = map[string][2]pair{
	"ARG_MAX":          {{4, 1}, {4, 1}}, // ParseArgMax: TfLiteArgMaxParams (a TfLiteType)
	"ARG_MIN":          {{4, 1}, {4, 1}}, // ParseArgMin: TfLiteArgMinParams
	"CUMSUM":           {{2, 2}, {1, 1}}, // ParseCumsum: TfLiteCumsumParams (two bools)
	"L2_NORMALIZATION": {{4, 1}, {4, 1}}, // ParseL2Normalization: TfLiteL2NormParams (an activation)
	"REDUCE_MAX":       {{1, 1}, {1, 1}}, // ParseReducer: TfLiteReducerParams
	"REDUCE_MIN":       {{1, 1}, {1, 1}}, // ParseReducer
	"REDUCE_ALL":       {{1, 1}, {1, 1}}, // ParseReducer
}

// tflmMathOpData are the bytes each kernel's Init asks
// AllocatePersistentBuffer for; kernels not listed have no Init (or,
// FLOOR_DIV and FLOOR_MOD, one that returns nullptr).
var tflmMathOpData = map[string]pair{
	"ELU":                {256, 256}, // elu.cc EluInit: OpData (int8_t table[256])
	"L2_NORMALIZATION":   {4, 4},     // l2norm.cc L2NormInit: L2NormalizationParams (types.h)
	"PRELU":              {28, 28},   // prelu.cc PreluInit: PreluParams (types.h)
	"REDUCE_MAX":         {44, 44},   // reduce.cc InitReduce: OpDataReduce (reduce.h)
	"REDUCE_MIN":         {44, 44},   // reduce.cc InitReduce
	"REDUCE_ALL":         {44, 44},   // reduce.cc InitReduce
	"RSQRT":              {28, 28},   // elementwise.cc ElementWiseAbsRsqrtInit: OpDataAbsRsqrt (its TfLiteQuantizationType is an int in C++)
	"SELECT_V2":          {1, 1},     // select.cc SelectInit: OpData (one bool)
	"SQUARED_DIFFERENCE": {112, 112}, // squared_difference.cc SquaredDifferenceInit: OpData (a bool, ArithmeticParams)
}

// Sizes of the OpData some of these kernels allocate in Prepare, for
// INT8 only (declared in the kernels' .cc files; tflmtail_math_test.go
// compiles each struct's members).
var (
	addNOpData       = pair{40, 40} // add_n.cc OpData: six int32_t, four int
	cumsumOpData     = pair{36, 36} // cumsum.cc OpData: six int32_t, three int
	logSoftmaxOpData = pair{40, 28} // log_softmax.cc LogSoftmaxOpData: five int32_t and int, two size_t
)

// tflmMathOperands are the temporary operand tensors each kernel's
// Prepare allocates, in order ("i<k>" input k, "o<k>" output k), where
// they do not depend on the types; nil for kernels with no Prepare. The
// kernels with type-dependent steps (ADD_N, CUMSUM, LOG_SOFTMAX,
// REDUCE_MAX, REDUCE_MIN) are in tflmMath's switch.
var tflmMathOperands = map[string][]string{
	"ARG_MAX":            nil,                            // arg_min_max.cc Register_ARG_MAX: no Init, no Prepare
	"ARG_MIN":            nil,                            // arg_min_max.cc Register_ARG_MIN
	"BROADCAST_ARGS":     {"i0", "i1", "o0"},             // broadcast_args.cc BroadcastArgsPrepare
	"BROADCAST_TO":       {"i0", "i1", "o0"},             // broadcast_to.cc BroadcastToPrepare
	"CEIL":               {"i0", "o0"},                   // ceil.cc CeilPrepare
	"COS":                {"i0", "o0"},                   // elementwise.cc GenericPrepare
	"ELU":                {"i0", "o0"},                   // elu.cc CalculateOpData
	"EXP":                {"i0", "o0"},                   // exp.cc ExpPrepare
	"FILL":               {"i0", "i1", "o0"},             // fill.cc FillPrepare
	"FLOOR":              nil,                            // floor.cc Register_FLOOR: Eval only
	"FLOOR_DIV":          {"i0", "i1", "o0"},             // floor_div.cc CalculateOpData
	"FLOOR_MOD":          {"i0", "i1", "o0"},             // floor_mod.cc CalculateOpData
	"L2_NORMALIZATION":   {"i0", "o0"},                   // l2norm.cc L2NormPrepare
	"LOG":                {"i0", "o0"},                   // elementwise.cc GenericPrepare
	"LOGICAL_AND":        nil,                            // logical.cc Register_LOGICAL_AND: Eval only
	"LOGICAL_NOT":        {"i0", "o0"},                   // elementwise.cc GenericPrepare
	"LOGICAL_OR":         nil,                            // logical.cc Register_LOGICAL_OR: Eval only
	"PRELU":              {"i0", "i1", "o0"},             // prelu_common.cc PreluPrepare
	"REDUCE_ALL":         {"i0", "o0", "i1", "i0", "i1"}, // reduce_common.cc PrepareAllHelper, then PrepareSimple (BOOL: no output)
	"ROUND":              {"i0", "o0"},                   // round.cc RoundPrepare
	"RSQRT":              {"i0", "o0"},                   // elementwise.cc PrepareAbsRsqrt
	"SELECT_V2":          {"i0", "i1", "i2", "o0"},       // select.cc SelectPrepare
	"SIN":                {"i0", "o0"},                   // elementwise.cc GenericPrepare
	"SQRT":               {"i0", "o0"},                   // elementwise.cc GenericPrepare
	"SQUARE":             {"i0", "o0"},                   // elementwise.cc GenericPrepare
	"SQUARED_DIFFERENCE": {"i0", "i1", "o0"},             // squared_difference.cc SquaredDifferencePrepare
	"ZEROS_LIKE":         {"i0", "o0"},                   // zeros_like.cc ZerosLikePrepare
	// Type-dependent (tflmMath).
	"ADD_N": nil, "CUMSUM": nil, "LOG_SOFTMAX": nil, "REDUCE_MAX": nil, "REDUCE_MIN": nil,
}

// tflmAccept is one condition a kernel puts on an operand: its type is
// one of types, and it is constant when constant is set.
type tflmAccept struct {
	operand  string // "i<k>" or "o<k>"
	types    []graph.ElementType
	constant bool
	where    string // the function that refuses the rest
}

// Element types, short.
const (
	f32, i8, i16, i32, i64 = graph.Float32, graph.Int8, graph.Int16, graph.Int32, graph.Int64
	boolean                = graph.Bool
)

// accept is a tflmAccept of an operand that is not required constant.
func accept(operand, where string, types ...graph.ElementType) tflmAccept {
	return tflmAccept{operand: operand, types: types, where: where}
}

// tflmMathAccepts are the operand types these kernels run, read from
// their Prepare and Eval: a model with other types fails in TFLM's
// AllocateTensors or Invoke, so TFLM cannot run it. (LOGICAL_AND and
// LOGICAL_OR check nothing: logical_common.cc LogicalImpl reads any
// input as bool; BROADCAST_TO refuses only STRING input, in
// tflmMathRefusal.)
var tflmMathAccepts = map[string][]tflmAccept{
	"ADD_N": {accept("o0", "add_n.cc CalculateOpData", f32, i8)},
	"ARG_MAX": {accept("i0", "arg_min_max.cc Eval", f32, i8), accept("i1", "arg_min_max.cc Eval", i32),
		accept("o0", "arg_min_max.cc Eval", i32)},
	"ARG_MIN": {accept("i0", "arg_min_max.cc Eval", f32, i8), accept("i1", "arg_min_max.cc Eval", i32),
		accept("o0", "arg_min_max.cc Eval", i32)},
	"BROADCAST_ARGS": {accept("i0", "broadcast_args.cc BroadcastArgsPrepare", i32, i64)},
	"BROADCAST_TO": {{operand: "i1", types: []graph.ElementType{i32, i64}, constant: true,
		where: "broadcast_to.cc BroadcastToPrepare"}},
	"CEIL":   {accept("i0", "ceil.cc CeilPrepare", f32)},
	"COS":    {accept("i0", "elementwise.cc GenericPrepare", f32)},
	"CUMSUM": {accept("i0", "cumsum.cc CalculateOpData", f32, i8), accept("i1", "cumsum.cc CalculateOpData", i32)},
	"ELU":    {accept("i0", "elu.cc EluEval", f32, i8)},
	"EXP":    {accept("i0", "exp.cc ExpPrepare", f32)},
	"FILL": {{operand: "i0", types: []graph.ElementType{i8, i16, i32, i64}, constant: true, where: "fill.cc FillPrepare"},
		accept("i1", "fill.cc FillEval", f32, i32, i8)},
	"FLOOR":              {accept("i0", "floor.cc FloorEval", f32)},
	"FLOOR_DIV":          {accept("i0", "floor_div.cc FloorDivEval", f32)},
	"FLOOR_MOD":          {accept("i0", "floor_mod.cc FloorModEval", f32)},
	"L2_NORMALIZATION":   {accept("o0", "l2norm.cc L2NormPrepare", f32, i8)},
	"LOG":                {accept("i0", "elementwise.cc GenericPrepare", f32)},
	"LOGICAL_NOT":        {accept("i0", "elementwise.cc GenericPrepare", boolean)},
	"LOG_SOFTMAX":        {accept("i0", "log_softmax.cc LogSoftmaxEval", f32, i8)},
	"PRELU":              {accept("i0", "prelu.cc PreluEval", f32, i8, i16)},
	"REDUCE_ALL":         {accept("i0", "reduce_common.cc PrepareAllHelper", boolean), accept("i1", "reduce_common.cc PrepareSimple", i32)},
	"REDUCE_MAX":         {accept("i0", "reduce_common.cc EvalMinMaxHelper", f32, i8), accept("i1", "reduce_common.cc PrepareSimple", i32)},
	"REDUCE_MIN":         {accept("i0", "reduce_common.cc EvalMinMaxHelper", f32, i8), accept("i1", "reduce_common.cc PrepareSimple", i32)},
	"ROUND":              {accept("i0", "round.cc RoundPrepare", f32)},
	"RSQRT":              {accept("i0", "elementwise.cc PrepareAbsRsqrt (IsRsqrtSupportedType)", f32, i8)},
	"SELECT_V2":          {accept("i0", "select.cc SelectPrepare", boolean), accept("i1", "select.cc SelectEval", f32, i8, i16)},
	"SIN":                {accept("i0", "elementwise.cc GenericPrepare", f32)},
	"SQRT":               {accept("i0", "elementwise.cc GenericPrepare", f32)},
	"SQUARE":             {accept("i0", "elementwise.cc GenericPrepare", f32)},
	"SQUARED_DIFFERENCE": {accept("o0", "squared_difference.cc SquaredDifferenceEval", f32, i32, i8, i16)},
	"ZEROS_LIKE":         {accept("i0", "zeros_like.cc ZerosLikeEval", i64, i32, i8, f32)},
}

// tflmMathOperand returns the operand a token ("i<k>", "o<k>") names, or
// nil.
func tflmMathOperand(sg *graph.Subgraph, op *graph.Op, tok string) *graph.Tensor {
	ids := op.Inputs
	if tok[0] == 'o' {
		ids = op.Outputs
	}
	return operand(sg, ids, int(tok[1]-'0'))
}

// operandName spells a token: "input 1", "output 0".
func operandName(tok string) string {
	if tok[0] == 'o' {
		return "output " + tok[1:]
	}
	return "input " + tok[1:]
}

// tflmMathRefusal says why TFLM's reference kernel cannot run op (its
// Prepare or Eval refuses the operands' types, or a non-constant operand
// it needs constant), or "" when it can or op is not one of these.
func tflmMathRefusal(m *graph.Model, sg *graph.Subgraph, op *graph.Op) string {
	for _, a := range tflmMathAccepts[op.CodeName] {
		t := tflmMathOperand(sg, op, a.operand)
		if t == nil {
			continue
		}
		if !containsType(a.types, t.Type) {
			names := make([]string, len(a.types))
			for i, ty := range a.types {
				names[i] = ty.String()
			}
			return fmt.Sprintf("TFLM's %s kernel takes %s of %s only, not %s (%s)", op.CodeName, operandName(a.operand),
				strings.Join(names, ", "), t.Type, a.where)
		}
		if a.constant && !m.HasData(t) {
			return fmt.Sprintf("TFLM's %s kernel takes a constant %s only (%s)", op.CodeName, operandName(a.operand), a.where)
		}
	}
	in, out := tflmMathOperand(sg, op, "i0"), tflmMathOperand(sg, op, "o0")
	switch op.CodeName {
	case "BROADCAST_TO":
		if in != nil && in.Type == graph.String {
			return "TFLM's BROADCAST_TO kernel does not take a STRING input (broadcast_to.cc BroadcastToPrepare)"
		}
	case "LOG_SOFTMAX":
		// log_softmax.cc CalculateOpData: an INT8 output's scale is 16/256
		// and its zero point 127.
		if in != nil && in.Type == i8 && out != nil {
			if q := out.Quantization; q == nil || len(q.Scale) == 0 || q.Scale[0] != 16.0/256 || len(q.ZeroPoint) == 0 || q.ZeroPoint[0] != 127 {
				return "TFLM's LOG_SOFTMAX kernel takes an INT8 output of scale 1/16 and zero point 127 only (log_softmax.cc CalculateOpData)"
			}
		}
	case "PRELU":
		// prelu_common.cc PreluPrepare: an INT16 output needs an INT8 alpha.
		if a := tflmMathOperand(sg, op, "i1"); out != nil && a != nil && out.Type == i16 && a.Type != i8 {
			return fmt.Sprintf("TFLM's PRELU kernel takes an INT8 alpha with an INT16 output only, not %s (prelu_common.cc PreluPrepare)", a.Type)
		}
	}
	return ""
}

func containsType(ts []graph.ElementType, t graph.ElementType) bool {
	for _, u := range ts {
		if u == t {
			return true
		}
	}
	return false
}

// tflmMath is TFLM's data for the operators of this file: handled says
// op is one of them; ok that the data knows what its kernel takes (false
// too when TFLM cannot run it: tflmMathRefusal says why).
func tflmMath(m *graph.Model, sg *graph.Subgraph, op *graph.Op, ptr int64) (k TFLMKernel, ok, handled bool) {
	name := op.CodeName
	order, handled := tflmMathOperands[name]
	if !handled || op.Code == graph.Custom {
		return k, false, false
	}
	if tflmMathRefusal(m, sg, op) != "" {
		return k, false, true
	}
	if p, has := tflmMathParams[name]; has {
		k.Params = []TFLMAlloc{{p[0].on(ptr), p[1].on(ptr)}}
	}
	if d, has := tflmMathOpData[name]; has {
		k.Init = []TFLMAlloc{{d.on(ptr), tflmArenaAlign}}
	}
	temp := func(tok string) {
		ids := op.Inputs
		if tok[0] == 'o' {
			ids = op.Outputs
		}
		if i := int(tok[1] - '0'); i < len(ids) && ids[i] >= 0 {
			k.Prepare = append(k.Prepare, TFLMStep{Kind: TFLMTempTensor, Tensor: ids[i]})
		}
	}
	persist := func(bytes int64) {
		k.Prepare = append(k.Prepare, TFLMStep{Kind: TFLMPersistent, Alloc: TFLMAlloc{bytes, tflmArenaAlign}})
	}
	in := tflmMathOperand(sg, op, "i0")
	int8In := in != nil && in.Type == i8
	switch name {
	case "ADD_N":
		// add_n.cc CalculateOpData: input 0, the output, each further
		// input in turn, then for an INT8 output its OpData.
		temp("i0")
		temp("o0")
		for i := 1; i < len(op.Inputs); i++ {
			if op.Inputs[i] >= 0 {
				k.Prepare = append(k.Prepare, TFLMStep{Kind: TFLMTempTensor, Tensor: op.Inputs[i]})
			}
		}
		if o := tflmMathOperand(sg, op, "o0"); o != nil && o.Type == i8 {
			persist(addNOpData.on(ptr))
		}
		return k, true, true
	case "CUMSUM":
		// cumsum.cc CalculateOpData: input, axis, output, then for INT8
		// its OpData.
		temp("i0")
		temp("i1")
		temp("o0")
		if int8In {
			persist(cumsumOpData.on(ptr))
		}
		return k, true, true
	case "LOG_SOFTMAX":
		// log_softmax.cc CalculateOpData: input, output, then for INT8
		// its LogSoftmaxOpData.
		temp("i0")
		temp("o0")
		if int8In {
			persist(logSoftmaxOpData.on(ptr))
		}
		return k, true, true
	case "REDUCE_MAX", "REDUCE_MIN":
		// reduce_common.cc PrepareMinMaxHelper: PrepareSimple (input,
		// axis, and for INT8 input the output), then input, output,
		// axis.
		temp("i0")
		temp("i1")
		if int8In {
			temp("o0")
		}
		temp("i0")
		temp("o0")
		temp("i1")
		return k, true, true
	}
	for _, tok := range order {
		temp(tok)
	}
	return k, true, true
}
