package emit

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/heliac/heliac/graph"
)

// TestCMSISRegistration: the type-specialised registration an operator
// gets where the runtime may link TFLM's CMSIS-NN kernels, and the
// generic one where the specialised Eval would run other code than the
// generic Eval's dispatch (tflm_cmsisnn.go).
func TestCMSISRegistration(t *testing.T) {
	const (
		i8, i16, i4, f32, i32 = graph.Int8, graph.Int16, graph.Int4, graph.Float32, graph.Int32
		none                  = graph.ElementType(-1) // an omitted optional input
	)
	tests := []struct {
		name string
		op   string
		in   []graph.ElementType // operand types; none leaves the input out
		out  graph.ElementType
		perm int32 // TRANSPOSE's permutation length (input 1's shape)
		want string
	}{
		{"int8 convolution", "CONV_2D", []graph.ElementType{i8, i8, i32}, i8, 0, "CONV_2D_INT8"},
		{"int4 filters", "CONV_2D", []graph.ElementType{i8, i4, i32}, i8, 0, "CONV_2D_INT4"},
		{"int16 with a bias", "CONV_2D", []graph.ElementType{i16, i8, graph.Int64}, i16, 0, "CONV_2D_INT16"},
		{"int16 without a bias: the accumulator would differ", "CONV_2D", []graph.ElementType{i16, i8, none}, i16, 0, ""},
		{"int16 with two inputs", "CONV_2D", []graph.ElementType{i16, i8}, i16, 0, ""},
		{"float convolution", "CONV_2D", []graph.ElementType{f32, f32, f32}, f32, 0, ""},
		{"int16 depthwise without a bias", "DEPTHWISE_CONV_2D", []graph.ElementType{i16, i8}, i16, 0, "DEPTHWISE_CONV_2D_INT16"},
		{"int8 fully connected", "FULLY_CONNECTED", []graph.ElementType{i8, i8, i32}, i8, 0, "FULLY_CONNECTED_INT8"},
		{"int4 fully connected", "FULLY_CONNECTED", []graph.ElementType{i8, i4, none}, i8, 0, "FULLY_CONNECTED_INT4"},
		{"int16 add", "ADD", []graph.ElementType{i16, i16}, i16, 0, "ADD_INT16"},
		{"int32 add", "ADD", []graph.ElementType{i32, i32}, i32, 0, ""},
		{"int8 mul", "MUL", []graph.ElementType{i8, i8}, i8, 0, "MUL_INT8"},
		{"int16 mul: mul.h declares none", "MUL", []graph.ElementType{i16, i16}, i16, 0, ""},
		{"int8 maximum", "MAXIMUM", []graph.ElementType{i8, i8}, i8, 0, "MAXIMUM_INT8"},
		{"int8 pad", "PAD", []graph.ElementType{i8, i32}, i8, 0, "PAD_INT8"},
		{"padv2: none declared", "PADV2", []graph.ElementType{i8, i32, i8}, i8, 0, ""},
		{"int16 average pool", "AVERAGE_POOL_2D", []graph.ElementType{i16}, i16, 0, "AVERAGE_POOL_2D_INT16"},
		{"int8 max pool", "MAX_POOL_2D", []graph.ElementType{i8}, i8, 0, "MAX_POOL_2D_INT8"},
		{"int8 softmax", "SOFTMAX", []graph.ElementType{i8}, i8, 0, "SOFTMAX_INT8"},
		{"int8 to int16 softmax", "SOFTMAX", []graph.ElementType{i8}, i16, 0, "SOFTMAX_INT8_INT16"},
		{"int16 softmax", "SOFTMAX", []graph.ElementType{i16}, i16, 0, "SOFTMAX_INT16"},
		{"int8 svdf", "SVDF", []graph.ElementType{i8, i8, i16, i32, i16}, i8, 0, "SVDF_INT8"},
		{"float svdf", "SVDF", []graph.ElementType{f32, f32, f32, f32, f32}, f32, 0, ""},
		{"int8 transpose of 4 dimensions", "TRANSPOSE", []graph.ElementType{i8, i32}, i8, 4, "TRANSPOSE_INT8"},
		{"int8 transpose of 5: TransposeEvalInt8 refuses", "TRANSPOSE", []graph.ElementType{i8, i32}, i8, 5, ""},
		{"int8 transpose conv", "TRANSPOSE_CONV", []graph.ElementType{i32, i8, i8, i32}, i8, 0, "TRANSPOSE_CONV_INT8"},
		{"int8 batch matmul", "BATCH_MATMUL", []graph.ElementType{i8, i8}, i8, 0, "BATCH_MATMUL_INT8"},
		{"lstm: its Evals check for int16 weights", "UNIDIRECTIONAL_SEQUENCE_LSTM", []graph.ElementType{i8, i8}, i8, 0, ""},
		{"an operator CMSIS-NN does not replace", "RESHAPE", []graph.ElementType{i8}, i8, 0, ""},
	}
	for _, tt := range tests {
		sg := &graph.Subgraph{}
		op := &graph.Op{CodeName: tt.op, Code: 1}
		for i, ty := range tt.in {
			if ty == none {
				op.Inputs = append(op.Inputs, graph.NoTensor)
				continue
			}
			shape := []int32{1, 4}
			if tt.op == "TRANSPOSE" && i == 1 {
				shape = []int32{tt.perm}
			}
			op.Inputs = append(op.Inputs, graph.TensorID(len(sg.Tensors)))
			sg.Tensors = append(sg.Tensors, graph.Tensor{Type: ty, Shape: shape})
		}
		op.Outputs = []graph.TensorID{graph.TensorID(len(sg.Tensors))}
		sg.Tensors = append(sg.Tensors, graph.Tensor{Type: tt.out, Shape: []int32{1, 4}})
		reg, header, ok := cmsisRegistration(sg, op)
		if tt.want == "" {
			assert.False(t, ok, "%s: %s", tt.name, reg)
			continue
		}
		if assert.True(t, ok, tt.name) {
			assert.Equal(t, "tflite::Register_"+tt.want+"()", reg, tt.name)
			assert.Equal(t, cmsisSpecialisations[tt.op].header, header, tt.name)
		}
	}
}

// TestCMSISRegistrationsLink: every specialised registration the rules
// can name is declared by its header and defined by TFLM's host CMSIS-NN
// library (with -DCMSIS_NN), and compiles against the reference library
// too, where the header defines it as the generic one.
func TestCMSISRegistrationsLink(t *testing.T) {
	names := map[string][]string{ // the suffixes each rule can give
		"ADD": {"INT8", "INT16"}, "CONV_2D": {"INT8", "INT4", "INT16"}, "DEPTHWISE_CONV_2D": {"INT8", "INT4", "INT16"},
		"FULLY_CONNECTED": {"INT8", "INT4", "INT16"}, "MUL": {"INT8"}, "MAXIMUM": {"INT8"}, "MINIMUM": {"INT8"}, "PAD": {"INT8"},
		"AVERAGE_POOL_2D": {"INT8", "INT16"}, "MAX_POOL_2D": {"INT8", "INT16"}, "BATCH_MATMUL": {"INT8", "INT16"},
		"SOFTMAX": {"INT8", "INT8_INT16", "INT16"}, "SVDF": {"INT8"}, "TRANSPOSE": {"INT8"}, "TRANSPOSE_CONV": {"INT8"},
	}
	var ops []string
	for op := range cmsisSpecialisations {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	assert.Len(t, names, len(ops), "a suffix list for every rule")
	var src strings.Builder
	// As the runtime includes them (tflmSource): micro_common.h and
	// micro_context.h first, warnings of unused parameters off.
	src.WriteString("#include <cstdarg>\n#include <cstdio>\n#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored \"-Wunused-parameter\"\n")
	for _, h := range append(slices.Clone(tflmRuntimeHeaders), ops...) {
		if s, ok := cmsisSpecialisations[h]; ok {
			h = s.header
		}
		fmt.Fprintf(&src, "#include %q\n", h)
	}
	src.WriteString("#pragma GCC diagnostic pop\n")
	src.WriteString("int touch(void) {\n  int n = 0;\n")
	for _, op := range ops {
		for _, s := range names[op] {
			fmt.Fprintf(&src, "  { TFLMRegistration r = tflite::Register_%s_%s(); n += r.invoke != nullptr; }\n", op, s)
		}
	}
	src.WriteString("  return n;\n}\n")
	src.WriteString(`extern "C" void DebugLog(const char* format, va_list args) { vfprintf(stderr, format, args); }
extern "C" int DebugVsnprintf(char* buf, size_t n, const char* format, va_list args) { return vsnprintf(buf, n, format, args); }
int main() { return touch() > 0 ? 0 : 1; }
`)
	for _, lib := range []struct {
		dir     string
		defines []string
	}{{"host-x86_64", nil}, {"host-x86_64-cmsis-nn", []string{"-DCMSIS_NN"}}} {
		t.Run(lib.dir, func(t *testing.T) { compileAndLink(t, src.String(), lib.dir, lib.defines...) })
	}
}
