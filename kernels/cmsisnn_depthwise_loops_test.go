package kernels_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// dwSim runs the order of a CMSIS-NN depthwise function's memory
// accesses over one memory that holds the output at byte 0 and the input
// at byte d, and records the first input element read after a write
// landed on one of its bytes (-1: none). Each function's order is written
// here again from CMSIS-NN's loops (cited at each), apart from the
// windows the contracts compute.
type dwSim struct {
	c         dwCase
	d, e      int
	written   map[int]bool
	clobbered int
}

func newDWSim(c dwCase, d int) *dwSim {
	return &dwSim{c: c, d: d, e: int(c.typ.Bits() / 8), written: map[int]bool{}, clobbered: -1}
}

// read reads input element elem (batches included).
func (s *dwSim) read(elem int) {
	for b := 0; b < s.e; b++ {
		if s.written[s.d+elem*s.e+b] && s.clobbered < 0 {
			s.clobbered = elem
		}
	}
}

// write writes output element elem (batches included).
func (s *dwSim) write(elem int) {
	for b := 0; b < s.e; b++ {
		s.written[elem*s.e+b] = true
	}
}

// taps returns the input pixels (within a batch, row-major) output pixel
// (oy, ox) reads, in the window's order, in-image only.
func (s *dwSim) taps(oy, ox int) []int {
	c := s.c
	var out []int
	for fy := 0; fy < c.filterH; fy++ {
		y := oy*c.strideH - c.padH + fy*c.dilationH
		for fx := 0; fx < c.filterW; fx++ {
			x := ox*c.strideW - c.padW + fx*c.dilationW
			if y >= 0 && y < c.inH && x >= 0 && x < c.inW {
				out = append(out, y*c.inW+x)
			}
		}
	}
	return out
}

// channels runs the kernels that write each pixel's output channels in
// groups, each after reading the windows of the input channels it needs:
// group(k) is the size of the group starting at output channel k.
// Group size 1 is the reference kernels' order and
// depthwise_conv_s8_generic's (arm_depthwise_conv_s8.c 186-256) and
// depthwise_conv_s16_generic_s16's (arm_depthwise_conv_s16.c 158-228).
func (s *dwSim) channels(group func(k int) int) {
	c := s.c
	for b := 0; b < c.batch; b++ {
		for oy := 0; oy < c.outH; oy++ {
			for ox := 0; ox < c.outW; ox++ {
				taps := s.taps(oy, ox)
				for k := 0; k < c.outC; {
					n := group(k)
					for j := k; j < k+n; j++ {
						for _, p := range taps {
							s.read((b*c.inH*c.inW+p)*c.inC + j/c.multiplier)
						}
					}
					for j := k; j < k+n; j++ {
						s.write(((b*c.outH+oy)*c.outW+ox)*c.outC + j)
					}
					k += n
				}
			}
		}
	}
}

// pixelGroups runs the "opt" kernels: channel blocks of block channels,
// in each the pixels in groups of size, every group's windows (the
// block's channels) read into scratch and then the group's pixels written
// (arm_depthwise_conv_s8_opt.c 96-209 on MVE with 4 and 124, 210-403 on
// DSP with 1 and every channel; arm_depthwise_conv_s4_opt.c likewise).
func (s *dwSim) pixelGroups(size, block int) {
	c := s.c
	pixels := c.outH * c.outW
	for b0 := 0; b0 < c.inC; b0 += block {
		b1 := min(b0+block, c.inC)
		for p := 0; p < pixels; p += size {
			end := min(p+size, pixels)
			for q := p; q < end; q++ {
				for _, t := range s.taps(q/c.outW, q%c.outW) {
					for ch := b0; ch < b1; ch++ {
						s.read(t*c.inC + ch)
					}
				}
			}
			for q := p; q < end; q++ {
				for ch := b0; ch < b1; ch++ {
					s.write(q*c.outC + ch)
				}
			}
		}
	}
}

// matMul runs arm_nn_mat_mult_nt_t_s8's MVE code
// (arm_nn_mat_mult_nt_t_s8.c 65-223) over rows read from the input: row i
// reads the input elements rows[i] and writes output pixel pixels[i]; four
// rows at a time, each output channel's value of the four computed from
// the rows and written (scatter store); then one row at a time, written
// four channels at a time and the rest at the end.
func (s *dwSim) matMul(rows [][]int, pixels []int) {
	ch := s.c.outC
	readRow := func(i int) {
		for _, e := range rows[i] {
			s.read(e)
		}
	}
	i := 0
	for ; i+4 <= len(rows); i += 4 {
		for k := 0; k < ch; k++ {
			for j := i; j < i+4; j++ {
				readRow(j)
			}
			for j := i; j < i+4; j++ {
				s.write(pixels[j]*ch + k)
			}
		}
	}
	for ; i < len(rows); i++ {
		for k := 0; k < ch; k++ {
			readRow(i)
			if k%4 == 3 {
				for j := k - 3; j <= k; j++ {
					s.write(pixels[i]*ch + j)
				}
			}
		}
		for j := ch / 4 * 4; j < ch; j++ {
			s.write(pixels[i]*ch + j)
		}
	}
}

// im2col runs arm_convolve_s8's MVE code (arm_convolve_s8.c 121-391) for
// one input channel: per batch, four pixels' windows copied, then their
// channels written.
func (s *dwSim) im2col() {
	c := s.c
	pixels := c.outH * c.outW
	for b := 0; b < c.batch; b++ {
		for p := 0; p < pixels; p += 4 {
			end := min(p+4, pixels)
			for q := p; q < end; q++ {
				for _, t := range s.taps(q/c.outW, q%c.outW) {
					s.read(b*c.inH*c.inW + t)
				}
			}
			for q := p; q < end; q++ {
				for k := 0; k < c.outC; k++ {
					s.write((b*pixels+q)*c.outC + k)
				}
			}
		}
	}
}

// run runs the function TFLM's cmsis_nn kernel picks on path isa
// (depthwise_conv.cc Eval; the wrappers' conditions, written again here)
// and returns its name; "" for a 1xN convolution whose padding makes
// CMSIS-NN fail (no run).
func (s *dwSim) run(isa kernels.ISA) string {
	c := s.c
	opt := c.multiplier == 1 && c.batch == 1 && c.dilationH == 1 && c.dilationW == 1
	all := func(int) int { return 1 }
	switch {
	case c.typ == graph.Int16:
		s.channels(all)
		return "depthwise_conv_s16_generic_s16"
	case c.int4:
		switch {
		case !opt:
			// depthwise_conv_s4_generic: two channels at a time for an
			// even channel count and multiplier 1 or an even multiplier.
			if c.inC%2 == 0 && (c.multiplier == 1 || c.multiplier%2 == 0) {
				s.channels(func(int) int { return 2 })
			} else {
				s.channels(all)
			}
			return "depthwise_conv_s4_generic"
		case isa == kernels.MVE:
			s.pixelGroups(4, 124)
			return "arm_depthwise_conv_s4_opt (MVE"
		}
		s.pixelGroups(1, c.inC)
		return "arm_depthwise_conv_s4_opt (without MVE"
	case isa == kernels.MVE && c.inC == 1 && c.outC > 1:
		return s.conv()
	case opt && isa != kernels.MVE && c.filterH == 3 && c.filterW == 3 && c.padH <= 1 && c.padW <= 1:
		// arm_depthwise_conv_3x3_s8: four channels, then one at a time.
		s.channels(func(k int) int {
			if k+4 <= c.inC {
				return 4
			}
			return 1
		})
		return "arm_depthwise_conv_3x3_s8"
	case opt && isa == kernels.MVE:
		s.pixelGroups(4, 124)
		return "arm_depthwise_conv_s8_opt (MVE"
	case opt && isa == kernels.DSP:
		s.pixelGroups(1, c.inC)
		return "arm_depthwise_conv_s8_opt (DSP"
	case c.multiplier%4 == 0 && c.batch == 1 && c.dilationH == 1 && c.dilationW == 1:
		s.channels(func(int) int { return 4 })
		return "depthwise_conv_s8_mult_4"
	}
	s.channels(all)
	return "depthwise_conv_s8_generic"
}

// conv runs the convolution MVE turns a depthwise convolution of one
// input channel into (arm_convolve_wrapper_s8.c).
func (s *dwSim) conv() string {
	c := s.c
	switch {
	case c.padH == 0 && c.padW == 0 && c.filterH == 1 && c.filterW == 1 && c.dilationH == 1 && c.dilationW == 1:
		var rows [][]int
		var pixels []int
		flush := func() {
			s.matMul(rows, pixels)
			rows, pixels = nil, nil
		}
		for b := 0; b < c.batch; b++ {
			for oy := 0; oy < c.outH; oy++ {
				for ox := 0; ox < c.outW; ox++ {
					rows = append(rows, []int{(b*c.inH+oy*c.strideH)*c.inW + ox*c.strideW})
					pixels = append(pixels, (b*c.outH+oy)*c.outW+ox)
				}
				if c.strideH != 1 || c.strideW != 1 { // arm_convolve_1x1_s8: a product per output row
					flush()
				}
			}
		}
		if c.strideH != 1 || c.strideW != 1 {
			return "arm_convolve_1x1_s8 ("
		}
		flush() // arm_convolve_1x1_s8_fast: one product over every pixel
		return "arm_convolve_1x1_s8_fast"
	case c.inH == 1 && c.dilationW == 1 && c.filterH == 1 && c.strideW%4 == 0:
		return s.oneByN()
	}
	s.im2col()
	return "arm_convolve_s8 ("
}

// oneByN runs arm_convolve_1_x_n_s8's MVE code (arm_convolve_1_x_n_s8.c
// 69-212).
func (s *dwSim) oneByN() string {
	c := s.c
	total := (c.outW-1)*c.strideW + c.filterW - c.inW
	asym := total % 2
	if c.padW*2+asym != total {
		return ""
	}
	right, left := 0, 0
	if c.padW+asym != 0 {
		right = max(1, (c.padW+asym+c.strideW-1)/c.strideW)
	}
	if c.padW != 0 {
		left = max(1, (c.padW+c.strideW-1)/c.strideW)
	}
	unpadded := max(c.outW-(right+left), 0)
	if right+unpadded+left != c.outW {
		s.im2col()
		return "arm_convolve_s8 ("
	}
	for b := 0; b < c.batch; b++ {
		in := b * c.inW
		copyRange := func(from, n int) {
			for i := from; i < from+n; i++ {
				if i < c.inW { // a copy past the input reads bytes no output uses
					s.read(in + i)
				}
			}
		}
		writePixels := func(from, to int) {
			for p := from; p < to; p++ {
				for k := 0; k < c.outC; k++ {
					s.write((b*c.outW+p)*c.outC + k)
				}
			}
		}
		if left > 0 {
			copyRange(0, c.filterW)
			writePixels(0, left)
		}
		var rows [][]int
		var pixels []int
		for r := 0; r < unpadded; r++ {
			var row []int
			for i := 0; i < c.filterW; i++ {
				row = append(row, in+c.strideW*(left+r)-c.padW+i)
			}
			rows, pixels = append(rows, row), append(pixels, b*c.outW+left+r)
		}
		s.matMul(rows, pixels)
		if right > 0 {
			copyRange(c.strideW*(left+unpadded)-c.padW, c.filterW-1)
			writePixels(left+unpadded, c.outW)
		}
	}
	return "arm_convolve_1_x_n_s8"
}

// TestCMSISNNDepthwiseAgainstTheKernelLoops: on random depthwise
// convolutions (INT8 with INT8 or INT4 filters, INT16; multipliers 1-8,
// one and two batches, strides, dilations, one input channel, 1xN shapes,
// more channels than an MVE block), on each code path, the contract names
// the function dwSim runs, and in a run of its loops the input at the
// window's Lo is never read after a write landed on it, nor at a few
// later offsets; one byte earlier it is: Lo is exact. A one-point window
// (MVE's channel blocks) is safe at its point and a pixel later, and
// mostly unsafe a byte to either side (not always: with one output pixel
// a block writes nothing another block reads).
func TestCMSISNNDepthwiseAgainstTheKernelLoops(t *testing.T) {
	cmsis, err := kernels.Lookup(kernels.CMSISNN)
	require.NoError(t, err)
	ref := tflmRef(t)
	rng := rand.New(rand.NewPCG(5, 17))
	checked := map[string]int{}
	var points [2]int // a byte either side of a point: tried, clobbered
	for n := 0; n < 600; n++ {
		typ := graph.Int8
		if n%7 == 0 {
			typ = graph.Int16
		}
		c := dwCase{windowCase: windowCase{code: graph.DepthwiseConv2D, typ: typ, batch: 1 + rng.IntN(2),
			inH: 1 + rng.IntN(6), inW: 1 + rng.IntN(7), inC: 1 + rng.IntN(6), filterH: 1 + rng.IntN(3), filterW: 1 + rng.IntN(3),
			strideH: 1 + rng.IntN(2), strideW: 1 + rng.IntN(3), dilationH: 1, dilationW: 1, same: rng.IntN(2) == 0,
			multiplier: 1 + rng.IntN(2)}}
		switch rng.IntN(7) {
		case 0: // one input channel: MVE's convolutions
			c.inC, c.multiplier = 1, 1+rng.IntN(6)
			if rng.IntN(2) == 0 {
				c.filterH, c.filterW = 1, 1
			}
		case 1: // 1xN
			c.inC, c.multiplier, c.inH, c.filterH = 1, 1+rng.IntN(5), 1, 1
			c.strideW, c.inW, c.filterW = 4*(1+rng.IntN(2)), 4+rng.IntN(12), 1+rng.IntN(5)
		case 2: // several MVE blocks
			c.inC, c.multiplier, c.batch, c.inH, c.inW = 125+rng.IntN(130), 1, 1, 1+rng.IntN(3), 1+rng.IntN(4)
		case 3:
			c.dilationH, c.dilationW = 1+rng.IntN(2), 1+rng.IntN(2)
		case 4:
			c.multiplier = 4 * (1 + rng.IntN(2))
		case 5: // the "opt" and 3x3 kernels
			c.multiplier, c.batch = 1, 1
		}
		c.outC = c.inC * c.multiplier
		c.int4 = typ == graph.Int8 && rng.IntN(4) == 0
		if !c.geometry() {
			continue
		}
		e := int64(c.typ.Bits() / 8)
		inSize := int64(c.batch*c.inH*c.inW*c.inC) * e
		outSize := int64(c.batch*c.outH*c.outW*c.outC) * e
		for _, isa := range kernels.Paths() {
			p, ok := dwPlace(t, cmsis.On(isa), c)
			fn := newDWSim(c, 0).run(isa)
			if fn == "" {
				assert.False(t, ok, "%v on %v: CMSIS-NN fails, so no contract", c, isa)
				continue
			}
			require.True(t, ok, "%v on %v", c, isa)
			assert.Contains(t, p.Source, fn, "%v on %v", c, isa)
			clobber := func(d int64) int {
				s := newDWSim(c, int(d))
				s.run(isa)
				return s.clobbered
			}
			key := isa.PathName() + " " + strings.TrimRight(fn, " (")
			if isa == kernels.MVE && c.typ == graph.Int8 && c.inC > 124 && c.multiplier == 1 && c.batch == 1 && c.dilationH == 1 && c.dilationW == 1 {
				require.Equal(t, p.Lo, p.Hi, "%v: channel blocks: one point", c)
				assert.Zero(t, p.Lo%int64(c.inC), "%v: the point is a whole number of pixels", c)
				assert.Equal(t, -1, clobber(p.Lo), "%v on %v: at the point %d", c, isa, p.Lo)
				if p.Lo+int64(c.inC) <= outSize {
					assert.Equal(t, -1, clobber(p.Lo+int64(c.inC)), "%v on %v: a pixel after the point %d", c, isa, p.Lo)
				}
				for _, d := range []int64{p.Lo - 1, p.Lo + 1} {
					if clobber(d) != -1 {
						points[1]++
					}
					points[0]++
				}
				checked[key+" (point)"]++
				continue
			}
			assert.Equal(t, outSize, p.Hi, "%v", c)
			if r, ok := dwPlace(t, ref, c); ok && (fn == "arm_depthwise_conv_3x3_s8" || fn == "depthwise_conv_s8_mult_4" ||
				fn == "depthwise_conv_s4_generic") {
				// A few channels of one pixel at a time: each group's
				// last element's condition is the reference's.
				assert.LessOrEqual(t, p.Lo, r.Lo, "%v on %v: within the reference's window", c, isa)
				if p.Lo < r.Lo {
					checked[key+" (below the reference's Lo)"]++
				}
			}
			if p.Lo > -inSize {
				assert.NotEqual(t, -1, clobber(p.Lo-1), "%v on %v: one byte before Lo %d must clobber a read", c, isa, p.Lo)
			}
			for _, d := range []int64{p.Lo, p.Lo + 1, (p.Lo + p.Hi) / 2, p.Hi} {
				if d >= p.Lo && d <= p.Hi {
					assert.Equal(t, -1, clobber(d), "%v on %v: the input %d bytes after the output (Lo %d)", c, isa, d, p.Lo)
				}
			}
			checked[key]++
		}
	}
	t.Logf("checked: %v; a byte either side of a point clobbers in %d of %d", checked, points[1], points[0])
	assert.Greater(t, 4*points[1], 3*points[0], "a point is not a window in disguise: a byte either side clobbers mostly")
	for _, fn := range []string{"portable arm_depthwise_conv_3x3_s8", "portable depthwise_conv_s8_generic",
		"portable depthwise_conv_s8_mult_4", "portable depthwise_conv_s16_generic_s16", "portable depthwise_conv_s4_generic",
		"portable arm_depthwise_conv_s4_opt (without MVE", "dsp arm_depthwise_conv_s8_opt (DSP", "dsp arm_depthwise_conv_3x3_s8",
		"mve arm_depthwise_conv_s8_opt (MVE", "mve arm_depthwise_conv_s8_opt (MVE (point)", "mve arm_depthwise_conv_s4_opt (MVE",
		"mve arm_convolve_1x1_s8_fast", "mve arm_convolve_1x1_s8", "mve arm_convolve_s8", "mve arm_convolve_1_x_n_s8"} {
		assert.Greater(t, checked[fn], 3, "cases of %s", fn)
	}
}
