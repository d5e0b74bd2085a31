package kernels_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// convOp is a CONV_2D for CMSIS-NN's contracts: activation and filter
// types, NHWC input, output channels, filter, strides, dilations and
// padding; geometry fills the output's size and TFLM's padding.
type convOp struct {
	act, filter                  graph.ElementType
	batch, inH, inW, inC, outC   int64
	kH, kW, filterC              int64 // filterC 0: inC
	sH, sW, dH, dW               int64
	same                         bool
	outH, outW, padH, padW, elem int64
}

func (c convOp) String() string {
	return fmt.Sprintf("%v/%v in %dx%dx%dx%d out %dx%d filter %dx%dx%d stride %dx%d dilation %dx%d same %t",
		c.act, c.filter, c.batch, c.inH, c.inW, c.inC, c.outC, c.outW, c.kH, c.kW, c.filterC, c.sH, c.sW, c.dH, c.dW, c.same)
}

// geometry computes the output's size and the padding as TFLM's
// padding.h does; false when no output fits.
func (c *convOp) geometry() bool {
	if c.filterC == 0 {
		c.filterC = c.inC
	}
	if c.dH == 0 {
		c.dH, c.dW = 1, 1
	}
	if c.filter == graph.Float32 && c.act != graph.Float32 { // FLOAT32 is TensorType 0: the zero value
		c.filter = graph.Int8
	}
	c.elem = int64(c.act.Bits() / 8)
	size := func(in, f, s, d int64) (int64, int64) {
		eff := (f-1)*d + 1
		out := (in + s - eff) / s
		if c.same {
			out = (in + s - 1) / s
		}
		return out, max((out-1)*s+eff-in, 0) / 2
	}
	c.outH, c.padH = size(c.inH, c.kH, c.sH, c.dH)
	c.outW, c.padW = size(c.inW, c.kW, c.sW, c.dW)
	return c.outH >= 1 && c.outW >= 1
}

func (c convOp) model() (*graph.Model, graph.Op) {
	in := tensor(c.act, int32(c.batch), int32(c.inH), int32(c.inW), int32(c.inC))
	out := tensor(c.act, int32(c.batch), int32(c.outH), int32(c.outW), int32(c.outC))
	f := tensor(c.filter, int32(c.outC), int32(c.kH), int32(c.kW), int32(c.filterC))
	w := &graph.Window{Padding: graph.PaddingValid, StrideH: int32(c.sH), StrideW: int32(c.sW), DilationH: int32(c.dH), DilationW: int32(c.dW)}
	if c.same {
		w.Padding = graph.PaddingSame
	}
	op := graph.Op{Code: graph.Conv2D, Inputs: []graph.TensorID{0, 2}, Outputs: []graph.TensorID{1}, Window: w}
	m := &graph.Model{Subgraphs: []graph.Subgraph{{Tensors: []graph.Tensor{in, out, f}, Ops: []graph.Op{op}}}, Buffers: []graph.Buffer{{}}}
	return m, op
}

// place returns the window lib gives the operator's input, or ok false.
func (c convOp) place(t *testing.T, lib *kernels.Library) (kernels.Placement, bool) {
	t.Helper()
	m, op := c.model()
	ps := lib.InPlace(m, 0, &op)
	require.LessOrEqual(t, len(ps), 1, "%v", c)
	if len(ps) == 0 {
		return kernels.Placement{}, false
	}
	assert.Equal(t, kernels.Sweep, ps[0].Overlap)
	assert.Equal(t, m.Subgraphs[0].Tensors[1].Size, ps[0].Hi, "%v", c)
	return ps[0], true
}

// cmsisOn is CMSIS-NN on one code path.
func cmsisOn(t *testing.T, isa kernels.ISA) *kernels.Library {
	t.Helper()
	lib, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	return lib.On(isa)
}

var isas = []kernels.ISA{kernels.NoDSP, kernels.DSP, kernels.MVE}

// TestCMSISNNConvWindowsByHand: windows worked out by hand from the
// kernels' loops (the test's comments show the sums), on every path,
// with the function each runs. none: no contract.
func TestCMSISNNConvWindowsByHand(t *testing.T) {
	const none = int64(-1 << 40)
	tests := []struct {
		name string
		op   convOp
		// the reference kernels', then CMSIS-NN's portable, DSP and MVE
		// windows' least offset, and the function each CMSIS-NN path runs
		ref, noDSP, dsp, mve int64
		fn, mveFn            string
	}{
		{
			// m(y, x) = (max(y-1, 0)·5 + max(x-1, 0))·4. 2 (portable,
			// DSP) or 4 (MVE) pixels written after their windows are
			// copied: Lo = max(end·4 - from(end)) = 24 at end 6 (from 0)
			// and 8 (from 2) for 2, at end 8 for 4; the reference writes
			// pixel 6's channel 2 before reading pixel 6's window again:
			// 27.
			name: "3x3 SAME im2col", op: convOp{act: graph.Int8, batch: 1, inH: 5, inW: 5, inC: 4, outC: 4, kH: 3, kW: 3, sH: 1, sW: 1, same: true},
			ref: 27, noDSP: 24, dsp: 24, mve: 24, fn: "arm_convolve_s8", mveFn: "arm_convolve_s8",
		},
		{
			// 6 pixels of 3 channels into 2: m(q) = 3q. MVE: rows 0-3
			// read once per channel; channel 0 of pixel 3 (byte 6) is
			// written while row 0 is read again: 7. Portable and DSP: one
			// pass of the channel pair over pixel pairs: pixels 0 and 1
			// (bytes 0-3) written before pixel 2 (element 6) is read: -2.
			// The reference: channel 0 of pixel 0 before channel 1 reads
			// pixel 0: 1.
			name: "1x1 stride 1, 2 channels", op: convOp{act: graph.Int8, batch: 1, inH: 1, inW: 6, inC: 3, outC: 2, kH: 1, kW: 1, sH: 1, sW: 1},
			ref: 1, noDSP: -2, dsp: -2, mve: 7, fn: "arm_convolve_1x1_s8_fast", mveFn: "arm_convolve_1x1_s8_fast",
		},
		{
			// A 1x1 stride-1 with 3 output channels re-reads every pixel
			// for the odd channel without MVE: no contract there. MVE:
			// rows 0-3, channel 1 of pixel 3 (end 3·3+2) while row 0 is
			// read: 11.
			name: "1x1 stride 1, 3 channels", op: convOp{act: graph.Int8, batch: 1, inH: 1, inW: 6, inC: 3, outC: 3, kH: 1, kW: 1, sH: 1, sW: 1},
			ref: 2, noDSP: none, dsp: none, mve: 11, fn: "arm_convolve_1x1_s8_fast", mveFn: "arm_convolve_1x1_s8_fast",
		},
		{
			// 3x4x2 stride 2 into 2x2x3: m = 16·oy + 4·ox. One product
			// per output row. Portable/DSP: the pair pass writes pixel 1's
			// channel 1 (end 5) before the odd channel re-reads pixel 0:
			// 5. MVE: lone rows, every channel after the row's reads,
			// pixel 0's (end 3) before pixel 1 (element 4): -1. The
			// reference: pixel 0's channel 1 (end 2) before channel 2
			// reads pixel 0: 2.
			name: "1x1 stride 2", op: convOp{act: graph.Int8, batch: 1, inH: 3, inW: 4, inC: 2, outC: 3, kH: 1, kW: 1, sH: 2, sW: 2},
			ref: 2, noDSP: 5, dsp: 5, mve: -1, fn: "arm_convolve_1x1_s8", mveFn: "arm_convolve_1x1_s8",
		},
		{
			// 1x3 SAME over 8 pixels of 4 channels into 2: m(q) =
			// max(q-1, 0)·4. MVE: pixel 0 from a copy (end 2, from 0), the
			// unpadded pixels 1-6 by a product, rows 1-4 read once per
			// channel, channel 0 of pixel 4 (end 9) while row 1 (element
			// 0) is read again: 9. Portable and DSP run the im2col kernel:
			// pixels 0-1 (end 4) before pixel 2 (element 4): 0. The
			// reference: channel 0 of pixel 1 (end 3) before channel 1
			// reads from element 0: 3.
			name: "1x3 SAME", op: convOp{act: graph.Int8, batch: 1, inH: 1, inW: 8, inC: 4, outC: 2, kH: 1, kW: 3, sH: 1, sW: 1, same: true},
			ref: 3, noDSP: 0, dsp: 0, mve: 9, fn: "arm_convolve_s8", mveFn: "arm_convolve_1_x_n_s8",
		},
		{
			// INT16 3x3 SAME over 3x3x2 into 2 (2 bytes each): m(y, x)
			// = (max(y-1, 0)·3 + max(x-1, 0))·2; from(q) is 0 up to
			// pixel 4, then 2, 6, 6, 8. 4 pixels: end 8 at from(4) = 0,
			// 16 at from(8) = 8: 8 elements, 16 bytes. 2 pixels: end 8
			// at from(4) = 0, 16 at 8: 16 bytes. The reference: pixel
			// 4's channel 0 (end 9) before channel 1 reads from 0: 18.
			name: "INT16 3x3 SAME", op: convOp{act: graph.Int16, batch: 1, inH: 3, inW: 3, inC: 2, outC: 2, kH: 3, kW: 3, sH: 1, sW: 1, same: true},
			ref: 18, noDSP: 16, dsp: 16, mve: 16, fn: "arm_convolve_s16", mveFn: "arm_convolve_s16",
		},
		{
			// INT4 filter, 1x1 over 3 pixels of 3 channels into 4
			// (odd columns): m(q) = 3q. Portable and DSP: one group of
			// four; pixels 0 and 1 get channels 0 and 2 (end 7) before
			// both rows are read again from their second element (1):
			// 6. MVE: one block of 3 rows, channel 2 of pixel 2 (end 11)
			// while row 0 is read again: 11. The reference: pixel 2's
			// channel 2 (end 11) before channel 3 reads it (6): 5.
			name: "INT4 1x1 stride 1, 4 channels", op: convOp{act: graph.Int8, filter: graph.Int4, batch: 1, inH: 1, inW: 3, inC: 3, outC: 4, kH: 1, kW: 1, sH: 1, sW: 1},
			ref: 5, noDSP: 6, dsp: 6, mve: 11, fn: "arm_convolve_1x1_s4_fast", mveFn: "arm_convolve_1x1_s4_fast",
		},
		{
			// INT4 filter, 3x3 SAME as the first case: the same
			// columns, arm_convolve_even_s4 on MVE (3·3·4 is even).
			name: "INT4 3x3 SAME", op: convOp{act: graph.Int8, filter: graph.Int4, batch: 1, inH: 5, inW: 5, inC: 4, outC: 4, kH: 3, kW: 3, sH: 1, sW: 1, same: true},
			ref: 27, noDSP: 24, dsp: 24, mve: 24, fn: "arm_convolve_s4", mveFn: "arm_convolve_even_s4",
		},
	}
	ref, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.True(t, tt.op.geometry())
			p, ok := tt.op.place(t, ref)
			require.True(t, ok)
			assert.Equal(t, tt.ref, p.Lo, "tflm-reference")
			most := p.Lo
			for i, want := range []int64{tt.noDSP, tt.dsp, tt.mve} {
				isa := isas[i]
				p, ok := tt.op.place(t, cmsisOn(t, isa))
				if want == none {
					assert.False(t, ok, "%v: no contract", isa)
					most = none
					continue
				}
				require.True(t, ok, "%v", isa)
				assert.Equal(t, want, p.Lo, "%v", isa)
				fn := tt.fn
				if isa == kernels.MVE {
					fn = tt.mveFn
				}
				assert.Contains(t, p.Source, fn+".c ", "%v runs %s", isa, fn)
				if most != none {
					most = max(most, p.Lo)
				}
			}
			// The default, every library on every path: the windows'
			// intersection.
			anyLib, err := kernels.Lookup(kernels.Any)
			require.NoError(t, err)
			p, ok = tt.op.place(t, anyLib)
			if most == none {
				assert.False(t, ok, "any: no contract where a member has none")
				return
			}
			require.True(t, ok)
			assert.Equal(t, most, p.Lo, "any")
		})
	}
}

// window lists the input elements output pixel q reads (every channel
// of its in-image taps).
func (c convOp) window(q int64) []int64 {
	per := c.outH * c.outW
	b, oy, ox := q/per, q%per/c.outW, q%c.outW
	var out []int64
	for fy := range c.kH {
		y := oy*c.sH - c.padH + fy*c.dH
		for fx := range c.kW {
			x := ox*c.sW - c.padW + fx*c.dW
			if y < 0 || y >= c.inH || x < 0 || x >= c.inW {
				continue
			}
			for ch := range c.inC {
				out = append(out, ((b*c.inH+y)*c.inW+x)*c.inC+ch)
			}
		}
	}
	return out
}

// cmsisRun runs CMSIS-NN's loops for c on path isa, written again here
// from CMSIS-NN's sources (arm_convolve_wrapper_s8/_s4/_s16 and what they
// call), over one memory holding the output at byte 0 and the input at
// byte d: every read of an input element checks whether a write has
// landed on it. It returns whether one had, and false for ran when the
// kernel has no run to check (it fails, or computes from input it should
// not read).
type cmsisRun struct {
	c       convOp
	d       int64
	written map[int64]bool
	bad     bool
}

func (r *cmsisRun) read(elems ...int64) {
	for _, x := range elems {
		for b := range r.c.elem {
			r.bad = r.bad || r.written[r.d+x*r.c.elem+b]
		}
	}
}

func (r *cmsisRun) write(q int64, channels ...int64) {
	for _, k := range channels {
		for b := range r.c.elem {
			r.written[(q*r.c.outC+k)*r.c.elem+b] = true
		}
	}
}

func (r *cmsisRun) all(q int64) {
	for k := range r.c.outC {
		r.write(q, k)
	}
}

// columns: n windows copied, then those pixels written, per batch.
func (r *cmsisRun) columns(n int64) {
	c, per := r.c, r.c.outH*r.c.outW
	for b := range c.batch {
		for s := b * per; s < (b+1)*per; s += n {
			e := min(s+n, (b+1)*per)
			for q := s; q < e; q++ {
				r.read(c.window(q)...)
			}
			for q := s; q < e; q++ {
				r.all(q)
			}
		}
	}
}

// mve is arm_nn_mat_mult_nt_t_s8 (or _s4) on MVE over pixels rows.
func (r *cmsisRun) mve(rows []int64, s4 bool) {
	i := 0
	block := func(n int) {
		for k := range r.c.outC {
			for _, q := range rows[i : i+n] {
				r.read(r.c.window(q)...)
			}
			for _, q := range rows[i : i+n] {
				r.write(q, k)
			}
		}
		i += n
	}
	for i+4 <= len(rows) {
		block(4)
	}
	if s4 && i+3 <= len(rows) {
		block(3)
	}
	if s4 && i+2 <= len(rows) {
		block(2)
	}
	for ; i < len(rows); i++ {
		r.lone(rows[i])
	}
}

// lone is one row read for every channel, 4 channels stored at a time.
func (r *cmsisRun) lone(q int64) {
	for k := range r.c.outC {
		r.read(r.c.window(q)...)
		if k%4 == 3 {
			r.write(q, k-3, k-2, k-1, k)
		}
	}
	for k := r.c.outC - r.c.outC%4; k < r.c.outC; k++ {
		r.write(q, k)
	}
}

// dsp is arm_nn_mat_mult_nt_t_s8 without MVE.
func (r *cmsisRun) dsp(rows []int64) {
	c := r.c.outC
	for k := int64(0); k+2 <= c; k += 2 {
		for i := 0; i < len(rows); i += 2 {
			pair := rows[i:min(i+2, len(rows))]
			for _, q := range pair {
				r.read(r.c.window(q)...)
			}
			for _, q := range pair {
				r.write(q, k, k+1)
			}
		}
	}
	if c%2 == 1 {
		for _, q := range rows {
			r.read(r.c.window(q)...)
			r.write(q, c-1)
		}
	}
}

// dspS4 is arm_nn_mat_mult_nt_t_s4 without MVE.
func (r *cmsisRun) dspS4(rows []int64) {
	c := r.c.outC
	for g := int64(0); g+4 <= c; g += 4 {
		for i := 0; i < len(rows); i += 2 {
			pair := rows[i:min(i+2, len(rows))]
			for _, q := range pair {
				w := r.c.window(q)
				r.read(w...)
				if len(w)%2 == 1 {
					r.read(w[0]) // the spilled column's element
				}
			}
			for _, q := range pair {
				r.write(q, g, g+2)
			}
			for _, q := range pair {
				w := r.c.window(q)
				if len(w)%2 == 1 {
					w = w[1:]
				}
				r.read(w...)
			}
			for _, q := range pair {
				r.write(q, g+1, g+3)
			}
		}
	}
	for k := c - c%4; k < c; k++ {
		for i := 0; i < len(rows); i += 2 {
			pair := rows[i:min(i+2, len(rows))]
			for _, q := range pair {
				r.read(r.c.window(q)...)
			}
			for _, q := range pair {
				r.write(q, k)
			}
		}
	}
}

func span(a, b int64) []int64 {
	var out []int64
	for q := a; q < b; q++ {
		out = append(out, q)
	}
	return out
}

// run runs the kernel; ran false when it has no run to check.
func (r *cmsisRun) run(isa kernels.ISA) (ran bool) {
	c := r.c
	s4, s16 := c.filter == graph.Int4, c.act == graph.Int16
	n := c.batch * c.outH * c.outW
	product := func(rows []int64) {
		switch {
		case isa == kernels.MVE:
			r.mve(rows, s4)
		case s4:
			r.dspS4(rows)
		default:
			r.dsp(rows)
		}
	}
	columns := int64(2)
	if isa == kernels.MVE {
		columns = 4
	}
	grouped := c.filterC != c.inC
	switch {
	case s16 || grouped:
		if grouped {
			return false
		}
		r.columns(columns)
	case c.padH == 0 && c.padW == 0 && c.kH == 1 && c.kW == 1 && c.dH == 1 && c.dW == 1:
		if c.sH == 1 && c.sW == 1 {
			product(span(0, n))
			break
		}
		for a := int64(0); a < n; a += c.outW {
			product(span(a, a+c.outW))
		}
	case c.inH == 1 && c.dW == 1 && c.kH == 1 && (c.sW*c.inC)%4 == 0 && isa == kernels.MVE:
		// arm_convolve_1_x_n_s8/_s4 on MVE
		total := (c.outW-1)*c.sW + c.kW - c.inW
		asym := total % 2
		if c.padW*2+asym != total {
			return false
		}
		var left, right int64
		if c.padW+asym != 0 {
			right = max(1, (c.padW+asym+c.sW-1)/c.sW)
		}
		if c.padW != 0 {
			left = max(1, (c.padW+c.sW-1)/c.sW)
		}
		middle := max(c.outW-left-right, 0)
		if left+middle+right != c.outW {
			if s4 {
				return false
			}
			r.columns(4)
			break
		}
		// The kernel reads past the row for a left pixel, or (s8) its
		// right copy is not the first right pixel's window.
		if left > 0 && (left-1)*c.sW+c.kW-1-c.padW >= c.inW ||
			!s4 && right > 0 && c.sW*(left+middle)-c.padW+c.kW-1 != c.inW {
			return false
		}
		for b := range c.batch {
			base := b * c.outW
			lefts, mids, rights := span(base, base+left), span(base+left, base+left+middle), span(base+left+middle, base+c.outW)
			for _, q := range lefts {
				if s4 {
					r.lone(q)
					continue
				}
				r.read(c.window(q)...)
			}
			for _, q := range lefts {
				if !s4 {
					r.all(q)
				}
			}
			r.mve(mids, s4)
			for _, q := range rights {
				if s4 {
					r.lone(q)
					continue
				}
				r.read(c.window(q)...)
			}
			for _, q := range rights {
				if !s4 {
					r.all(q)
				}
			}
		}
	default:
		r.columns(columns)
	}
	return true
}

// clobbers runs c's kernel on path isa with the input d bytes after the
// output and reports whether a read found a write on it.
func (c convOp) clobbers(isa kernels.ISA, d int64) (clobbered, ran bool) {
	r := &cmsisRun{c: c, d: d, written: map[int64]bool{}}
	ran = r.run(isa)
	return r.bad, ran
}

// TestCMSISNNConvAgainstTheKernelLoops: on random convolutions of every
// family (INT8, INT4 filters, INT16) and path, the input at the contract's
// least offset is never read after the output is written over it in a
// run of CMSIS-NN's loops, and one byte earlier it is: Lo is exact. Where
// the loops have no run to check, there is no contract.
func TestCMSISNNConvAgainstTheKernelLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 29))
	libs := map[kernels.ISA]*kernels.Library{}
	for _, isa := range isas {
		libs[isa] = cmsisOn(t, isa)
	}
	checked := map[string]int{}
	for n := 0; n < 1500; n++ {
		c := convOp{act: graph.Int8, filter: graph.Int8, batch: 1 + rng.Int64N(2), inH: 1 + rng.Int64N(6), inW: 1 + rng.Int64N(9),
			inC: 1 + rng.Int64N(6), outC: 1 + rng.Int64N(11), kH: 1 + rng.Int64N(3), kW: 1 + rng.Int64N(4),
			sH: 1 + rng.Int64N(3), sW: 1 + rng.Int64N(3), dH: 1 + rng.Int64N(2), dW: 1 + rng.Int64N(2), same: rng.IntN(2) == 0}
		switch rng.IntN(4) {
		case 0:
			c.kH, c.kW, c.dH, c.dW = 1, 1, 1, 1
		case 1:
			c.inH, c.kH, c.dW = 1, 1, 1
			c.inC = 4 * (1 + rng.Int64N(2))
		}
		switch rng.IntN(5) {
		case 0:
			c.filter = graph.Int4
		case 1:
			c.act = graph.Int16
		}
		if c.inC%2 == 0 && rng.IntN(8) == 0 {
			c.filterC = c.inC / 2
			c.outC = 2 * (1 + rng.Int64N(3))
		}
		if !c.geometry() {
			continue
		}
		inSize := c.batch * c.inH * c.inW * c.inC * c.elem
		for _, isa := range isas {
			p, ok := c.place(t, libs[isa])
			if !ok {
				// No contract: the loops have no run to check, or write
				// over their input before reading it again from the
				// first pixel on (a product's several passes).
				if _, ran := c.clobbers(isa, 1<<40); ran {
					clobbered, _ := c.clobbers(isa, c.batch*c.outH*c.outW*c.outC*c.elem-c.outC*c.elem)
					assert.True(t, clobbered, "%v on %v: no contract, yet the input may start in the output's last pixel", c, isa)
				}
				why := "grouped"
				if c.filterC == c.inC {
					why = "other"
				}
				checked[fmt.Sprintf("%s none (%s)", isa.PathName(), why)]++
				continue
			}
			clobbered, ran := c.clobbers(isa, p.Lo)
			require.True(t, ran, "%v on %v: a contract, but no run", c, isa)
			assert.False(t, clobbered, "%v on %v: the input at Lo %d", c, isa, p.Lo)
			if p.Lo > -inSize {
				clobbered, _ = c.clobbers(isa, p.Lo-1)
				assert.True(t, clobbered, "%v on %v: one byte before Lo %d must clobber a read", c, isa, p.Lo)
			}
			for _, d := range []int64{p.Lo + 1, (p.Lo + p.Hi) / 2, p.Hi} {
				clobbered, _ = c.clobbers(isa, d)
				assert.False(t, clobbered, "%v on %v: the input %d bytes after the output (Lo %d)", c, isa, d, p.Lo)
			}
			fn := p.Source[strings.Index(p.Source, "-> ")+3:]
			checked[isa.PathName()+" "+fn[:strings.Index(fn, ".c ")]]++
		}
	}
	for k, v := range checked {
		t.Logf("%s: %d", k, v)
	}
	assert.Len(t, checked, 7+7+10+6, "every function of every code path was checked, and cases of no contract")
}

// TestCMSISNNConvNoContract lists the operators CMSIS-NN's kernels have
// no contract for, on the paths named, and checks the others have one.
func TestCMSISNNConvNoContract(t *testing.T) {
	tests := []struct {
		name string
		op   convOp
		none []kernels.ISA
	}{
		// arm_convolve_s8 sweeps the whole output once per group.
		{"a grouped convolution", convOp{act: graph.Int8, batch: 1, inH: 4, inW: 4, inC: 4, filterC: 2, outC: 4, kH: 3, kW: 3, sH: 1, sW: 1, same: true},
			isas},
		// arm_convolve_s16 reads every input channel for every output
		// channel, groups or not.
		{"a grouped INT16 convolution", convOp{act: graph.Int16, batch: 1, inH: 4, inW: 4, inC: 4, filterC: 2, outC: 2, kH: 3, kW: 3, sH: 1, sW: 1, same: true},
			isas},
		// Without MVE the product reads every pixel again for each pair
		// of output channels.
		{"1x1 stride 1, 8 channels", convOp{act: graph.Int8, batch: 1, inH: 3, inW: 3, inC: 4, outC: 8, kH: 1, kW: 1, sH: 1, sW: 1},
			[]kernels.ISA{kernels.NoDSP, kernels.DSP}},
		// ... and with INT4 filters for each group of 4.
		{"INT4 1x1 stride 1, 6 channels", convOp{act: graph.Int8, filter: graph.Int4, batch: 1, inH: 3, inW: 3, inC: 4, outC: 6, kH: 1, kW: 1, sH: 1, sW: 1},
			[]kernels.ISA{kernels.NoDSP, kernels.DSP}},
		// arm_convolve_1_x_n_s8 on MVE: a total padding of -1 still
		// counts a right pixel, whose last tap it takes from padding.
		{"1x3 VALID stride 2 over 6 columns", convOp{act: graph.Int8, batch: 1, inH: 1, inW: 6, inC: 4, outC: 3, kH: 1, kW: 3, sH: 2, sW: 2},
			[]kernels.ISA{kernels.MVE}},
		// ... two padded taps in the first right pixel: pixels past the
		// row taken as data.
		{"1x5 SAME stride 2 over 9 columns", convOp{act: graph.Int8, batch: 1, inH: 1, inW: 9, inC: 4, outC: 3, kH: 1, kW: 5, sH: 2, sW: 2, same: true},
			[]kernels.ISA{kernels.MVE}},
		// ... and it fails (pad_x·2 + asym_pad is not the total, -2),
		// with INT4 filters too.
		{"1x3 VALID stride 3 over 8 columns", convOp{act: graph.Int8, batch: 1, inH: 1, inW: 8, inC: 4, outC: 3, kH: 1, kW: 3, sH: 3, sW: 3},
			[]kernels.ISA{kernels.MVE}},
		{"INT4 1x3 VALID stride 3 over 8 columns", convOp{act: graph.Int8, filter: graph.Int4, batch: 1, inH: 1, inW: 8, inC: 4, outC: 3, kH: 1, kW: 3, sH: 3, sW: 3},
			[]kernels.ISA{kernels.MVE}},
		// arm_convolve_1_x_n_s4 computes the total padding of -1 right
		// (the right pixel from the input, arm_nn_mat_mul_core_1x_s4).
		{"INT4 1x3 VALID stride 2 over 6 columns", convOp{act: graph.Int8, filter: graph.Int4, batch: 1, inH: 1, inW: 6, inC: 4, outC: 3, kH: 1, kW: 3, sH: 2, sW: 2},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.True(t, tt.op.geometry())
			for _, isa := range isas {
				_, ok := tt.op.place(t, cmsisOn(t, isa))
				assert.Equal(t, !slices.Contains(tt.none, isa), ok, "%v: a contract", isa)
			}
		})
	}
	// FLOAT32 runs the reference kernel (cmsisContracts' rule).
	f := convOp{act: graph.Float32, filter: graph.Float32, batch: 1, inH: 5, inW: 5, inC: 4, outC: 4, kH: 3, kW: 3, sH: 1, sW: 1, same: true}
	require.True(t, f.geometry())
	for _, isa := range isas {
		p, ok := f.place(t, cmsisOn(t, isa))
		require.True(t, ok)
		assert.Equal(t, int64(27*4), p.Lo, "the reference's window, in 4-byte elements")
		assert.Contains(t, p.Source, "reference_ops::Conv")
	}
}
