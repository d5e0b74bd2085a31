package emit

import (
	_ "embed" // the runtime's fixed C++
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
)

// Runtime says whether the C module runs the model (COptions.Runtime).
type Runtime string

// The runtimes C writes.
const (
	// RuntimeNone writes the plan's tables and arenas only; "" is the same.
	RuntimeNone Runtime = "none"
	// RuntimeTFLM also writes <prefix>.tflm.cc, C++ that runs the model
	// with TFLM's kernels on the plan (docs/c-module.md, "The runtime").
	RuntimeTFLM Runtime = "tflm"
)

// Runtimes lists the runtimes COptions.Runtime accepts.
func Runtimes() []string { return []string{string(RuntimeNone), string(RuntimeTFLM)} }

func (r Runtime) check() error {
	switch r {
	case "", RuntimeNone, RuntimeTFLM:
		return nil
	}
	return fmt.Errorf("emit: unknown runtime %q (known: %s)", string(r), strings.Join(Runtimes(), ", "))
}

// on reports whether the module carries the TFLM runtime.
func (r Runtime) on() bool { return r == RuntimeTFLM }

// TFLMSuffix ends the name of the runtime's source, <prefix>.tflm.cc.
const TFLMSuffix = ".tflm.cc"

//go:embed tflm_types.cc.in
var tflmTypes string

//go:embed tflm_runtime.cc.in
var tflmRuntime string

// tflmStatuses are the status codes the runtime adds after cStatuses.
var tflmStatuses = []struct{ name, doc string }{
	{"ERR_KERNEL", "init or invoke: a kernel's init, prepare or invoke failed (<prefix>_status_message says which)"},
	{"ERR_KERNEL_STATE", "init: the runtime's budget for kernel data is too small (the message gives the need)"},
	{"ERR_SCRATCH", "init: a kernel asked for scratch the plan did not give it"},
	{"ERR_NOT_INITIALIZED", "invoke: no successful init before"},
}

// tflmTypeNames maps TFLite's tensor types to TfLiteType's enumerators
// (tensorflow/lite/core/api/flatbuffer_conversions.cc ConvertTensorType).
var tflmTypeNames = map[graph.ElementType]string{
	graph.Float32: "kTfLiteFloat32", graph.Float16: "kTfLiteFloat16", graph.Int32: "kTfLiteInt32",
	graph.Uint8: "kTfLiteUInt8", graph.Int64: "kTfLiteInt64", graph.String: "kTfLiteString",
	graph.Bool: "kTfLiteBool", graph.Int16: "kTfLiteInt16", graph.Complex64: "kTfLiteComplex64",
	graph.Int8: "kTfLiteInt8", graph.Float64: "kTfLiteFloat64", graph.Complex128: "kTfLiteComplex128",
	graph.Uint64: "kTfLiteUInt64", graph.Resource: "kTfLiteResource", graph.Variant: "kTfLiteVariant",
	graph.Uint32: "kTfLiteUInt32", graph.Uint16: "kTfLiteUInt16", graph.Int4: "kTfLiteInt4",
	graph.BFloat16: "kTfLiteBFloat16", graph.Int2: "kTfLiteInt2", graph.Uint4: "kTfLiteUInt4",
	graph.Float8E4M3: "kTfLiteFloat8E4M3FN", graph.Float8E5M2: "kTfLiteFloat8E5M2",
}

// tflmGen is what the runtime's source is built from.
type tflmGen struct {
	*cgen
	w        *cwriter
	firstOp  []int // each subgraph's first row in kOps
	ops      []tflmOp
	regs     []string
	regOf    map[string]int
	lib      *kernels.Library  // the kernels the plan was made for (PlanKernels)
	builds   []TFLMKernelBuild // its kernel builds and their kernel data
	handles  int               // scratch requests the kernels may make in all
	slots    int               // int32 slots for resource handles without bytes
	maxTemps int
}

// tflmSource renders <prefix>.tflm.cc: the generated tables of the model
// and the plan, then the fixed runtime (tflm_runtime.cc.in).
func (g *cgen) tflmSource() ([]byte, error) {
	t := &tflmGen{cgen: g, w: &cwriter{}, regOf: map[string]int{}}
	if err := t.collect(); err != nil {
		return nil, err
	}
	t.prologue()
	t.tables()
	w := t.w
	w.WriteString("\n")
	w.WriteString(tflmRuntime)
	p := g.prefix
	w.f("\n/* The module's runtime API (%s.h). */\n", p)
	w.f("extern \"C\" void %s_runtime_stop(void) { Stop(); }\n", p)
	w.f("extern \"C\" %s_status_t %s_runtime_start(void) { return Start(); }\n", p, p)
	w.f("extern \"C\" %s_status_t %s_invoke(void) { return Invoke(); }\n", p, p)
	w.f("extern \"C\" const char *%s_status_message(void) { return state.message; }\n", p)
	return w.Bytes(), nil
}

// collect looks up every operator's kernel and sizes the runtime's budgets.
func (t *tflmGen) collect() error {
	m := t.m
	var err error
	if t.lib, err = PlanKernels(t.p); err != nil {
		return fmt.Errorf("emit: runtime: %w", err)
	}
	// Where the application may link TFLM's CMSIS-NN kernels, operators
	// name their type-specialised registrations (tflm_cmsisnn.go).
	cmsis := slices.ContainsFunc(t.lib.Members(), func(l *kernels.Library) bool { return l.Name == kernels.CMSISNN })
	n := 0
	for si := range m.Subgraphs {
		t.firstOp = append(t.firstOp, n)
		sg := &m.Subgraphs[si]
		n += len(sg.Ops)
		for oi := range sg.Ops {
			op := &sg.Ops[oi]
			k, err := tflmOpOf(m, graph.SubgraphIndex(si), op)
			if err != nil {
				return fmt.Errorf("emit: runtime: %w", err)
			}
			if reg, header, ok := cmsisRegistration(sg, op); ok && cmsis {
				k.Register, k.Headers = reg, append(k.Headers, header)
			}
			t.ops = append(t.ops, k)
			if _, ok := t.regOf[k.Register]; !ok {
				t.regOf[k.Register] = len(t.regs)
				t.regs = append(t.regs, k.Register)
			}
			t.maxTemps = max(t.maxTemps, len(op.Inputs)+len(op.Outputs)+len(op.Intermediates))
		}
	}
	_, space := PrepareSpace(t.p)
	if t.builds, err = TFLMKernelState(m, t.lib, space); err != nil {
		return err
	}
	t.handles = scratchHandles(m, t.lib, len(t.kernel))
	if n > math.MaxInt32/2 {
		return fmt.Errorf("emit: runtime: %d operators are too many", n)
	}
	return nil
}

// handleVariables gives each VAR_HANDLE operator (by its row in kOps) the
// kVariables row of the variable it names by liveness.Variable's rule,
// -1 for a handle that may name several (liveness.HandleNames). The
// runtime learns which TFLM resource id a handle's prepare gave it and so
// which of the plan's variables that id is: TFLM tells variables by
// container and shared_name, and may have neither
// (micro_resource_variable.cc FindId @90b983c), so names cannot say.
func (t *tflmGen) handleVariables() map[int]int {
	names := liveness.HandleNames(t.m)
	out := map[int]int{}
	for si := range t.m.Subgraphs {
		for oi := range t.m.Subgraphs[si].Ops {
			op := &t.m.Subgraphs[si].Ops[oi]
			if op.Code != graph.VarHandle || len(op.Outputs) != 1 {
				continue
			}
			row := -1
			if n := names[graph.TensorRef{Subgraph: graph.SubgraphIndex(si), Tensor: op.Outputs[0]}]; len(n) == 1 {
				for i, v := range t.vars {
					if v.Key.Variable == n[0] {
						row = i
					}
				}
			}
			out[t.firstOp[si]+oi] = row
		}
	}
	return out
}

func alignUp(x, a int64) int64 { return (x + a - 1) / a * a }

// tflmRuntimeHeaders are TFLM's headers every runtime includes, before
// its operators' (tflmOp.Headers).
var tflmRuntimeHeaders = []string{
	"tensorflow/lite/c/builtin_op_data.h",
	"tensorflow/lite/c/common.h",
	"tensorflow/lite/micro/micro_common.h",
	"tensorflow/lite/micro/micro_context.h",
	"tensorflow/lite/micro/micro_graph.h",
	"tensorflow/lite/micro/micro_resource_variable.h",
}

// prologue writes the banner, the includes and the glue to the module.
func (t *tflmGen) prologue() {
	w, p, P := t.w, t.prefix, t.macro
	w.WriteString(cGeneratedLine)
	w.f("/* Memory plan for model %s; plan hash %s. */\n", commentText(t.meta.ModelName), t.hash)
	w.f(`/*
 * The runtime of %[1]s.c: runs the model with TensorFlow Lite Micro's kernels
 * (their TFLMRegistration init, prepare and invoke) on heliac's plan, with no
 * interpreter, allocator or flatbuffer. %[1]s_init ends by calling every
 * kernel's init and prepare; %[1]s_invoke runs the model once.
 *
 * Build it as C++17 with TFLM's headers and link TFLM's kernel library
 * (docs/c-module.md, "The runtime"):
 *   g++ -std=c++17 -fno-rtti -fno-exceptions -DTF_LITE_STATIC_MEMORY \
 *       -I TFLM/include -c %[1]s.tflm.cc
 * with -DCMSIS_NN for TFLM's CMSIS-NN kernels, and define DebugLog and
 * DebugVsnprintf in the application. The plan is for %[2]s, the kernel
 * builds %[3]s.
 */
`, p, commentText(t.lib.String()), commentText(buildNames(t.builds)))
	w.WriteString("\n#include <cstdarg>\n#include <cstddef>\n#include <cstdint>\n#include <cstdio>\n#include <cstring>\n#include <new>\n\n")
	w.f("#include \"%s.h\"\n", p)
	headers := slices.Clone(tflmRuntimeHeaders)
	for _, k := range t.ops {
		for _, h := range k.Headers {
			if !slices.Contains(headers, h) {
				headers = append(headers, h)
			}
		}
	}
	// TFLM's headers are not all clean under -Wextra (unused parameters in
	// inline virtual functions); users may not give them as -isystem.
	w.WriteString("#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored \"-Wunused-parameter\"\n")
	for _, h := range headers {
		w.f("#include \"%s\"\n", h)
	}
	w.WriteString("#pragma GCC diagnostic pop\n")
	w.WriteString(`
// TFLM's libraries are built with TF_LITE_STATIC_MEMORY (the layout of
// TfLiteTensor and TfLiteNode) and without USE_TFLM_COMPRESSION (the layout
// of MicroContext): code built otherwise reads garbage.
#ifndef TF_LITE_STATIC_MEMORY
#error "define TF_LITE_STATIC_MEMORY, as TFLM's kernel library was built"
#endif
#ifdef USE_TFLM_COMPRESSION
#error "TFLM's kernel library was built without USE_TFLM_COMPRESSION"
#endif
`)
	t.kernelBuildText()
	w.WriteString("\n")
	w.f("/* Where the kernels' persistent data lies: define %s_KERNEL_STATE_ATTR to\n"+
		" * place it in a section. */\n", P)
	w.f("#ifndef %s_KERNEL_STATE_ATTR\n#define %s_KERNEL_STATE_ATTR\n#endif\n", P, P)
	w.f("#define HELIAC_KERNEL_STATE_ATTR %s_KERNEL_STATE_ATTR\n", P)
	w.f("/* Where the kernel data heliac computed lies (read only, with the model's\n"+
		" * constants): define %s_PREPARED_ATTR to place it in a section. */\n", P)
	w.f("#ifndef %s_PREPARED_ATTR\n#define %s_PREPARED_ATTR\n#endif\n", P, P)
	w.f("#define HELIAC_PREPARED_ATTR %s_PREPARED_ATTR\n\n", P)
	w.f("extern \"C\" void %s_runtime_stop(void);\nextern \"C\" %s_status_t %s_runtime_start(void);\n\n", p, p, p)
	w.WriteString(tflmTypes)
}

// tables writes the model's and the plan's data.
func (t *tflmGen) tables() {
	w, p, P := t.w, t.prefix, t.macro
	nOps := len(t.ops)
	w.WriteString("\nnamespace {\n\n")
	w.f("using Status = %s_status_t;\n", p)
	for _, s := range []struct{ name, macro string }{{"kStatusOk", "OK"}, {"kStatusKernel", "ERR_KERNEL"},
		{"kStatusKernelState", "ERR_KERNEL_STATE"}, {"kStatusScratch", "ERR_SCRATCH"}, {"kStatusNotInitialized", "ERR_NOT_INITIALIZED"}} {
		w.f("constexpr Status %s = %s_%s;\n", s.name, P, s.macro)
	}
	w.f("\nconstexpr int kSubgraphCount = %d;\n", len(t.m.Subgraphs))
	w.f("constexpr int kOpCount = %d;\nconstexpr int kOpSlots = %d;\n", nOps, max(nOps, 1))
	w.WriteString("// Temporary TfLiteTensors held at once: at most an operator's operands,\n// some twice (TANH's Prepare).\n")
	w.f("constexpr int kTempTensorCount = %d;\n", t.maxTemps+4)
	w.f("constexpr int kVariableCount = %d;\n", len(t.vars))
	nHandles := 0
	for _, sg := range t.m.Subgraphs {
		for _, op := range sg.Ops {
			if op.CodeName == "VAR_HANDLE" {
				nHandles++
			}
		}
	}
	w.f("// At most one resource variable per VAR_HANDLE operator.\nconstexpr int kResourceVariableMax = %d;\n", nHandles)
	t.kernelStateText()
	t.preparedText()
	t.scratchText()
	// Glue to the module's tables.
	w.f("\nuint8_t* TensorBytes(int row) {\n  return const_cast<uint8_t*>(%s_tensor_data(static_cast<size_t>(row)));\n}\n", p)
	if len(t.kernel) > 0 {
		w.f("size_t ScratchSize(int row) { return %s_kernel_scratch[row].size; }\n", p)
	} else {
		w.WriteString("size_t ScratchSize(int) { return 0; }\n")
	}
	w.f("uint8_t* ScratchBytes(int row) { return %s_kernel_scratch_data(static_cast<size_t>(row)); }\n", p)
	w.WriteString("\n// The plan's resource variables: each one's name, size and bytes.\n")
	w.f("const VariableInfo kVariables[%d] = {\n", max(len(t.vars), 1))
	for _, v := range t.vars {
		w.f("    {%s, %d},\n", cString(v.Key.String()), v.Size)
	}
	if len(t.vars) == 0 {
		w.WriteString("    {\"\", 0},\n")
	}
	w.WriteString("};\nuint8_t* VariableBytes(int i) {\n  switch (i) {\n")
	for i, v := range t.vars {
		w.f("    case %d:\n      return %s_arena_data(%s) + %d;\n", i, p, t.arenas[v.arena].enum, v.Offset)
	}
	w.WriteString("  }\n  return nullptr;\n}\n")

	t.tensorTables()
	t.opTables()
	w.WriteString("\n}  // namespace\n")
}

// tensorTables writes every subgraph's tensors: shapes, quantization, the
// TensorInfo rows and the TfLiteEvalTensors.
func (t *tflmGen) tensorTables() {
	w := t.w
	for si := range t.m.Subgraphs {
		sg := &t.m.Subgraphs[si]
		w.f("\n// Subgraph %d %s.\n", si, commentText(sg.Name))
		for ti := range sg.Tensors {
			tn := &sg.Tensors[ti]
			w.f("const IntArray<%d> dims_%d_%d = %s;\n", len(tn.Shape), si, ti, intArrayInit(tn.Shape))
			if q := tflmQuant(tn); q != nil {
				var sc, zp []string
				for i, s := range q.Scale {
					sc = append(sc, cFloat(s))
					z := q.ZeroPoint[0]
					if len(q.ZeroPoint) == len(q.Scale) {
						z = q.ZeroPoint[i]
					}
					zp = append(zp, strconv.FormatInt(int64(int32(z)), 10))
				}
				w.f("const FloatArray<%d> scales_%d_%d = {%d, {%s}};\n", len(sc), si, ti, len(sc), strings.Join(sc, ", "))
				w.f("const IntArray<%d> zero_points_%d_%d = {%d, {%s}};\n", len(zp), si, ti, len(zp), strings.Join(zp, ", "))
			}
		}
		if len(sg.Tensors) > 0 {
			w.f("const TensorInfo tensors_%d[%d] = {\n", si, len(sg.Tensors))
			w.WriteString("    // dims, scales, zero_points, scale, zero_point, quantized_dimension, row, slot, bytes, type, flags, reset_value\n")
			for ti := range sg.Tensors {
				w.f("    %s, // [%d] %s\n", t.tensorInfo(graph.SubgraphIndex(si), graph.TensorID(ti)), ti, commentText(sg.Tensors[ti].Name))
			}
			w.WriteString("};\n")
			w.f("TfLiteEvalTensor evals_%d[%d];\n", si, len(sg.Tensors))
		}
		intList := func(name string, ids []int) {
			if len(ids) == 0 {
				return
			}
			w.f("const int %s[%d] = {%s};\n", name, len(ids), joinInts(ids))
		}
		intList(fmt.Sprintf("inputs_%d", si), tensorInts(sg.Inputs))
		intList(fmt.Sprintf("outputs_%d", si), tensorInts(sg.Outputs))
		order, skipped := t.invokeOrder(graph.SubgraphIndex(si))
		if len(skipped) > 0 {
			w.f("// Views the plan lays on their input's bytes, whose invoke would do\n// nothing (tflm_views.go), left out of order_%d: %s.\n", si, strings.Join(skipped, ", "))
		}
		intList(fmt.Sprintf("order_%d", si), order)
	}
	if t.slots > 0 {
		w.f("\n// Resource handles the plan gives no bytes: TFLM's 4 bytes each.\nint32_t resource_slots[%d];\n", t.slots)
	} else {
		w.WriteString("\nint32_t resource_slots[1];\n")
	}
	w.f("\nconst SubgraphInfo kSubgraphs[kSubgraphCount] = {\n")
	for si := range t.m.Subgraphs {
		sg := &t.m.Subgraphs[si]
		ref := func(name string, n int) string {
			if n == 0 {
				return "nullptr"
			}
			return fmt.Sprintf("%s_%d", name, si)
		}
		order, _ := t.invokeOrder(graph.SubgraphIndex(si))
		nOrder := len(order)
		w.f("    {%s, %s, %s, %s, %s, %d, %d, %d, %d, %d, %d},\n", ref("tensors", len(sg.Tensors)), ref("evals", len(sg.Tensors)),
			ref("inputs", len(sg.Inputs)), ref("outputs", len(sg.Outputs)), ref("order", nOrder),
			len(sg.Tensors), len(sg.Inputs), len(sg.Outputs), len(sg.Ops), nOrder, t.firstOp[si])
	}
	w.WriteString("};\n")
}

// invokeOrder lists the operators of subgraph si that Invoke runs, in the
// plan's order: all but the views skipsInvoke leaves out, which it names
// ("5 RESHAPE").
func (t *tflmGen) invokeOrder(si graph.SubgraphIndex) (order []int, skipped []string) {
	if int(si) >= len(t.p.Schedule.Order) {
		return nil, nil
	}
	for _, oi := range t.p.Schedule.Order[si] {
		if t.skipsInvoke(si, oi, t.firstOp[si]+int(oi)) {
			skipped = append(skipped, fmt.Sprintf("%d %s", oi, t.m.Subgraphs[si].Ops[oi].CodeName))
			continue
		}
		order = append(order, int(oi))
	}
	return order, skipped
}

// tflmQuant returns a tensor's quantization as TFLM keeps it: only with
// both scales and zero points.
func tflmQuant(tn *graph.Tensor) *graph.Quantization {
	if q := tn.Quantization; q != nil && len(q.Scale) > 0 && len(q.ZeroPoint) > 0 {
		return q
	}
	return nil
}

// tensorInfo is tensor ti of subgraph si's TensorInfo initializer.
func (t *tflmGen) tensorInfo(si graph.SubgraphIndex, ti graph.TensorID) string {
	tn := t.m.Tensor(si, ti)
	scales, zps, scale, zp, qdim := "nullptr", "nullptr", "0.0f", int64(0), int32(0)
	if q := tflmQuant(tn); q != nil {
		scales, zps = fmt.Sprintf("&scales_%d_%d", si, ti), fmt.Sprintf("&zero_points_%d_%d", si, ti)
		scale, zp, qdim = cFloat(q.Scale[0]), int64(int32(q.ZeroPoint[0])), q.QuantizedDim
	}
	row, slot := -1, -1
	if r, ok := t.row[graph.TensorRef{Subgraph: si, Tensor: ti}]; ok {
		row = r
	} else if tn.Type == graph.Resource {
		slot = t.slots
		t.slots += int(max(elements(tn.Shape), 1))
	}
	var flags []string
	if tn.IsVariable {
		flags = append(flags, "kTensorVariable")
	}
	if t.m.HasData(tn) {
		flags = append(flags, "kTensorConstant")
	}
	flag := "0"
	if len(flags) > 0 {
		flag = strings.Join(flags, " | ")
	}
	reset := 0
	if tn.Type == graph.Int8 && tn.Quantization != nil && len(tn.Quantization.ZeroPoint) > 0 {
		reset = int(uint8(int8(tn.Quantization.ZeroPoint[0])))
	}
	bytes := tn.Size
	if tn.Type == graph.Resource {
		bytes = 4 * elements(tn.Shape) // TFLM's TfLiteTypeSizeOf (memory_helpers.cc): an int32 id
	}
	typ, ok := tflmTypeNames[tn.Type]
	if !ok {
		typ = "kTfLiteNoType"
	}
	return fmt.Sprintf("{&dims_%d_%d, %s, %s, %s, %d, %d, %d, %d, %du, %s, %s, %d}", si, ti, scales, zps, scale, zp, qdim, row, slot,
		bytes, typ, flag, reset)
}

func elements(shape []int32) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= int64(d)
	}
	return n
}

// opTables writes every operator's operands, params and custom options, the
// registrations and kOps.
func (t *tflmGen) opTables() {
	w := t.w
	scratch := t.scratchRows()
	handles := t.handleVariables()
	w.WriteString("\n// The operators, in model order, subgraph by subgraph.\n")
	var rowsText []string
	for si := range t.m.Subgraphs {
		sg := &t.m.Subgraphs[si]
		for oi := range sg.Ops {
			op := &sg.Ops[oi]
			i := t.firstOp[si] + oi
			k := t.ops[i]
			w.f("// [%d] operator %d:%d %s\n", i, si, oi, commentText(op.Name()))
			w.f("const IntArray<%d> in_%d = %s;\n", len(op.Inputs), i, intArrayInit(tensorInts(op.Inputs)))
			w.f("const IntArray<%d> out_%d = %s;\n", len(op.Outputs), i, intArrayInit(tensorInts(op.Outputs)))
			im := "nullptr"
			if len(op.Intermediates) > 0 {
				w.f("const IntArray<%d> im_%d = %s;\n", len(op.Intermediates), i, intArrayInit(tensorInts(op.Intermediates)))
				im = fmt.Sprintf("&im_%d", i)
			}
			params := "nullptr"
			if k.ParamsType != "" {
				w.f("%s params_%d = %s;\n", k.ParamsType, i, k.ParamsInit)
				params = fmt.Sprintf("&params_%d", i)
			}
			custom := "nullptr"
			if k.Custom != nil {
				w.f("const uint8_t custom_%d[%d] = {\n", i, max(len(k.Custom), 1))
				writeCHex(&w.Buffer, k.Custom)
				if len(k.Custom) == 0 {
					w.WriteString("\t0,\n")
				}
				w.WriteString("};\n")
				custom = fmt.Sprintf("custom_%d", i)
			}
			sc := scratch[graph.OpRef{Subgraph: graph.SubgraphIndex(si), Op: graph.OpIndex(oi)}]
			variable, ok := handles[i]
			if !ok {
				variable = -1
			}
			rowsText = append(rowsText, fmt.Sprintf("    {%s, %s, %s, &in_%d, &out_%d, %s, %d, %d, %d, %d, %d, %d, %d, %t, %t},",
				cString(op.Name()), params, custom, i, i, im, len(k.Custom), t.regOf[k.Register], sc.first, sc.count, variable, si, oi,
				ok, op.CodeName == "ASSIGN_VARIABLE" && op.Code != graph.Custom))
		}
	}
	w.WriteString("\nconst OpInfo kOps[kOpSlots] = {\n")
	w.WriteString("    // name, builtin_data, custom_data, inputs, outputs, intermediates, custom_size, registration,\n" +
		"    // scratch_first, scratch_count, variable, subgraph, index, var_handle, assign_variable\n")
	for _, r := range rowsText {
		w.WriteString(r + "\n")
	}
	if len(rowsText) == 0 {
		w.WriteString("    {\"\", nullptr, nullptr, nullptr, nullptr, nullptr, 0, 0, 0, 0, -1, 0, 0, false, false},\n")
	}
	w.WriteString("};\n")
	w.f("\nTFLMRegistration registrations[%d];\n", max(len(t.regs), 1))
	w.WriteString("void LoadRegistrations() {\n")
	for i, r := range t.regs {
		w.f("  registrations[%d] = %s;\n", i, r)
	}
	w.WriteString("}\n")
}

// intArrayInit is an IntArray's initializer: its size, then its values.
func intArrayInit[T int | int32](xs []T) string {
	if len(xs) == 0 {
		return "{0}"
	}
	return fmt.Sprintf("{%d, {%s}}", len(xs), joinInts(xs))
}

func tensorInts(ids []graph.TensorID) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

func joinInts[T int | int32 | int64](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.FormatInt(int64(x), 10)
	}
	return strings.Join(s, ", ")
}

// cFloat writes a float32 exactly, as a hexadecimal float literal.
func cFloat(f float32) string {
	switch {
	case math.IsNaN(float64(f)):
		return "__builtin_nanf(\"\")"
	case math.IsInf(float64(f), 1):
		return "__builtin_inff()"
	case math.IsInf(float64(f), -1):
		return "(-__builtin_inff())"
	}
	return strconv.FormatFloat(float64(f), 'x', -1, 32) + "f"
}
