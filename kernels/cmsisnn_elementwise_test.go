package kernels_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// placements lists a library's placements for the operator as
// "NAME output 0 over input i (overlap) [lo, hi]".
func placements(lib *kernels.Library, m *graph.Model, op graph.Op) []string {
	var got []string
	for _, p := range lib.InPlace(m, 0, &op) {
		got = append(got, fmt.Sprintf("%s [%d, %d]", p.Contract, p.Lo, p.Hi))
	}
	return got
}

// oneOp is a one-operator model over the given tensors.
func oneOp(code graph.Opcode, tensors []graph.Tensor, inputs []graph.TensorID, out graph.TensorID, w *graph.Window) (*graph.Model, graph.Op) {
	op := graph.Op{Code: code, Inputs: inputs, Outputs: []graph.TensorID{out}, Window: w}
	return &graph.Model{Buffers: []graph.Buffer{{}}, Subgraphs: []graph.Subgraph{{Tensors: tensors, Ops: []graph.Op{op}}}}, op
}

// pool is a pool's window: f × f, stride s.
func pool(f, s int32, same bool) *graph.Window {
	w := &graph.Window{Padding: graph.PaddingValid, StrideW: s, StrideH: s, DilationW: 1, DilationH: 1, FilterW: f, FilterH: f}
	if same {
		w.Padding = graph.PaddingSame
	}
	return w
}

// TestCMSISNNElementwiseContracts: the windows of CMSIS-NN's own
// elementwise, pooling and padding functions, worked by hand, on every
// code path (the rules do not depend on it), next to the reference
// kernels' and any's (their intersection).
func TestCMSISNNElementwiseContracts(t *testing.T) {
	ref, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	cmsis, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	anyLib, err := kernels.Lookup(kernels.Any)
	require.NoError(t, err)
	const add, mul, softmax, maximum, minimum graph.Opcode = 0, 18, 25, 55, 57
	q := func(t graph.Tensor) graph.Tensor {
		t.Quantization = &graph.Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{0}}
		return t
	}
	binary := func(code graph.Opcode, typ graph.ElementType, a, b, out []int32) (*graph.Model, graph.Op) {
		return oneOp(code, []graph.Tensor{q(tensor(typ, a...)), q(tensor(typ, b...)), q(tensor(typ, out...))}, []graph.TensorID{0, 1}, 2, nil)
	}
	unary := func(code graph.Opcode, in, out graph.Tensor, w *graph.Window) (*graph.Model, graph.Op) {
		return oneOp(code, []graph.Tensor{in, out}, []graph.TensorID{0}, 1, w)
	}
	both := func(name string, lo, hi int) []string {
		return []string{fmt.Sprintf("%s output 0 over input 0 (exact) [%d, %d]", name, lo, hi),
			fmt.Sprintf("%s output 0 over input 1 (exact) [%d, %d]", name, lo, hi)}
	}
	tests := []struct {
		name       string
		build      func() (*graph.Model, graph.Op)
		ref, cmsis []string // cmsis: on every path, and any's (the intersection)
	}{
		{"ADD int8, one shape: arm_elementwise_add_s8, either input",
			func() (*graph.Model, graph.Op) {
				return binary(add, graph.Int8, []int32{1, 3, 5, 7}, []int32{1, 3, 5, 7}, []int32{1, 3, 5, 7})
			},
			both("ADD", 0, 0), both("ADD", 0, 0)},
		{"ADD int8 broadcasting: the reference loop, the input of the output's shape",
			func() (*graph.Model, graph.Op) {
				return binary(add, graph.Int8, []int32{1, 3, 5, 7}, []int32{1, 1, 1, 7}, []int32{1, 3, 5, 7})
			},
			both("ADD", 0, 0)[:1], both("ADD", 0, 0)[:1]},
		{"MUL int16, one shape: arm_elementwise_mul_s16",
			func() (*graph.Model, graph.Op) {
				return binary(mul, graph.Int16, []int32{5, 7}, []int32{5, 7}, []int32{5, 7})
			},
			both("MUL", 0, 0), both("MUL", 0, 0)},
		{"MUL int8, one shape in another rank: no broadcast, arm_elementwise_mul_s8",
			func() (*graph.Model, graph.Op) {
				return oneOp(mul, []graph.Tensor{q(tensor(graph.Int8, 1, 35)), q(tensor(graph.Int8, 35)), q(tensor(graph.Int8, 1, 35))},
					[]graph.TensorID{0, 1}, 2, nil)
			},
			both("MUL", 0, 0)[:1], both("MUL", 0, 0)[:1]},
		{"MAXIMUM int8: arm_maximum_s8",
			func() (*graph.Model, graph.Op) {
				return binary(maximum, graph.Int8, []int32{1, 3, 5, 7}, []int32{1, 3, 5, 7}, []int32{1, 3, 5, 7})
			},
			both("MAXIMUM", 0, 0), both("MAXIMUM", 0, 0)},
		{"MINIMUM int8 broadcasting: the input of the output's shape, walked with it",
			func() (*graph.Model, graph.Op) {
				return binary(minimum, graph.Int8, []int32{1, 1, 5, 1}, []int32{1, 3, 5, 7}, []int32{1, 3, 5, 7})
			},
			both("MINIMUM", 0, 0)[1:], both("MINIMUM", 0, 0)[1:]},
		{"MAXIMUM int8 of five dimensions: FillVariableShape takes four, no contract for CMSIS-NN",
			func() (*graph.Model, graph.Op) {
				return binary(maximum, graph.Int8, []int32{1, 1, 3, 5, 7}, []int32{1, 1, 3, 5, 7}, []int32{1, 1, 3, 5, 7})
			},
			both("MAXIMUM", 0, 0), nil},
		{"MINIMUM int16: the reference kernel on CMSIS-NN too",
			func() (*graph.Model, graph.Op) {
				return binary(minimum, graph.Int16, []int32{2, 9}, []int32{2, 9}, []int32{2, 9})
			},
			both("MINIMUM", 0, 0), both("MINIMUM", 0, 0)},
		{"SOFTMAX int8: arm_softmax_s8",
			func() (*graph.Model, graph.Op) {
				return unary(softmax, tensor(graph.Int8, 1, 3, 37), tensor(graph.Int8, 1, 3, 37), nil)
			},
			[]string{"SOFTMAX output 0 over input 0 (exact) [0, 0]"}, []string{"SOFTMAX output 0 over input 0 (exact) [0, 0]"}},
		{"SOFTMAX int16: arm_softmax_s16",
			func() (*graph.Model, graph.Op) {
				return unary(softmax, tensor(graph.Int16, 3, 37), tensor(graph.Int16, 3, 37), nil)
			},
			[]string{"SOFTMAX output 0 over input 0 (exact) [0, 0]"}, []string{"SOFTMAX output 0 over input 0 (exact) [0, 0]"}},
		{"SOFTMAX float: the reference kernel on CMSIS-NN too",
			func() (*graph.Model, graph.Op) {
				return unary(softmax, tensor(graph.Float32, 1, 10), tensor(graph.Float32, 1, 10), nil)
			},
			[]string{"SOFTMAX output 0 over input 0 (exact) [0, 0]"}, []string{"SOFTMAX output 0 over input 0 (exact) [0, 0]"}},
		{"SOFTMAX int8 to int16: output elements twice the input's",
			func() (*graph.Model, graph.Op) {
				return unary(softmax, tensor(graph.Int8, 1, 10), tensor(graph.Int16, 1, 10), nil)
			},
			nil, nil},
		// 1x3x3x2, 2x2 VALID stride 1: pixels (0,0) (0,1) (1,0) (1,1)
		// read first the input elements 0, 2, 6, 8. Written in element
		// order, element k of pixel p (byte 2p+k) may not land on the
		// next element read (2p+k+1 within the pixel, then the next
		// pixel's first): Lo = 0. Written a pixel at a time before the
		// rest of its window is read (lag 1): 2(p+1) - first(p) is 2, 2,
		// 0, 0: Lo = 2.
		{"MAX_POOL_2D int8 2x2 stride 1: a pixel written before its window is read (lag 1)",
			func() (*graph.Model, graph.Op) {
				return unary(graph.MaxPool2D, tensor(graph.Int8, 1, 3, 3, 2), tensor(graph.Int8, 1, 2, 2, 2), pool(2, 1, false))
			},
			[]string{"MAX_POOL_2D output 0 over input 0 (sweep) [0, 8]"}, []string{"MAX_POOL_2D output 0 over input 0 (sweep) [2, 8]"}},
		{"AVERAGE_POOL_2D int8 2x2 stride 1: the reference order's window",
			func() (*graph.Model, graph.Op) {
				return unary(graph.AveragePool2D, tensor(graph.Int8, 1, 3, 3, 2), tensor(graph.Int8, 1, 2, 2, 2), pool(2, 1, false))
			},
			[]string{"AVERAGE_POOL_2D output 0 over input 0 (sweep) [0, 8]"}, []string{"AVERAGE_POOL_2D output 0 over input 0 (sweep) [0, 8]"}},
		// 1x4x4x1 int16, 2x2 SAME stride 2 (no padding needed): pixels
		// read first elements 0, 2, 8, 10 (bytes twice that). Lag 1:
		// 2·2(p+1) - 2·first(p) is 2, 0, -10, -12: Lo = 2. Element
		// order: 2(p+1) bytes against the next pixel's first, 2·2, 2·8,
		// 2·10: -2, -12, -14: Lo = -2, the input may start before the
		// output.
		{"MAX_POOL_2D int16 2x2 SAME stride 2",
			func() (*graph.Model, graph.Op) {
				return unary(graph.MaxPool2D, tensor(graph.Int16, 1, 4, 4, 1), tensor(graph.Int16, 1, 2, 2, 1), pool(2, 2, true))
			},
			[]string{"MAX_POOL_2D output 0 over input 0 (sweep) [-2, 8]"}, []string{"MAX_POOL_2D output 0 over input 0 (sweep) [2, 8]"}},
		{"AVERAGE_POOL_2D int16 2x2 SAME stride 2",
			func() (*graph.Model, graph.Op) {
				return unary(graph.AveragePool2D, tensor(graph.Int16, 1, 4, 4, 1), tensor(graph.Int16, 1, 2, 2, 1), pool(2, 2, true))
			},
			[]string{"AVERAGE_POOL_2D output 0 over input 0 (sweep) [-2, 8]"}, []string{"AVERAGE_POOL_2D output 0 over input 0 (sweep) [-2, 8]"}},
		{"MAX_POOL_2D float: the reference kernel on CMSIS-NN",
			func() (*graph.Model, graph.Op) {
				return unary(graph.MaxPool2D, tensor(graph.Float32, 1, 3, 3, 2), tensor(graph.Float32, 1, 2, 2, 2), pool(2, 1, false))
			},
			[]string{"MAX_POOL_2D output 0 over input 0 (sweep) [0, 32]"}, []string{"MAX_POOL_2D output 0 over input 0 (sweep) [0, 32]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, op := tt.build()
			assert.Equal(t, tt.ref, placements(ref, m, op), "tflm-reference")
			for _, isa := range kernels.Paths() {
				assert.Equal(t, tt.cmsis, placements(cmsis.On(isa), m, op), "cmsis-nn (%s)", isa.PathName())
			}
			assert.Equal(t, tt.cmsis, placements(cmsis, m, op), "cmsis-nn, every path")
			assert.Equal(t, tt.cmsis, placements(anyLib, m, op), "any")
		})
	}
}

// TestCMSISNNPad: arm_pad_s8 copies its input a run at a time (a row when
// the channels are not padded, else a pixel's channels) with
// arm_memcpy_s8, whose operands must not overlap: the input may start no
// earlier than the reference kernels' Lo (the padding written before the
// last input element) plus one run.
func TestCMSISNNPad(t *testing.T) {
	ref, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	cmsis, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	anyLib, err := kernels.Lookup(kernels.Any)
	require.NoError(t, err)
	tests := []struct {
		name       string
		in, out    graph.Tensor
		v2         bool
		pads       []int32
		ref, cmsis []string
	}{
		// Rows of 2 at output 0 and 3, each with 0 and 1 padding element
		// before it: Lo = 1 + 2.
		{"a row and a column after: rows of 2",
			tensor(graph.Int8, 1, 2, 2, 1), tensor(graph.Int8, 1, 3, 3, 1), false, []int32{0, 0, 0, 1, 0, 1, 0, 0},
			[]string{"PAD output 0 over input 0 (end) [1, 5]"}, []string{"PAD output 0 over input 0 (end) [3, 5]"}},
		// Every dimension padded, so pixels of 5 channels: the last input
		// element (0,2,3,4) lands at (1,3,5,5) of 3x6x7x8, 549, after
		// 549 - 59 = 490 padding elements; Lo = 490 + 5; Hi = 1008 - 60.
		{"every edge of every dimension: pixels of 5",
			tensor(graph.Int8, 1, 3, 4, 5), tensor(graph.Int8, 3, 6, 7, 8), false, []int32{1, 1, 1, 2, 2, 1, 1, 2},
			[]string{"PAD output 0 over input 0 (end) [490, 948]"}, []string{"PAD output 0 over input 0 (end) [495, 948]"}},
		// Height and width padded: rows of 5 × 3; the last element
		// (0,3,4,2) lands at (0,4,6,2) of 1x7x8x3, 116, after 57 padding
		// elements; Lo = 57 + 15; Hi = 168 - 60.
		{"height and width padded on both sides: rows of 15",
			tensor(graph.Int8, 1, 4, 5, 3), tensor(graph.Int8, 1, 7, 8, 3), false, []int32{0, 0, 1, 2, 2, 1, 0, 0},
			[]string{"PAD output 0 over input 0 (end) [57, 108]"}, []string{"PAD output 0 over input 0 (end) [72, 108]"}},
		// Two dimensions are arm_pad_s8's w and c: c padded, runs of 7;
		// the last element (4,6) lands at (5,6) of 8x10, 56, after 22
		// padding elements; Lo = 22 + 7; Hi = 80 - 35.
		{"PADV2 of two dimensions: pixels of 7",
			tensor(graph.Int8, 5, 7), tensor(graph.Int8, 8, 10), true, []int32{1, 2, 0, 3},
			[]string{"PADV2 output 0 over input 0 (end) [22, 45]"}, []string{"PADV2 output 0 over input 0 (end) [29, 45]"}},
		// One dimension: the run is the whole input.
		{"one dimension: one run",
			tensor(graph.Int8, 6), tensor(graph.Int8, 15), false, []int32{2, 7},
			[]string{"PAD output 0 over input 0 (end) [2, 9]"}, []string{"PAD output 0 over input 0 (end) [8, 9]"}},
		// Channels padded by one after: pixels of 2 with 0 and 1 padding
		// elements before; Lo = 1 + 2 > Hi = 6 - 4: no room.
		{"a channel after pixels of 2: no room for a run",
			tensor(graph.Int8, 1, 1, 2, 2), tensor(graph.Int8, 1, 1, 2, 3), false, []int32{0, 0, 0, 0, 0, 0, 0, 1},
			[]string{"PAD output 0 over input 0 (end) [1, 2]"}, nil},
		{"five dimensions: PadEvalInt8 passes arm_pad_s8 the last four",
			tensor(graph.Int8, 1, 1, 2, 2, 2), tensor(graph.Int8, 1, 1, 3, 2, 2), false, []int32{0, 0, 0, 0, 0, 1, 0, 0, 0, 0},
			[]string{"PAD output 0 over input 0 (end) [0, 4]"}, nil},
		{"INT16: the reference kernel on CMSIS-NN too",
			tensor(graph.Int16, 1, 2, 2, 1), tensor(graph.Int16, 1, 3, 3, 1), false, []int32{0, 0, 0, 1, 0, 1, 0, 0},
			[]string{"PAD output 0 over input 0 (end) [2, 10]"}, []string{"PAD output 0 over input 0 (end) [2, 10]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, op := padModel(tt.in, tt.out, tt.v2, graph.Int32, []int32{int32(len(tt.in.Shape)), 2}, tt.pads...)
			assert.Equal(t, tt.ref, placements(ref, m, op), "tflm-reference")
			for _, isa := range kernels.Paths() {
				assert.Equal(t, tt.cmsis, placements(cmsis.On(isa), m, op), "cmsis-nn (%s)", isa.PathName())
			}
			assert.Equal(t, tt.cmsis, placements(anyLib, m, op), "any")
		})
	}
}

// padRuns runs arm_pad_s8's sweep (arm_pad_s8.c 68-110) over one memory
// holding the output at byte 0 and the input at byte d, int8: padding
// writes and arm_memcpy_s8 runs in order. It returns what goes wrong
// first: "clobbered" when a run reads an input byte written before,
// "overlap" when a run's source and destination share a byte (memcpy's
// undefined behaviour), or "".
func padRuns(in, pre, post [4]int, d int) string {
	var out [4]int
	for i := range out {
		out[i] = pre[i] + in[i] + post[i]
	}
	written := map[int]bool{}
	o, i := 0, 0 // next output byte, next input element
	fill := func(n int) {
		for k := 0; k < n; k++ {
			written[o+k] = true
		}
		o += n
	}
	copyRun := func(n int) string {
		src, dst := d+i, o
		for k := 0; k < n; k++ {
			if written[src+k] {
				return "clobbered"
			}
		}
		if src < dst+n && dst < src+n {
			return "overlap"
		}
		fill(n)
		i += n
		return ""
	}
	row, col := out[2]*out[3], out[3]
	fill(row * out[1] * pre[0])
	for b := 0; b < in[0]; b++ {
		fill(row * pre[1])
		for y := 0; y < in[1]; y++ {
			fill(col * pre[2])
			if in[3] == out[3] {
				if r := copyRun(in[2] * in[3]); r != "" {
					return r
				}
			} else {
				for x := 0; x < in[2]; x++ {
					fill(pre[3])
					if r := copyRun(in[3]); r != "" {
						return r
					}
					fill(post[3])
				}
			}
			fill(col * post[2])
		}
		fill(row * post[1])
	}
	return ""
}

// TestCMSISNNPadAgainstTheKernelSweep: on random INT8 paddings of four
// dimensions, arm_pad_s8's sweep with the input at the contract's Lo
// neither reads a clobbered byte nor copies between overlapping bytes, and
// at Lo - 1 it does one or the other; at Hi too it is clean.
func TestCMSISNNPadAgainstTheKernelSweep(t *testing.T) {
	cmsis, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	lib := cmsis.On(kernels.NoDSP)
	r := rand.New(rand.NewPCG(3, 5))
	checked := 0
	for n := 0; n < 300; n++ {
		var in, pre, post [4]int
		var shape, padded []int32
		var pads []int32
		for d := range 4 {
			in[d], pre[d], post[d] = 1+r.IntN(4), r.IntN(3), r.IntN(3)
			if r.IntN(3) == 0 {
				pre[d], post[d] = 0, 0
			}
			shape = append(shape, int32(in[d]))
			padded = append(padded, int32(pre[d]+in[d]+post[d]))
			pads = append(pads, int32(pre[d]), int32(post[d]))
		}
		m, op := padModel(tensor(graph.Int8, shape...), tensor(graph.Int8, padded...), false, graph.Int32, []int32{4, 2}, pads...)
		got := lib.InPlace(m, 0, &op)
		name := fmt.Sprintf("in %v pre %v post %v", in, pre, post)
		if len(got) == 0 {
			// No room: every offset up to the output's end fails.
			hi := int(m.Subgraphs[0].Tensors[2].Size - m.Subgraphs[0].Tensors[0].Size)
			for d := 0; d <= hi; d++ {
				require.NotEqual(t, "", padRuns(in, pre, post, d), "%s: d = %d is clean but no contract", name, d)
			}
			continue
		}
		checked++
		lo, hi := int(got[0].Lo), int(got[0].Hi)
		assert.Equal(t, "", padRuns(in, pre, post, lo), "%s: at Lo = %d", name, lo)
		assert.Equal(t, "", padRuns(in, pre, post, hi), "%s: at Hi = %d", name, hi)
		if lo > 0 {
			assert.NotEqual(t, "", padRuns(in, pre, post, lo-1), "%s: at Lo - 1 = %d", name, lo-1)
		}
	}
	assert.Greater(t, checked, 100)
}

// maxPoolRuns runs arm_max_pool_s8's loops (arm_max_pool_s8.c 192-236)
// over one memory holding the output at byte 0 and the input at byte d,
// int8: per output pixel, arm_memcpy_s8 of the window's first in-image
// position into it, then each further position compared into it in
// place. It returns "clobbered" when a position read was written before,
// "overlap" when the memcpy's source and destination share a byte, or "".
func maxPoolRuns(c windowCase, d int) string {
	written := map[int]bool{}
	for b := 0; b < c.batch; b++ {
		for oy := 0; oy < c.outH; oy++ {
			for ox := 0; ox < c.outW; ox++ {
				dst := ((b*c.outH+oy)*c.outW + ox) * c.outC
				count := 0
				for fy := 0; fy < c.filterH; fy++ {
					y := oy*c.strideH - c.padH + fy
					for fx := 0; fx < c.filterW; fx++ {
						x := ox*c.strideW - c.padW + fx
						if y < 0 || y >= c.inH || x < 0 || x >= c.inW {
							continue
						}
						src := d + ((b*c.inH+y)*c.inW+x)*c.inC
						for k := 0; k < c.inC; k++ {
							if written[src+k] {
								return "clobbered"
							}
						}
						if count == 0 && src < dst+c.outC && dst < src+c.inC {
							return "overlap"
						}
						for k := 0; k < c.outC; k++ {
							written[dst+k] = true
						}
						count++
					}
				}
			}
		}
	}
	return ""
}

// TestCMSISNNMaxPoolAgainstTheKernelLoops: on random INT8 max pools the
// input at the contract's Lo (a lag of one pixel) is never read after a
// write and never a memcpy's overlapping source, and one byte earlier it
// is.
func TestCMSISNNMaxPoolAgainstTheKernelLoops(t *testing.T) {
	cmsis, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	lib := cmsis.On(kernels.MVE)
	r := rand.New(rand.NewPCG(11, 13))
	checked := 0
	for checked < 200 {
		c := windowCase{code: graph.MaxPool2D, typ: graph.Int8, batch: 1 + r.IntN(2), inH: 1 + r.IntN(7), inW: 1 + r.IntN(7),
			inC: 1 + r.IntN(5), filterH: 1 + r.IntN(3), filterW: 1 + r.IntN(3), strideH: 1 + r.IntN(3), strideW: 1 + r.IntN(3),
			dilationH: 1, dilationW: 1, same: r.IntN(2) == 0}
		c.outC = c.inC
		if !c.geometry() {
			continue
		}
		m, op := c.model()
		got := lib.InPlace(m, 0, &op)
		if len(got) == 0 {
			// One pixel reading from the input's first byte: Lo would be
			// the output's size, no overlap.
			continue
		}
		checked++
		lo := int(got[0].Lo)
		assert.Equal(t, "", maxPoolRuns(c, lo), "%s: at Lo = %d", c, lo)
		assert.Equal(t, "", maxPoolRuns(c, int(got[0].Hi)), "%s: at Hi", c)
		if bad := maxPoolRuns(c, lo-1); bad == "" {
			// Lo - 1 may only be clean where a pixel reads nothing
			// after its first position and no later pixel reads it
			// again; the memcpy then overlaps its source, which the
			// loop above reports, so this never happens.
			assert.Fail(t, "Lo is not the least", "%s: Lo - 1 = %d is clean", c, lo-1)
		}
	}
}

// avgPoolRuns runs an average pool's loops over one memory holding the
// output at byte 0 and the input at byte d: per output pixel, per block of
// channels, the block's window read, then the block written. A block of 1
// is arm_avgpool_s8's C path (and the reference order), of 16 (int8) or 8
// (int16) its MVE path, of every channel its DSP path. It returns the
// first input element read after a write landed on it, or -1.
func avgPoolRuns(c windowCase, d, block int) int {
	e := int(c.typ.Bits() / 8)
	written := map[int]bool{}
	for b := 0; b < c.batch; b++ {
		for oy := 0; oy < c.outH; oy++ {
			for ox := 0; ox < c.outW; ox++ {
				for k0 := 0; k0 < c.outC; k0 += block {
					k1 := min(k0+block, c.outC)
					for fy := 0; fy < c.filterH; fy++ {
						y := oy*c.strideH - c.padH + fy
						for fx := 0; fx < c.filterW; fx++ {
							x := ox*c.strideW - c.padW + fx
							if y < 0 || y >= c.inH || x < 0 || x >= c.inW {
								continue
							}
							for k := k0; k < k1; k++ {
								elem := ((b*c.inH+y)*c.inW+x)*c.inC + k
								for i := 0; i < e; i++ {
									if written[d+elem*e+i] {
										return elem
									}
								}
							}
						}
					}
					for k := k0; k < k1; k++ {
						o := ((b*c.outH+oy)*c.outW+ox)*c.outC + k
						for i := 0; i < e; i++ {
							written[o*e+i] = true
						}
					}
				}
			}
		}
	}
	return -1
}

// TestCMSISNNAveragePoolAgainstTheKernelLoops: on random INT8 and INT16
// average pools, the input at the contract's Lo is never read after a
// write on any of arm_avgpool_s8/_s16's paths (a channel, a block of 16
// or 8 channels, a whole pixel at a time), and one element earlier the C
// path reads a clobbered element: Lo is exact there, and safe on the
// others.
func TestCMSISNNAveragePoolAgainstTheKernelLoops(t *testing.T) {
	cmsis, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(17, 19))
	for n := 0; n < 200; {
		typ := graph.Int8
		if n%2 == 1 {
			typ = graph.Int16
		}
		c := windowCase{code: graph.AveragePool2D, typ: typ, batch: 1 + r.IntN(2), inH: 1 + r.IntN(6), inW: 1 + r.IntN(6),
			inC: 1 + r.IntN(40), filterH: 1 + r.IntN(3), filterW: 1 + r.IntN(3), strideH: 1 + r.IntN(3), strideW: 1 + r.IntN(3),
			dilationH: 1, dilationW: 1, same: r.IntN(2) == 0}
		c.outC = c.inC
		if !c.geometry() {
			continue
		}
		n++
		m, op := c.model()
		for _, isa := range kernels.Paths() {
			got := cmsis.On(isa).InPlace(m, 0, &op)
			if len(got) == 0 {
				continue
			}
			lo, e := int(got[0].Lo), int(typ.Bits()/8)
			mve := 16
			if typ == graph.Int16 {
				mve = 8
			}
			for _, block := range []int{1, mve, c.outC} {
				assert.Equal(t, -1, avgPoolRuns(c, lo, block), "%s %s: blocks of %d at Lo = %d", c, isa.PathName(), block, lo)
			}
			assert.NotEqual(t, -1, avgPoolRuns(c, lo-e, 1), "%s: the C path at Lo - %d", c, e)
		}
	}
}
