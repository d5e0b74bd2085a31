package kernels

// The orders of CMSIS-NN's depthwise convolutions (cmsisnn_depthwise.go),
// each a window computed from the steps its loops take: reads of the
// input, then writes of the output.

// dwOrder is a kernel's memory accesses at the granularity that decides
// where its input may lie: steps, each reading input bytes (read: the
// least of them, dwNoRead for none) and then writing output bytes (write:
// where the furthest of them ends). A step may read after some of its
// writes only bytes that a later step reads again (dwMatMul's steps
// do), so that the later step's read bounds those writes too.
//
// With the input D bytes after the output, a step's writes land on
// nothing read later exactly when write <= D + (the least byte a later
// step reads), so Lo is the largest write(s) - read(t) over steps s < t:
// dwOrder keeps it as the steps come, with the furthest write so far,
// in constant memory.
type dwOrder struct {
	written int64 // where the writes so far end; -dwNoRead before any
	lo      int64 // the largest written - read so far; -dwNoRead for none
}

// dwNoRead is a step that reads nothing.
const dwNoRead = int64(1) << 62

func newDWOrder() *dwOrder { return &dwOrder{written: -dwNoRead, lo: -dwNoRead} }

func (o *dwOrder) step(read, write int64) {
	if o.written != -dwNoRead && read != dwNoRead {
		o.lo = max(o.lo, o.written-read)
	}
	o.written = max(o.written, write)
}

// place returns the window of a kernel of order o: [Lo, the output's
// size] (an input starting later shares no byte). With nothing read
// after any write, Lo is -inSize; a Lo at or past the output's end leaves
// no window.
func (o *dwOrder) place(inSize, outSize int64) (lo, hi int64, ok bool) {
	lo = o.lo
	if lo == -dwNoRead {
		lo = -inSize
	}
	if lo >= outSize {
		return 0, 0, false
	}
	return lo, outSize, true
}

// first returns the least input element, within its batch, that output
// pixel p (flat within a batch) reads: channel 0 of its window's first
// in-image row and column; -1 when its window misses the image.
func (g dwGeom) first(p int64) int64 {
	row := firstIn(p/g.outW*g.sh-g.ph, g.inH, g.fh, g.dh)
	col := firstIn(p%g.outW*g.sw-g.pw, g.inW, g.fw, g.dw)
	if row < 0 || col < 0 {
		return -1
	}
	return (row*g.inW + col) * g.inC
}

// readFirst adds to o the steps of a kernel that, batch by batch, copies
// the windows of size pixels at a time (every input channel, none after
// the last pixel of the batch) and then writes every channel of them:
// one step per group, reading from the least element of the group's
// windows.
func (g dwGeom) readFirst(o *dwOrder, size int64) {
	pixels := g.outH * g.outW
	for b := range g.n {
		for p := int64(0); p < pixels; p += size {
			read := dwNoRead
			end := min(p+size, pixels)
			for q := p; q < end; q++ {
				if f := g.first(q); f >= 0 {
					read = min(read, (b*g.inH*g.inW*g.inC+f)*g.e)
				}
			}
			o.step(read, (b*pixels+end)*g.outC*g.e)
		}
	}
}

// dwPixelGroups is the window of a kernel that copies the windows of size
// pixels (every channel) into scratch and then writes every channel of
// them from scratch, pixel groups in flat order (readFirst). With size 1
// (s8's DSP "opt" kernel, s4's without MVE) the window is windowPlacement's with a lag of
// "0 pixels", which its lags (n >= 1) do not express: a lag of 1 would
// keep a pixel's own window while it is written, one pixel's bytes too
// many.
func dwPixelGroups(g dwGeom, size int64) (int64, int64, bool) {
	o := newDWOrder()
	g.readFirst(o, size)
	return o.place(g.inSize, g.outSize)
}

// dwChannelGroups is the window of a kernel that runs the output
// elements in flat NHWC order, a group of channels of one pixel at a
// time: the windows of the input channels the group needs read, then its
// outputs written. group(k) is the size of the group from output channel
// k: 1 is the reference kernels' order, whose window is
// windowPlacement's in element order; the 3x3 kernel takes 4 channels
// (then 1), mult_4 the 4 outputs of one input channel, the s4 kernel 2
// channels or 2 outputs of one. A group's condition is its last
// element's in the reference's order, and its other elements have none
// of their own, so the window is the reference's or wider: where the
// next group's reads start later than the reference's next element's
// (the pixel's last group before a window further on; an input
// channel's outputs, which mult_4 computes from one read of its window).
func dwChannelGroups(g dwGeom, group func(k int64) int64) (int64, int64, bool) {
	o := newDWOrder()
	pixels := g.outH * g.outW
	for b := range g.n {
		for p := range pixels {
			f := g.first(p)
			base := (b*pixels + p) * g.outC
			for k := int64(0); k < g.outC; {
				n := group(k)
				read := dwNoRead
				if f >= 0 {
					read = (b*g.inH*g.inW*g.inC + f + k/g.mult) * g.e
				}
				o.step(read, (base+k+n)*g.e)
				k += n
			}
		}
	}
	return o.place(g.inSize, g.outSize)
}

// dwOptBlocks is the window of CMSIS-NN's MVE "opt" kernels (a multiplier
// of 1, one batch, no dilation). They take the channels dwBlockMVE at a
// time and, for each block, sweep every pixel in groups of four: the
// block's channels of four windows copied to scratch, then the block's
// channels of the four pixels written (arm_nn_depthwise_conv_nt_t_s8).
//
// With one block (at most 124 channels) that is dwPixelGroups(4). With
// more, block 0 writes a byte of every pixel before block 1 reads any, so
// a window [Lo, out.Size] would need Lo within a pixel of the output's
// end. But with the input a whole number k of pixels after the output
// (D = k·C, C = in.c = out.c), the byte a block writes for channel c of
// pixel p lands on channel c of input pixel p-k: on the block's own
// channels, which no later block reads. Each block then clobbers nothing
// it still reads exactly when one block alone would not, so D is safe
// when it is a multiple of C at or after dwPixelGroups(4)'s Lo (itself a
// multiple of C); other D let a block's writes land on channels another
// block has still to read (not always: with one output pixel a block
// writes nothing another reads). The window is one such point: the first at or
// after the reference kernels' Lo too, which is at or after every other
// CMSIS-NN path's Lo for the operator (they are the reference's
// conditions, or some of them), so that the sets of paths (cmsis-nn,
// any), which intersect their members' windows, keep it.
func dwOptBlocks(g dwGeom) (int64, int64, bool) {
	lo, hi, ok := dwPixelGroups(g, 4)
	if !ok || g.inC <= dwBlockMVE {
		return lo, hi, ok
	}
	at := dwCeilMultiple(max(lo, g.refLo), g.inC*g.e)
	if at > g.outSize {
		return 0, 0, false
	}
	return at, at, true
}

// dwCeilMultiple is the least multiple of m (positive) at or after x.
func dwCeilMultiple(x, m int64) int64 {
	r := x % m
	if r < 0 {
		r += m
	}
	if r == 0 {
		return x
	}
	return x + m - r
}

// dwRow is one row a matrix product reads from the input: the least
// byte it reads, and the output pixel (flat, batches included) it writes.
type dwRow struct{ read, pixel int64 }

// dwMatMul adds to o the steps of one call of arm_nn_mat_mult_nt_t_s8's
// MVE code (Source/NNSupportFunctions/arm_nn_mat_mult_nt_t_s8.c 65-223)
// on rows read from the input, given one at a time, for an output of c
// channels of one byte: rows four at a time, each output channel's byte
// of the four pixels written after reading the four rows for it, so the
// rows are read again after every channel but the last is written; a
// leftover row (end) is read for each channel and its bytes written four
// channels at a time after the fourth's reads, the last one to three
// after every read.
type dwMatMul struct {
	o    *dwOrder
	c    int64
	rows [4]dwRow
	n    int
}

func (mm *dwMatMul) row(r dwRow) {
	mm.rows[mm.n] = r
	if mm.n++; mm.n < 4 {
		return
	}
	read := min(mm.rows[0].read, mm.rows[1].read, mm.rows[2].read, mm.rows[3].read)
	last := mm.rows[3].pixel
	if mm.c > 1 {
		mm.o.step(read, last*mm.c+mm.c-1) // channels 0..c-2, the rows read again after them
	}
	mm.o.step(read, (last+1)*mm.c)
	mm.n = 0
}

func (mm *dwMatMul) end() {
	for _, r := range mm.rows[:mm.n] {
		if m := (mm.c - 1) / 4; m > 0 {
			mm.o.step(r.read, r.pixel*mm.c+4*m) // the groups of four with a read after them
		}
		mm.o.step(r.read, (r.pixel+1)*mm.c)
	}
	mm.n = 0
}

// dwConvRows is the window of a depthwise convolution of one input
// channel (INT8) that MVE runs as a 1x1 convolution (no padding, 1x1
// filter, no dilation; dwDispatch): with unit strides
// arm_convolve_1x1_s8_fast multiplies every pixel of every batch as one
// matrix of rows of one byte, input byte q for output pixel q; otherwise
// arm_convolve_1x1_s8 runs one product per output row of each batch, its
// rows stride_w bytes apart from the row's start (stride_h input rows per
// output row).
func dwConvRows(g dwGeom) (int64, int64, bool) {
	o := newDWOrder()
	mm := dwMatMul{o: o, c: g.outC}
	for b := range g.n {
		for oy := range g.outH {
			for ox := range g.outW {
				mm.row(dwRow{read: b*g.inH*g.inW + oy*g.sh*g.inW + ox*g.sw, pixel: (b*g.outH+oy)*g.outW + ox})
			}
			if g.sh != 1 || g.sw != 1 {
				mm.end() // one product per output row
			}
		}
	}
	mm.end()
	return o.place(g.inSize, g.outSize)
}

// dwConvIm2colOr1xN is the window of a depthwise convolution of one input
// channel that MVE runs as a general convolution: arm_convolve_s8 copies
// four pixels' windows into scratch, then writes their channels, batch by
// batch (dwPixelGroups(4)). A 1xN one (input height 1, filter height 1,
// no horizontal dilation, stride a multiple of 4) runs
// arm_convolve_1_x_n_s8 when its padding adds up: per batch, the left
// padded outputs from a scratch copy of the input's first filter-width
// bytes, the unpadded ones from the input by the matrix product (their
// rows stride bytes apart), the right padded ones from a scratch copy of
// the bytes they read; arm_convolve_s8 when the counts of padded and
// unpadded outputs do not add up; and no contract where it fails
// (ARM_CMSIS_NN_FAILURE, which TFLM's DCHECK turns into an abort).
func dwConvIm2colOr1xN(g dwGeom) (int64, int64, bool) {
	if dwDispatch(g, MVE) != dwConv1xN {
		return dwPixelGroups(g, 4)
	}
	total := (g.outW-1)*g.sw + g.fw - g.inW
	asym := total % 2 // C's remainder, as Go's
	if g.pw*2+asym != total {
		return 0, 0, false
	}
	var right, left int64
	if g.pw+asym != 0 {
		right = max(1, (g.pw+asym+g.sw-1)/g.sw)
	}
	if g.pw != 0 {
		left = max(1, (g.pw+g.sw-1)/g.sw)
	}
	unpadded := max(g.outW-(right+left), 0)
	if right+unpadded+left != g.outW {
		return dwPixelGroups(g, 4)
	}
	start := g.sw*left - g.pw
	if start < 0 {
		return 0, 0, false
	}
	o := newDWOrder()
	c := g.outC
	mm := dwMatMul{o: o, c: c}
	for b := range g.n {
		in, out := b*g.inW, b*g.outW // one row each
		if left > 0 {
			o.step(in, (out+left)*c)
		}
		for r := range unpadded {
			mm.row(dwRow{read: in + start + r*g.sw, pixel: out + left + r})
		}
		mm.end()
		if right > 0 {
			o.step(in+g.sw*(left+unpadded)-g.pw, (out+g.outW)*c)
		}
	}
	return o.place(g.inSize, g.outSize)
}
