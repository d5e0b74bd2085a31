package dsa

import (
	"cmp"
	"context"
	"slices"
)

// Greedy places buffers the way TensorFlow Lite Micro's GreedyMemoryPlanner
// does, giving the same offsets and height on the same buffers:
//
//  1. Pinned buffers go first, at their Fixed offsets, in index order.
//  2. The rest are taken largest first. Equal sizes go in descending index
//     order: TFLM fills its sort array from the back and sorts it stably.
//  3. Each buffer goes at the lowest offset, rounded up to its alignment,
//     where it shares no byte with an already placed buffer live at a common
//     step. Candidates are 0 and the ends of those buffers, tried in order of
//     offset, so a buffer drops into the first gap that holds it.
//
// TFLM has no per-buffer alignment (it rounds sizes up beforehand), and it
// lets a pinned zero-size buffer cut a gap in two; Greedy ignores such
// buffers. Otherwise the two agree buffer for buffer.
//
// Like TFLM's planner this is a heuristic with no quality guarantee (the
// problem is NP-hard). On the buffers of the 44 corpus models TFLM runs, it
// meets LowerBound for 37 and is at most a third above it; on MiniMalloc's
// challenging set it is 28-38% above. It takes O(n²) time, and runs to the
// end whatever ctx's deadline: it stops only when ctx is canceled.
func Greedy(ctx context.Context, p Problem) (Solution, error) {
	if err := Validate(p); err != nil {
		return Solution{}, err
	}
	ctx, cancel := untimed(ctx)
	defer cancel()
	s := Solution{Offsets: make([]int64, len(p.Buffers))}
	a, err := pin(p.Buffers, s.Offsets)
	if err != nil {
		return Solution{}, err
	}
	for k, i := range greedyOrder(p.Buffers) {
		if k%64 == 0 {
			if err := ctx.Err(); err != nil {
				return Solution{}, err
			}
		}
		s.Offsets[i] = a.lowestFit(i)
		a.add(i, s.Offsets[i])
	}
	s.Height = height(p.Buffers, s.Offsets)
	return fit(p, s)
}

// Around places the unpinned buffers of p as Greedy does, around pinned
// buffers that may share bytes with one another at a common step. It is how
// TFLM places the buffers its kernels request around a model's offline
// plan, whose tensors overlap where an operator writes its output over its
// input; list those buffers in the order TFLM adds them (AddBuffer), which
// breaks ties between equal sizes. It trusts the pinned buffers and ignores
// Capacity: Height is what the placement needs.
func Around(p Problem) (Solution, error) {
	if err := Validate(p); err != nil {
		return Solution{}, err
	}
	s := Solution{Offsets: make([]int64, len(p.Buffers))}
	a, err := pinChecked(p.Buffers, s.Offsets, false)
	if err != nil {
		return Solution{}, err
	}
	for _, i := range greedyOrder(p.Buffers) {
		s.Offsets[i] = a.lowestFit(i)
		a.add(i, s.Offsets[i])
	}
	s.Height = height(p.Buffers, s.Offsets)
	return s, nil
}

// greedyOrder returns the indices of the unpinned buffers by descending size,
// equal sizes by descending index, as TFLM's planner orders them.
func greedyOrder(bufs []Buffer) []int {
	order := make([]int, 0, len(bufs))
	for i, b := range bufs {
		if b.Fixed == nil {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(i, j int) int {
		if c := cmp.Compare(bufs[j].Size, bufs[i].Size); c != 0 {
			return c
		}
		return cmp.Compare(j, i)
	})
	return order
}

// lowestFit returns the offset Greedy gives bufs[i]: walking the placed
// buffers live with it in order of offset, the first gap that holds it, or
// else just above the last of them.
func (a *arena) lowestFit(i int) int64 {
	b := a.bufs[i]
	if b.Size == 0 {
		return 0
	}
	var off int64
	for _, s := range a.slots {
		if !liveTogether(a.bufs[s.idx], b) {
			continue
		}
		if s.off-off >= b.Size {
			break
		}
		if s.end > off {
			off = alignUp(s.end, b.Align)
		}
	}
	return off
}
