package stripe

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// describe renders subgraph 0's operators one a line: name, the
// non-constant inputs with their shapes, the constants of STRIDED_SLICE
// (begin/end) and PAD (paddings), the padding of a window operator, and
// the output with its shape.
func describe(m *graph.Model) []string {
	sg := &m.Subgraphs[0]
	ints := func(t graph.TensorID) []int32 {
		d := m.Buffers[sg.Tensors[t].Buffer].Data
		v := make([]int32, len(d)/4)
		for i := range v {
			v[i] = int32(binary.LittleEndian.Uint32(d[4*i:]))
		}
		return v
	}
	var out []string
	for i := range sg.Ops {
		op := &sg.Ops[i]
		var parts []string
		for _, t := range op.Inputs {
			if t >= 0 && !m.HasData(&sg.Tensors[t]) {
				parts = append(parts, fmt.Sprintf("%s%v", sg.Tensors[t].Name, sg.Tensors[t].Shape))
			}
		}
		s := op.Name() + " " + strings.Join(parts, " ")
		switch op.Name() {
		case "STRIDED_SLICE":
			s += fmt.Sprintf(" begin%v end%v strides%v", ints(op.Inputs[1]), ints(op.Inputs[2]), ints(op.Inputs[3]))
		case "PAD", "PADV2", "MIRROR_PAD":
			s += fmt.Sprintf(" paddings%v", ints(op.Inputs[1]))
		}
		if op.Window != nil {
			s += map[graph.Padding]string{graph.PaddingSame: " SAME", graph.PaddingValid: " VALID"}[op.Window.Padding]
		}
		o := op.Outputs[0]
		s += fmt.Sprintf(" -> %s%v", sg.Tensors[o].Name, sg.Tensors[o].Shape)
		out = append(out, s)
	}
	return out
}

type geometryCase struct {
	name   string
	build  func(t *testing.T) *graph.Model
	region func(m *graph.Model) graph.StripeRegion
	want   []string
	macs   int64
	extra  int64
	added  int // tensors appended
	// emptied are the region's intermediate tensors, which the rewrite
	// keeps at their ids with 0 rows.
	emptied []graph.TensorID
}

func geometryCases() []geometryCase {
	return []geometryCase{
		{
			// 7x5 -> 4x3, 3x3 stride 2 SAME: TFLM pads total (4-1)*2+3-7 = 2
			// rows, 1 on top; columns the same, 1 left, 1 right.
			// Stripe 0 (rows 0-2) reads rows [-1,4): rows 0-3 and a top pad;
			// stripe 1 (rows 2-4) reads [3,8): rows 3-6 and a bottom pad.
			name: "conv 3x3 SAME stride 2",
			build: func(t *testing.T) *graph.Model {
				b := newMB()
				x := b.act("x", []int32{1, 7, 5, 2}, -3)
				y := b.conv("y", x, []int32{1, 4, 3, 3}, 3, 3, same(graph.PaddingSame, 2, 2), false)
				return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
			},
			region: func(m *graph.Model) graph.StripeRegion {
				return graph.StripeRegion{Input: 0, Output: 1, Ops: []int{0}, Rows: [][2]int32{{0, 2}, {2, 4}}}
			},
			want: []string{
				"STRIDED_SLICE x[1 7 5 2] begin[0 0 0 0] end[1 4 5 2] strides[1 1 1 1] -> x/stripe0/slice[1 4 5 2]",
				"PAD x/stripe0/slice[1 4 5 2] paddings[0 0 1 0 1 1 0 0] -> x/stripe0/pad[1 5 7 2]",
				"CONV_2D x/stripe0/pad[1 5 7 2] VALID -> y/stripe0[1 2 3 3]",
				"STRIDED_SLICE x[1 7 5 2] begin[0 3 0 0] end[1 7 5 2] strides[1 1 1 1] -> x/stripe1/slice[1 4 5 2]",
				"PAD x/stripe1/slice[1 4 5 2] paddings[0 0 0 1 1 1 0 0] -> x/stripe1/pad[1 5 7 2]",
				"CONV_2D x/stripe1/pad[1 5 7 2] VALID -> y/stripe1[1 2 3 3]",
				"CONCATENATION y/stripe0[1 2 3 3] y/stripe1[1 2 3 3] -> y[1 4 3 3]",
			},
			// 4*3*3 outputs, 3*3*2 taps each; the stripes compute each once.
			macs: 4 * 3 * 3 * 3 * 3 * 2, extra: 0, added: 14,
		},
		{
			// Depthwise 3x3, dilation 2 (extent 5), SAME stride 1 on 8x4:
			// TFLM pads 7+5-8 = 4 rows, 2 on top, and 2+2 columns. Rows
			// 0-3 read [-2,5), 3-6 read [1,8), 6-8 read [4,10).
			name: "depthwise 3x3 dilation 2",
			build: func(t *testing.T) *graph.Model {
				b := newMB()
				x := b.act("x", []int32{1, 8, 4, 2}, 7)
				w := same(graph.PaddingSame, 1, 1)
				w.DilationH, w.DilationW = 2, 2
				y := b.conv("y", x, []int32{1, 8, 4, 2}, 3, 3, w, true)
				return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
			},
			region: func(m *graph.Model) graph.StripeRegion {
				return graph.StripeRegion{Input: 0, Output: 1, Ops: []int{0}, Rows: EvenRows(8, 3)}
			},
			want: []string{
				"STRIDED_SLICE x[1 8 4 2] begin[0 0 0 0] end[1 5 4 2] strides[1 1 1 1] -> x/stripe0/slice[1 5 4 2]",
				"PAD x/stripe0/slice[1 5 4 2] paddings[0 0 2 0 2 2 0 0] -> x/stripe0/pad[1 7 8 2]",
				"DEPTHWISE_CONV_2D x/stripe0/pad[1 7 8 2] VALID -> y/stripe0[1 3 4 2]",
				"STRIDED_SLICE x[1 8 4 2] begin[0 1 0 0] end[1 8 4 2] strides[1 1 1 1] -> x/stripe1/slice[1 7 4 2]",
				"PAD x/stripe1/slice[1 7 4 2] paddings[0 0 0 0 2 2 0 0] -> x/stripe1/pad[1 7 8 2]",
				"DEPTHWISE_CONV_2D x/stripe1/pad[1 7 8 2] VALID -> y/stripe1[1 3 4 2]",
				"STRIDED_SLICE x[1 8 4 2] begin[0 4 0 0] end[1 8 4 2] strides[1 1 1 1] -> x/stripe2/slice[1 4 4 2]",
				"PAD x/stripe2/slice[1 4 4 2] paddings[0 0 0 2 2 2 0 0] -> x/stripe2/pad[1 6 8 2]",
				"DEPTHWISE_CONV_2D x/stripe2/pad[1 6 8 2] VALID -> y/stripe2[1 2 4 2]",
				"CONCATENATION y/stripe0[1 3 4 2] y/stripe1[1 3 4 2] y/stripe2[1 2 4 2] -> y[1 8 4 2]",
			},
			macs: 8 * 4 * 2 * 3 * 3, extra: 0, added: 21,
		},
		{
			// x -> conv 3x3 SAME -> a -> conv 3x3 SAME -> b; y = b + x.
			// Stripe 0 (y rows 0-3): b 0-3, a [0,4) (top padded), x [0,5)
			// for a and [0,3) for the ADD. Stripe 1 (3-6): b 3-6 reads a
			// [2,7) -> [2,6) + 1 bottom pad; a [2,6) reads x [1,7) -> [1,6)
			// + 1; the ADD reads x [3,6).
			name: "chain with a residual ADD",
			build: func(t *testing.T) *graph.Model {
				b := newMB()
				x := b.act("x", []int32{1, 6, 4, 2}, -3)
				a := b.conv("a", x, []int32{1, 6, 4, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
				bb := b.conv("b", a, []int32{1, 6, 4, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
				y := b.act("y", []int32{1, 6, 4, 2}, 1)
				b.op(0, nil, []graph.TensorID{bb, x}, y) // ADD
				return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
			},
			region: func(m *graph.Model) graph.StripeRegion {
				return graph.StripeRegion{Input: 0, Output: 7, Ops: []int{0, 1, 2}, Rows: [][2]int32{{0, 3}, {3, 6}}}
			},
			want: []string{
				"STRIDED_SLICE x[1 6 4 2] begin[0 0 0 0] end[1 5 4 2] strides[1 1 1 1] -> x/stripe0/slice[1 5 4 2]",
				"PAD x/stripe0/slice[1 5 4 2] paddings[0 0 1 0 1 1 0 0] -> x/stripe0/pad[1 6 6 2]",
				"CONV_2D x/stripe0/pad[1 6 6 2] VALID -> a/stripe0[1 4 4 2]",
				"PAD a/stripe0[1 4 4 2] paddings[0 0 1 0 1 1 0 0] -> a/stripe0/pad[1 5 6 2]",
				"CONV_2D a/stripe0/pad[1 5 6 2] VALID -> b/stripe0[1 3 4 2]",
				"STRIDED_SLICE x[1 6 4 2] begin[0 0 0 0] end[1 3 4 2] strides[1 1 1 1] -> x/stripe0/slice[1 3 4 2]",
				"ADD b/stripe0[1 3 4 2] x/stripe0/slice[1 3 4 2] -> y/stripe0[1 3 4 2]",
				"STRIDED_SLICE x[1 6 4 2] begin[0 1 0 0] end[1 6 4 2] strides[1 1 1 1] -> x/stripe1/slice[1 5 4 2]",
				"PAD x/stripe1/slice[1 5 4 2] paddings[0 0 0 1 1 1 0 0] -> x/stripe1/pad[1 6 6 2]",
				"CONV_2D x/stripe1/pad[1 6 6 2] VALID -> a/stripe1[1 4 4 2]",
				"PAD a/stripe1[1 4 4 2] paddings[0 0 0 1 1 1 0 0] -> a/stripe1/pad[1 5 6 2]",
				"CONV_2D a/stripe1/pad[1 5 6 2] VALID -> b/stripe1[1 3 4 2]",
				"STRIDED_SLICE x[1 6 4 2] begin[0 3 0 0] end[1 6 4 2] strides[1 1 1 1] -> x/stripe1/slice[1 3 4 2]",
				"ADD b/stripe1[1 3 4 2] x/stripe1/slice[1 3 4 2] -> y/stripe1[1 3 4 2]",
				"CONCATENATION y/stripe0[1 3 4 2] y/stripe1[1 3 4 2] -> y[1 6 4 2]",
			},
			// Each conv: 6*4 outputs * 2 channels * 18 taps = 864. The
			// stripes compute a's rows 4+4 = 8 (2 again) and b's 3+3.
			macs: 2 * 864, extra: 2 * 4 * 2 * 18, added: 2 * (4 + 2 + 1 + 2 + 1 + 4 + 1),
			emptied: []graph.TensorID{1, 4}, // a, b
		},
		{
			// x 4x3 -> PAD rows (1,2), columns (1,1) -> p 7x5 -> conv 3x3
			// VALID stride 2 -> y 3x2. y row r reads p rows [2r, 2r+3):
			// stripe 0 p [0,3) = pad row + x [0,2); stripe 1 p [2,5) =
			// x [1,4); stripe 2 p [4,7) = x [3,4) + 2 pad rows.
			name: "PAD then a VALID conv",
			build: func(t *testing.T) *graph.Model {
				b := newMB()
				x := b.act("x", []int32{1, 4, 3, 1}, -3)
				pd := b.int32s("paddings", []int32{4, 2}, 0, 0, 1, 2, 1, 1, 0, 0)
				p := b.act("p", []int32{1, 7, 5, 1}, -3)
				b.op(34, nil, []graph.TensorID{x, pd}, p) // PAD
				y := b.conv("y", p, []int32{1, 3, 2, 1}, 3, 3, same(graph.PaddingValid, 2, 2), false)
				return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
			},
			region: func(m *graph.Model) graph.StripeRegion {
				return graph.StripeRegion{Input: 0, Output: 3, Ops: []int{0, 1}, Rows: EvenRows(3, 3)}
			},
			want: []string{
				"STRIDED_SLICE x[1 4 3 1] begin[0 0 0 0] end[1 2 3 1] strides[1 1 1 1] -> x/stripe0/slice[1 2 3 1]",
				"PAD x/stripe0/slice[1 2 3 1] paddings[0 0 1 0 1 1 0 0] -> p/stripe0[1 3 5 1]",
				"CONV_2D p/stripe0[1 3 5 1] VALID -> y/stripe0[1 1 2 1]",
				"STRIDED_SLICE x[1 4 3 1] begin[0 1 0 0] end[1 4 3 1] strides[1 1 1 1] -> x/stripe1/slice[1 3 3 1]",
				"PAD x/stripe1/slice[1 3 3 1] paddings[0 0 0 0 1 1 0 0] -> p/stripe1[1 3 5 1]",
				"CONV_2D p/stripe1[1 3 5 1] VALID -> y/stripe1[1 1 2 1]",
				"STRIDED_SLICE x[1 4 3 1] begin[0 3 0 0] end[1 4 3 1] strides[1 1 1 1] -> x/stripe2/slice[1 1 3 1]",
				"PAD x/stripe2/slice[1 1 3 1] paddings[0 0 0 2 1 1 0 0] -> p/stripe2[1 3 5 1]",
				"CONV_2D p/stripe2[1 3 5 1] VALID -> y/stripe2[1 1 2 1]",
				"CONCATENATION y/stripe0[1 1 2 1] y/stripe1[1 1 2 1] y/stripe2[1 1 2 1] -> y[1 3 2 1]",
			},
			macs: 3 * 2 * 9, extra: 0, added: 3 * 7,
			emptied: []graph.TensorID{2}, // p
		},
		{
			// MAX_POOL 2x2 stride 2 VALID on 6x2: y row r reads x [2r, 2r+2).
			name: "VALID max pool",
			build: func(t *testing.T) *graph.Model {
				b := newMB()
				x := b.act("x", []int32{1, 6, 2, 1}, -3)
				y := b.act("y", []int32{1, 3, 1, 1}, -3)
				b.op(graph.MaxPool2D, &graph.Window{Padding: graph.PaddingValid, StrideH: 2, StrideW: 2, FilterH: 2, FilterW: 2, DilationH: 1, DilationW: 1}, []graph.TensorID{x}, y)
				return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
			},
			region: func(m *graph.Model) graph.StripeRegion {
				return graph.StripeRegion{Input: 0, Output: 1, Ops: []int{0}, Rows: [][2]int32{{0, 2}, {2, 3}}}
			},
			want: []string{
				"STRIDED_SLICE x[1 6 2 1] begin[0 0 0 0] end[1 4 2 1] strides[1 1 1 1] -> x/stripe0/slice[1 4 2 1]",
				"MAX_POOL_2D x/stripe0/slice[1 4 2 1] VALID -> y/stripe0[1 2 1 1]",
				"STRIDED_SLICE x[1 6 2 1] begin[0 4 0 0] end[1 6 2 1] strides[1 1 1 1] -> x/stripe1/slice[1 2 2 1]",
				"MAX_POOL_2D x/stripe1/slice[1 2 2 1] VALID -> y/stripe1[1 1 1 1]",
				"CONCATENATION y/stripe0[1 2 1 1] y/stripe1[1 1 1 1] -> y[1 3 1 1]",
			},
			added: 10,
		},
		mirrorCase("REFLECT", 0),
		mirrorCase("SYMMETRIC", 1),
	}
}

// mirrorCase: x 6x4 -> MIRROR_PAD by 2 rows and 1 column on each side ->
// p 10x6 -> conv 3x3 VALID -> y 8x4, in 2 stripes. Stripe 0 (y rows 0-3)
// reads p [0,6): p rows 0-1 mirror x rows 2,1 (REFLECT: t+offset-1-r) or
// 1,0 (SYMMETRIC), rows 2-5 are x rows 0-3, so its copy mirrors x rows
// [0,4) by 2 on top, as the original would: the slice's 4 rows hold the
// rows mirrored. Stripe 1 (y rows 4-7) reads p [4,10): x rows [2,6) and 2
// mirrored below (x rows 4,3 or 5,4: rows 2,1 or 3,2 of the slice).
func mirrorCase(mode string, code int64) geometryCase {
	return geometryCase{
		name: "MIRROR_PAD " + mode,
		build: func(t *testing.T) *graph.Model {
			b := newMB()
			x := b.act("x", []int32{1, 6, 4, 2}, -3)
			pads := b.int32s("paddings", []int32{4, 2}, 0, 0, 2, 2, 1, 1, 0, 0)
			p := b.act("p", []int32{1, 10, 6, 2}, -3)
			b.op(opMirrorPad, nil, []graph.TensorID{x, pads}, p)
			b.sg().Ops[0].Options = &graph.Options{Table: "MirrorPadOptions", Fields: []graph.OptionField{
				intField("mode", "MirrorPadMode", code, true)}}
			y := b.conv("y", p, []int32{1, 8, 4, 3}, 3, 3, same(graph.PaddingValid, 1, 1), false)
			return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
		},
		region: func(m *graph.Model) graph.StripeRegion {
			return graph.StripeRegion{Input: 0, Output: 3, Ops: []int{0, 1}, Rows: [][2]int32{{0, 4}, {4, 8}}}
		},
		want: []string{
			"STRIDED_SLICE x[1 6 4 2] begin[0 0 0 0] end[1 4 4 2] strides[1 1 1 1] -> x/stripe0/slice[1 4 4 2]",
			"MIRROR_PAD x/stripe0/slice[1 4 4 2] paddings[0 0 2 0 1 1 0 0] -> p/stripe0[1 6 6 2]",
			"CONV_2D p/stripe0[1 6 6 2] VALID -> y/stripe0[1 4 4 3]",
			"STRIDED_SLICE x[1 6 4 2] begin[0 2 0 0] end[1 6 4 2] strides[1 1 1 1] -> x/stripe1/slice[1 4 4 2]",
			"MIRROR_PAD x/stripe1/slice[1 4 4 2] paddings[0 0 0 2 1 1 0 0] -> p/stripe1[1 6 6 2]",
			"CONV_2D p/stripe1[1 6 6 2] VALID -> y/stripe1[1 4 4 3]",
			"CONCATENATION y/stripe0[1 4 4 3] y/stripe1[1 4 4 3] -> y[1 8 4 3]",
		},
		// 8*4*3 outputs, 3*3*2 taps each, each computed once.
		macs: 8 * 4 * 3 * 3 * 3 * 2, extra: 0,
		// per stripe: slice + begin/end/strides, paddings, p copy, y copy.
		added: 14, emptied: []graph.TensorID{2},
	}
}

func TestApplyGeometry(t *testing.T) {
	for _, tc := range geometryCases() {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.build(t)
			r := tc.region(m)
			regs := []graph.StripeRegion{r}
			out, err := Apply(m, regs)
			require.NoError(t, err)
			assert.Equal(t, tc.want, describe(out))
			assert.Equal(t, tc.macs, regs[0].MACs, "MACs")
			assert.Equal(t, tc.extra, regs[0].ExtraMACs, "extra MACs")
			require.Len(t, out.Stripes, 1)
			assert.Equal(t, regs[0], out.Stripes[0])
			assert.Len(t, out.Subgraphs[0].Tensors, len(m.Subgraphs[0].Tensors)+tc.added)
			// Every tensor of the original stays at its id; the region's
			// intermediates with 0 rows.
			want := append([]graph.Tensor(nil), m.Subgraphs[0].Tensors...)
			for _, e := range tc.emptied {
				sh := want[e].Shape
				want[e].Shape, want[e].Size = []int32{1, 0, sh[2], sh[3]}, 0
			}
			assert.Equal(t, want, out.Subgraphs[0].Tensors[:len(want)])
			assert.Equal(t, m.Buffers, out.Buffers[:len(m.Buffers)])
		})
	}
}
