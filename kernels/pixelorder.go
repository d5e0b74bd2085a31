package kernels

// noRead is a pixelOrder's least input element when nothing is read any
// more.
const noRead = int64(1) << 62

// pixelOrder is a sliding window's output as whole pixels in flat
// (batch, out_y, out_x) order, for kernels that compute every channel of
// a pixel from rows of input they read whole: im2col columns, rows of a
// matrix product. Pixel q reads input elements from least[q] on (channel
// 0 of its window's first in-image row and column; -1: it reads none),
// and from(q) is the least element any pixel from q on reads.
//
// A kernel's order is the sequence of its writes (a pixelSchedule): at
// each, write(end, next) says that the output elements below end may
// have been written while next is the least input element the kernel
// still reads (noRead: none). With the input starting D bytes after the
// output, no write clobbers a byte still to be read exactly when
// end·e <= D + next·e at every one of them (e: the element size, one for
// input and output), so Lo is the largest (end - next)·e
// (schedulePlacement).
type pixelOrder struct {
	pixels, perBatch, outW, outC int64
	least                        []int64
	suffix                       []int64 // suffix[q] = from(q); suffix[pixels] = noRead
}

// pixelSchedule emits a kernel's writes in the order it makes them.
type pixelSchedule func(p *pixelOrder, write func(end, next int64))

// pixels returns w's output as a pixelOrder.
func (w *slidingWindow) pixels() *pixelOrder {
	per := w.outH * w.outW
	p := &pixelOrder{pixels: w.batches * per, perBatch: per, outW: w.outW, outC: w.outC}
	p.least = make([]int64, p.pixels)
	p.suffix = make([]int64, p.pixels+1)
	for q := range p.pixels {
		b, rest := q/per, q%per
		row, col := w.firstRow(rest/w.outW), w.firstCol(rest%w.outW)
		p.least[q] = -1
		if row >= 0 && col >= 0 {
			p.least[q] = ((b*w.inH+row)*w.inW + col) * w.inC
		}
	}
	p.suffix[p.pixels] = noRead
	for q := p.pixels - 1; q >= 0; q-- {
		p.suffix[q] = p.suffix[q+1]
		if p.least[q] >= 0 {
			p.suffix[q] = min(p.suffix[q], p.least[q])
		}
	}
	return p
}

// from is the least input element pixel q or a later one reads
// (noRead: none).
func (p *pixelOrder) from(q int64) int64 {
	if q >= p.pixels {
		return noRead
	}
	return p.suffix[max(q, 0)]
}

// at is the least input element pixel q reads (noRead: none).
func (p *pixelOrder) at(q int64) int64 {
	if q < 0 || q >= p.pixels || p.least[q] < 0 {
		return noRead
	}
	return p.least[q]
}

// schedulePlacement is windowPlacement for a kernel that writes in the
// order s: [Lo, Hi] with Lo the largest (end - next)·e over s's writes
// (-inSize when none constrains it), Hi the output's size, and false
// when even Lo leaves no byte of overlap.
func schedulePlacement(w *slidingWindow, s pixelSchedule) (lo, hi int64, ok bool) {
	lo = -noRead
	s(w.pixels(), func(end, next int64) {
		if next != noRead {
			lo = max(lo, (end-next)*w.e)
		}
	})
	if lo == -noRead {
		lo = -w.inSize
	}
	if lo >= w.outSize {
		return 0, 0, false
	}
	return lo, w.outSize, true
}

// lagOrder is windowPlacement's lag n >= 1: pixel p written while the
// windows of pixels p-n+1 onward are still to be read.
func lagOrder(n int64) pixelSchedule {
	return func(p *pixelOrder, write func(end, next int64)) {
		for q := range p.pixels {
			write((q+1)*p.outC, p.from(q-n+1))
		}
	}
}

// columns is an im2col kernel that copies the windows of n pixels at a
// time (fewer at the end of each batch) and then computes and writes
// those pixels from its copy: a block's writes come after all of its
// reads and before the next block's.
func columns(n int64) pixelSchedule {
	return func(p *pixelOrder, write func(end, next int64)) {
		for b0 := int64(0); b0 < p.pixels; b0 += p.perBatch {
			for s := b0; s < b0+p.perBatch; s += n {
				end := min(s+n, b0+p.perBatch)
				write(end*p.outC, p.from(end))
			}
		}
	}
}
