package dsa

import (
	"cmp"
	"container/heap"
	"context"
	"math"
	"slices"
)

// placer builds one placement at a time over an instance: the pinned
// buffers sit at their offsets, and free buffers are added one by one.
type placer struct {
	in     *instance
	off    []int64
	placed []bool
	ext    []extent // scratch
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
	slices.SortStableFunc(order, func(i, j int32) int { return key(in.bufs[i], in.bufs[j]) })
	return order
}

func width(b Buffer) int64  { return b.End - b.Start }
func area(b Buffer) float64 { return float64(b.Size) * float64(width(b)) }

// heuristicOrders returns the orders Best's placement heuristics try after
// Greedy's: by size, area, lifetime, start and conflict weight (the bytes of
// the buffers live with it), larger first.
func (in *instance) heuristicOrders() [][]int32 {
	bySize := func(a, b Buffer) int { return cmp.Compare(b.Size, a.Size) }
	conflict := make([]int64, len(in.bufs))
	for _, i := range in.free {
		for _, j := range in.neighbours(i) {
			conflict[i] += in.bufs[j].Size
		}
	}
	byConflict := slices.Clone(in.free)
	slices.SortStableFunc(byConflict, func(i, j int32) int {
		return cmp.Or(cmp.Compare(conflict[j]+in.bufs[j].Size, conflict[i]+in.bufs[i].Size), bySize(in.bufs[i], in.bufs[j]))
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
	h := &offsetHeap{}
	minOff := pl.off // unplaced buffers keep their lowest offset here
	for _, i := range in.free {
		minOff[i] = pl.clearOfPinned(i, 0)
		h.items = append(h.items, heapItem{minOff[i], rank[i], i})
	}
	heap.Init(h)
	for n := 0; h.Len() > 0; {
		it := heap.Pop(h).(heapItem)
		i := it.idx
		if pl.placed[i] || it.off != minOff[i] {
			continue // stale
		}
		if n++; n%1024 == 0 && ctx.Err() != nil {
			return -1
		}
		pl.placed[i] = true
		top := minOff[i] + in.bufs[i].Size
		for _, j := range in.neighbours(i) {
			if !pl.placed[j] && minOff[j] < top {
				minOff[j] = pl.clearOfPinned(j, top)
				heap.Push(h, heapItem{minOff[j], rank[j], j})
			}
		}
	}
	return height(in.bufs, pl.off)
}

// clearOfPinned returns the lowest aligned offset at or above from where
// buffer i overlaps no pinned buffer live with it.
func (pl *placer) clearOfPinned(i int32, from int64) int64 {
	b := pl.in.bufs[i]
	off := alignUp(from, b.Align)
	if len(pl.in.pinned) == 0 {
		return off
	}
	for moved := true; moved; {
		moved = false
		for _, j := range pl.in.neighbours(i) {
			c := pl.in.bufs[j]
			if c.Fixed != nil && *c.Fixed < off+b.Size && off < *c.Fixed+c.Size {
				off = alignUp(*c.Fixed+c.Size, b.Align)
				moved = true
			}
		}
	}
	return off
}

type heapItem struct {
	off  int64
	rank int32
	idx  int32
}

// offsetHeap is a min-heap of buffers by offset, then rank.
type offsetHeap struct{ items []heapItem }

func (h *offsetHeap) Len() int { return len(h.items) }
func (h *offsetHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	return a.off < b.off || a.off == b.off && a.rank < b.rank
}
func (h *offsetHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *offsetHeap) Push(x any)   { h.items = append(h.items, x.(heapItem)) }
func (h *offsetHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return it
}

// rankOf turns an order of the free buffers into each buffer's position.
func rankOf(n int, order []int32) []int32 {
	rank := make([]int32, n)
	for k, i := range order {
		rank[i] = int32(k)
	}
	return rank
}
