package dsa

import (
	"cmp"
	"context"
	"math"
	"slices"
)

// placer builds one placement at a time over an instance: the pinned
// buffers sit at their offsets, and free buffers are added one by one.
type placer struct {
	in      *instance
	off     []int64
	placed  []bool
	ext     []extent // scratch
	heapPos []int32  // scratch for skyline
}

// extent is the bytes [off, end) of a placed buffer.
type extent struct{ off, end int64 }

func newPlacer(in *instance) *placer {
	pl := &placer{in: in, off: make([]int64, len(in.bufs)), placed: make([]bool, len(in.bufs))}
	for i, b := range in.bufs {
		if b.Fixed != nil {
			pl.off[i] = *b.Fixed
		}
	}
	return pl
}

// reset removes every free buffer, leaving the pinned ones.
func (pl *placer) reset() {
	for _, i := range pl.in.pinned {
		pl.placed[i] = true
	}
	for _, i := range pl.in.free {
		pl.placed[i] = false
		pl.off[i] = 0
	}
}

// extents returns the placed buffers live with buffer i, by offset.
func (pl *placer) extents(i int32) []extent {
	pl.ext = pl.ext[:0]
	for _, j := range pl.in.neighbours(i) {
		if pl.placed[j] {
			pl.ext = append(pl.ext, extent{pl.off[j], pl.off[j] + pl.in.bufs[j].Size})
		}
	}
	slices.SortFunc(pl.ext, func(x, y extent) int { return cmp.Compare(x.off, y.off) })
	return pl.ext
}

// firstFit returns the lowest aligned offset at which buffer i shares no
// byte with a placed buffer live with it: Greedy's rule.
func (pl *placer) firstFit(i int32) int64 {
	b := pl.in.bufs[i]
	var off int64
	for _, e := range pl.extents(i) {
		if e.off-off >= b.Size {
			break
		}
		if e.end > off {
			off = alignUp(e.end, b.Align)
		}
	}
	return off
}

// bestFit returns the start of the tightest gap between placed buffers live
// with buffer i that holds it (the lowest of equally tight ones), or the
// lowest offset above them all when no gap does.
func (pl *placer) bestFit(i int32) int64 {
	b := pl.in.bufs[i]
	var off int64
	best, slack := int64(-1), int64(math.MaxInt64)
	for _, e := range pl.extents(i) {
		if gap := e.off - off; gap >= b.Size && gap-b.Size < slack {
			best, slack = off, gap-b.Size
			if slack == 0 {
				return best
			}
		}
		if e.end > off {
			off = alignUp(e.end, b.Align)
		}
	}
	if best >= 0 {
		return best
	}
	return off
}

// place puts the free buffers in order by rule and returns the height, or
// -1 if ctx is done first.
func (pl *placer) place(ctx context.Context, order []int32, rule func(*placer, int32) int64) int64 {
	pl.reset()
	for k, i := range order {
		if k%1024 == 1023 && ctx.Err() != nil {
			return -1
		}
		pl.off[i] = rule(pl, i)
		pl.placed[i] = true
	}
	return height(pl.in.bufs, pl.off)
}

// orderBy returns the free buffers sorted by key, ties by index.
func (in *instance) orderBy(key func(a, b Buffer) int) []int32 {
	order := slices.Clone(in.free)
	slices.SortFunc(order, func(i, j int32) int { return cmp.Or(key(in.bufs[i], in.bufs[j]), cmp.Compare(i, j)) })
	return order
}

func width(b Buffer) int64  { return b.End - b.Start }
func area(b Buffer) float64 { return float64(b.Size) * float64(width(b)) }

// heuristicOrders returns the orders Best's placement heuristics try after
// Greedy's: larger first by size, area (size times lifetime), lifetime and
// conflict weight (its size plus those of the buffers live with it), and
// earlier first by start; ties by size, then index.
func (in *instance) heuristicOrders() [][]int32 {
	bySize := func(a, b Buffer) int { return cmp.Compare(b.Size, a.Size) }
	conflict := make([]int64, len(in.bufs))
	for _, i := range in.free {
		for _, j := range in.neighbours(i) {
			conflict[i] += in.bufs[j].Size
		}
	}
	byConflict := slices.Clone(in.free)
	slices.SortFunc(byConflict, func(i, j int32) int {
		return cmp.Or(cmp.Compare(conflict[j]+in.bufs[j].Size, conflict[i]+in.bufs[i].Size),
			bySize(in.bufs[i], in.bufs[j]), cmp.Compare(i, j))
	})
	return [][]int32{
		in.orderBy(bySize),
		in.orderBy(func(a, b Buffer) int { return cmp.Or(cmp.Compare(area(b), area(a)), bySize(a, b)) }),
		in.orderBy(func(a, b Buffer) int { return cmp.Or(cmp.Compare(width(b), width(a)), bySize(a, b)) }),
		in.orderBy(func(a, b Buffer) int { return cmp.Or(cmp.Compare(a.Start, b.Start), bySize(a, b)) }),
		byConflict,
	}
}

// skyline places the free buffers the way a first dive of the exact search
// does: repeatedly the buffer that can go lowest, at that offset, ties by
// rank (lower first). It returns the height, or -1 if ctx is done first.
func (pl *placer) skyline(ctx context.Context, rank []int32) int64 {
	pl.reset()
	in := pl.in
	h := offsetHeap{pos: pl.heapPos}
	if h.pos == nil {
		h.pos = make([]int32, len(in.bufs))
		pl.heapPos = h.pos
	}
	for _, i := range in.free {
		h.pos[i] = int32(len(h.items))
		h.items = append(h.items, heapItem{clearOfPinned(in, i, 0), rank[i], i})
	}
	h.init()
	for n := 0; len(h.items) > 0; n++ {
		if n%1024 == 1023 && ctx.Err() != nil {
			return -1
		}
		it := h.pop()
		pl.off[it.idx], pl.placed[it.idx] = it.off, true
		top := it.off + in.bufs[it.idx].Size
		for _, j := range in.neighbours(it.idx) {
			if k := h.pos[j]; !pl.placed[j] && h.items[k].off < top {
				h.items[k].off = clearOfPinned(in, j, top)
				h.down(int(k))
			}
		}
	}
	return height(in.bufs, pl.off)
}

type heapItem struct {
	off  int64
	rank int32
	idx  int32
}

func (a heapItem) less(b heapItem) bool {
	return a.off < b.off || a.off == b.off && a.rank < b.rank
}

// offsetHeap is a binary min-heap of buffers by offset, then rank, that
// knows where each buffer is (pos), so that raising one's offset moves it
// down in place.
type offsetHeap struct {
	items []heapItem
	pos   []int32 // by buffer index
}

func (h *offsetHeap) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *offsetHeap) pop() heapItem {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.pos[h.items[0].idx] = 0
	h.items = h.items[:last]
	if last > 0 {
		h.down(0)
	}
	return top
}

func (h *offsetHeap) down(i int) {
	it, n := h.items[i], len(h.items)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h.items[c+1].less(h.items[c]) {
			c++
		}
		if !h.items[c].less(it) {
			break
		}
		h.items[i] = h.items[c]
		h.pos[h.items[i].idx] = int32(i)
		i = c
	}
	h.items[i] = it
	h.pos[it.idx] = int32(i)
}

// rankOf turns an order of the free buffers into each buffer's position.
func rankOf(n int, order []int32) []int32 {
	rank := make([]int32, n)
	for k, i := range order {
		rank[i] = int32(k)
	}
	return rank
}
