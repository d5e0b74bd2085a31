package plan

import (
	"slices"

	"github.com/heliac/heliac/liveness"
)

// An alias group whose members lie at different offsets from its root (an
// output written over its input at an offset, under a kernel contract)
// need not be one block over its whole lifetime: its members keep fixed
// offsets from one another, but each holds its bytes only while it lives,
// so other buffers may use the group's bytes before its larger members are
// written and after they die. The allocator (dsa) places rectangles; for
// such groups the scratch arena is also placed as rigid shapes by a
// first-fit of its own, and the lower of the two placements is kept.

// shapeRect is bytes [lo, hi) relative to a group root's first byte, held
// over steps [start, end).
type shapeRect struct{ start, end, lo, hi int64 }

// shapeLimit bounds the rectangles placeShapes takes on: it is quadratic
// in them.
const shapeLimit = 4096

// shapes returns the rectangles of each root's group: one per distinct
// member range (sizes rounded up to align), live over the hull of those
// members' lifetimes; and whether any group has members at more than one
// range (otherwise the blocks are the shapes) and how many rectangles
// there are.
func (pl *placer) shapes(roots []int, align int64) ([][]shapeRect, bool, int) {
	index := map[int]int{}
	for i, id := range roots {
		index[id] = i
	}
	out := make([][]shapeRect, len(roots))
	add := func(i int, live liveness.Interval, lo, size int64) {
		r := shapeRect{start: int64(live.First), end: int64(live.Last) + 1, lo: lo, hi: lo + alignTo(size, align)}
		for k := range out[i] {
			if q := &out[i][k]; q.lo == r.lo && q.hi == r.hi && r.start <= q.end && q.start <= r.end {
				q.start, q.end = min(q.start, r.start), max(q.end, r.end)
				return
			}
		}
		out[i] = append(out[i], r)
	}
	for id := range pl.p.Allocs {
		a := &pl.p.Allocs[id]
		if a.Class != liveness.Scratch {
			continue
		}
		root, off := id, int64(0)
		if a.AliasOf != nil {
			root, off = pl.p.tensors[*a.AliasOf], a.AliasOffset
		}
		if i, ok := index[root]; ok && a.Live.First >= 0 {
			add(i, a.Live, off, a.Size)
		}
	}
	shaped, n := false, 0
	for i := range out {
		shaped = shaped || len(out[i]) > 1
		n += len(out[i])
		slices.SortFunc(out[i], func(a, b shapeRect) int { return int(a.lo - b.lo) })
	}
	return out, shaped, n
}

// shapePeak returns the peak over steps of live bytes, each group counted
// as the hull of its rectangles live at the step, or the widest group's
// span if larger, and a step where the peak is reached: a lower bound for
// any placement that keeps each group rigid.
func shapePeak(units [][]shapeRect) (peak, step int64) {
	var steps int64
	for _, u := range units {
		for _, r := range u {
			steps = max(steps, r.end)
		}
	}
	live := make([]int64, steps)
	lo, hi := make([]int64, steps), make([]int64, steps)
	for _, u := range units {
		for s := range lo {
			lo[s], hi[s] = 1<<62, -(1 << 62)
		}
		first, last := steps, int64(0)
		for _, r := range u {
			for s := r.start; s < r.end; s++ {
				lo[s], hi[s] = min(lo[s], r.lo), max(hi[s], r.hi)
			}
			first, last = min(first, r.start), max(last, r.end)
		}
		for s := first; s < last; s++ {
			if hi[s] > lo[s] {
				live[s] += hi[s] - lo[s]
			}
		}
	}
	for s, v := range live {
		if v > peak {
			peak, step = v, int64(s)
		}
	}
	for _, u := range units {
		if len(u) > 0 {
			lo, hi := u[0].lo, u[0].hi
			for _, r := range u {
				lo, hi = min(lo, r.lo), max(hi, r.hi)
			}
			peak = max(peak, hi-lo)
		}
	}
	return peak, step
}

// placeShapes places each unit (a group's rectangles, relative to its
// root) at an origin, a multiple of align, so that no two rectangles of
// different units share a byte while both are live: units one after
// another, each at the lowest origin where all its rectangles fit (a
// rectangle sits on the top of one already placed, or the unit's lowest
// byte at 0). It tries the units in three orders (widest step first,
// earliest first, longest-lived first) and returns the lowest placement:
// the origins and the height.
func placeShapes(units [][]shapeRect, align int64) (origins []int64, height int64) {
	width := make([]int64, len(units))
	first, length := make([]int64, len(units)), make([]int64, len(units))
	span, area := make([]int64, len(units)), make([]int64, len(units))
	for i, u := range units {
		width[i], _ = shapePeak([][]shapeRect{u})
		first[i] = 1 << 62
		var last int64
		for _, r := range u {
			first[i], last = min(first[i], r.start), max(last, r.end)
		}
		length[i] = last - first[i]
		lo, hi := u[0].lo, u[0].hi
		for _, r := range u {
			lo, hi = min(lo, r.lo), max(hi, r.hi)
			area[i] += (r.hi - r.lo) * (r.end - r.start)
		}
		span[i] = hi - lo
	}
	by := func(key func(i int) int64) []int {
		order := make([]int, len(units))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch ka, kb := key(a), key(b); {
			case ka < kb:
				return -1
			case ka > kb:
				return 1
			}
			return 0
		})
		return order
	}
	for k, order := range [][]int{
		by(func(i int) int64 { return -width[i] }),
		by(func(i int) int64 { return first[i] }),
		by(func(i int) int64 { return -length[i] }),
		by(func(i int) int64 { return -span[i] }),
		by(func(i int) int64 { return -area[i] }),
	} {
		o, h := placeShapesInOrder(units, align, order)
		if k == 0 || h < height {
			origins, height = o, h
		}
	}
	return origins, height
}

// placeShapesInOrder is placeShapes for one order of the units.
func placeShapesInOrder(units [][]shapeRect, align int64, order []int) (origins []int64, height int64) {
	type placed struct{ start, end, lo, hi int64 }
	var done []placed
	origins = make([]int64, len(units))
	up := func(x int64) int64 {
		d := x / align * align
		if d < x {
			d += align
		}
		return d
	}
	for _, i := range order {
		u := units[i]
		if len(u) == 0 {
			continue
		}
		minLo := u[0].lo
		for _, r := range u {
			minLo = min(minLo, r.lo)
		}
		cands := []int64{up(-minLo)}
		for _, q := range done {
			for _, r := range u {
				if r.start < q.end && q.start < r.end {
					if x := up(q.hi - r.lo); x >= -minLo {
						cands = append(cands, x)
					}
				}
			}
		}
		slices.Sort(cands)
		cands = slices.Compact(cands)
		for _, x := range cands {
			fits := true
			for _, r := range u {
				for _, q := range done {
					if r.start < q.end && q.start < r.end && x+r.lo < q.hi && q.lo < x+r.hi {
						fits = false
						break
					}
				}
				if !fits {
					break
				}
			}
			if fits {
				origins[i] = x
				break
			}
		}
		for _, r := range u {
			done = append(done, placed{r.start, r.end, origins[i] + r.lo, origins[i] + r.hi})
			height = max(height, origins[i]+r.hi)
		}
	}
	return origins, height
}
