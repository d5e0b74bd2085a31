package dsa

import (
	"cmp"
	"math"
	"slices"
	"sync/atomic"
)

// outcome is how one exact search ended.
type outcome int

const (
	found     outcome = iota + 1 // every buffer placed under the height
	exhausted                    // proof that no placement fits under the height
	aborted                      // work limit reached, or cancelled
)

// search is MiniMalloc's branch and bound, asking whether the free buffers
// fit under a height. It only builds canonical placements: buffers go in
// non-decreasing order of offset, each at the lowest offset clear of the
// buffers placed before it that it lives with (and of pinned buffers). Any
// placement can be pushed down into such a one without growing, so the
// search misses nothing; among equal offsets buffers go in rank order,
// since buffers at one offset never live together and their order does not
// matter. It prunes with:
//
//   - dominance: a buffer is not placed at or above the top of another
//     unplaced buffer's lowest position, which would leave a hole the other
//     could drop into;
//   - section inference: in every section the unplaced buffers, all live at
//     one step, need their total size above the section's floor (the
//     highest of the last offset placed, the tops of placed buffers there,
//     and the lowest position of any of them), minus what pinned buffers
//     already cover there;
//   - a buffer whose lowest position leaves it poking above the height;
//
// and it splits the rest into independent subproblems whenever no unplaced
// buffer spans two adjacent sections (dynamic decomposition).
type search struct {
	in     *instance
	sc     *sections
	height int64
	order  preorder
	rank   []int32 // ties between equal offsets break by rank
	keyT   []int64 // scratch for sortBy

	off   []int64 // offset of each buffer; -1 for unplaced free ones
	low   []int64 // lowest offset each unplaced free buffer can take
	floor []int64 // per section
	total []int64 // per section: bytes of its unplaced free buffers
	cuts  []int32
	sol   []int64 // the offsets of the last placement of each buffer

	// work counts nodes and placements tried; the search gives up when
	// it passes limit. scanned counts the buffers and sections its nodes
	// looked at, which is most of its time on big problems.
	work, limit int64
	scanned     int64
	pollAt      int64           // when to look at done and cancel next
	done        <-chan struct{} // ctx.Done()
	cancel      *atomic.Bool

	lowLog   []change // undo logs
	floorLog []change
	cands    []cand  // stack of candidate lists
	secs     []int32 // stack of tight section lists
	lists    []int32 // stack of subproblem buffer lists
	affected []int32 // sections whose floor may rise
	mark     []uint32
	stamp    uint32
}

// change records an old value of low or floor.
type change struct {
	at  int32
	old int64
}

// cand is a buffer that may be placed next: at off, found at pos in the
// node's list of unplaced buffers.
type cand struct {
	off  int64
	rank int32
	idx  int32
	pos  int32
}

// newSearch prepares a search of in with ranks from order.
func newSearch(in *instance, sc *sections, order preorder) *search {
	n, ns := len(in.bufs), len(sc.free)
	s := &search{
		in: in, sc: sc, order: order,
		off: make([]int64, n), low: make([]int64, n), sol: make([]int64, n),
		rank: make([]int32, n), keyT: make([]int64, n),
		floor: make([]int64, ns), total: make([]int64, ns), cuts: make([]int32, len(sc.cuts)),
		mark: make([]uint32, ns),
	}
	for i, b := range in.bufs {
		if b.Fixed != nil {
			s.sol[i] = *b.Fixed
		}
	}
	return s
}

// run searches for a placement no higher than height, giving up after
// limit units of work or when done is closed or cancel set (both may be
// nil). On found, s.sol holds the placement.
//
// Limits on work, a count of nodes and placements tried, shape the search;
// cost, which adds what the nodes scanned, is what Best budgets.
func (s *search) run(height, limit int64, done <-chan struct{}, cancel *atomic.Bool) outcome {
	s.height, s.limit, s.work, s.scanned, s.pollAt = height, limit, 0, 0, 0
	s.done, s.cancel = done, cancel
	in, sc := s.in, s.sc
	for _, i := range in.pinned {
		if *in.bufs[i].Fixed+in.bufs[i].Size > height {
			return exhausted
		}
		s.off[i] = *in.bufs[i].Fixed
	}
	clear(s.total)
	copy(s.cuts, sc.cuts)
	for _, i := range in.free {
		s.off[i] = -1
		s.low[i] = clearOfPinned(in, i, 0)
		if s.low[i]+in.bufs[i].Size > height {
			return exhausted
		}
		for k := sc.lo[i]; k < sc.hi[i]; k++ {
			s.total[k] += in.bufs[i].Size
		}
	}
	for k := range s.floor {
		s.floor[k] = s.lowest(int32(k), -1)
	}
	if !s.check(0, int32(len(s.floor)), 0) {
		return exhausted
	}
	// Solve each group of buffers that never lives with another group.
	var zeros []int32
	for k, c := range s.cuts {
		if c == 0 {
			zeros = append(zeros, int32(k))
		}
	}
	return s.split(slices.Clone(in.free), 0, int32(len(s.floor)), zeros)
}

// split solves the buffers of live section range by section range, the
// ranges [s0, s1) cut at the boundaries k+1 for k in zeros.
func (s *search) split(live []int32, s0, s1 int32, zeros []int32) outcome {
	base := len(s.lists)
	defer func() { s.lists = s.lists[:base] }()
	lo := s0
	for z := 0; z <= len(zeros); z++ {
		hi := s1
		if z < len(zeros) {
			hi = zeros[z] + 1
		}
		at := len(s.lists)
		for _, i := range live {
			if s.off[i] < 0 && s.sc.lo[i] < hi && lo < s.sc.hi[i] {
				s.lists = append(s.lists, i)
			}
		}
		sub := s.lists[at:]
		if len(sub) > 0 {
			// Rank the subproblem afresh, as MiniMalloc does, keeping the
			// old ranks on the stack after it for the caller.
			for _, j := range sub {
				s.lists = append(s.lists, j, s.rank[j])
			}
			saved := s.lists[at+len(sub):]
			s.sortBy(sub)
			r := s.node(sub, lo, hi, -1, -1)
			for k := 0; k < len(saved); k += 2 {
				s.rank[saved[k]] = saved[k+1]
			}
			s.lists = s.lists[:at]
			if r != found {
				return r
			}
		}
		lo = hi
	}
	return found
}

// node extends the current partial placement with the buffers of live, which
// occupy sections [s0, s1), the last placed one being at lastOff with rank
// lastRank.
func (s *search) node(live []int32, s0, s1 int32, lastOff int64, lastRank int32) outcome {
	if len(live) == 0 {
		return found
	}
	if s.work++; s.work > s.limit {
		return aborted
	}
	s.scanned += int64(len(live)) + int64(s1-s0)
	if s.work >= s.pollAt {
		s.pollAt = s.work + 1024
		if s.isDone() {
			return aborted
		}
	}
	bufs := s.in.bufs
	minTop := int64(math.MaxInt64)
	for _, j := range live {
		minTop = min(minTop, s.low[j]+bufs[j].Size)
	}
	// The candidates, and the sections that placing one as high as the
	// highest of them could overfill, fullest first.
	maxOff := int64(-1)
	for _, j := range live {
		o := s.low[j]
		if o < minTop && (o > lastOff || o == lastOff && s.rank[j] > lastRank) {
			maxOff = max(maxOff, o)
		}
	}
	secBase := len(s.secs)
	for k := s0; k < s1; k++ {
		if maxOff+s.total[k] > s.height {
			s.secs = append(s.secs, k)
		}
	}
	tight := s.secs[secBase:]
	slices.SortFunc(tight, func(a, b int32) int { return cmp.Or(cmp.Compare(s.total[b], s.total[a]), cmp.Compare(a, b)) })
	base := len(s.cands)
	for k, j := range live {
		o := s.low[j]
		if o < minTop && (o > lastOff || o == lastOff && s.rank[j] > lastRank) {
			if c := (cand{o, s.rank[j], j, int32(k)}); s.roomAbove(c, tight) {
				s.cands = append(s.cands, c)
			}
		}
	}
	cs := s.cands[base:]
	slices.SortFunc(cs, func(a, b cand) int {
		if a.off != b.off {
			return cmp.Compare(a.off, b.off)
		}
		return cmp.Compare(a.rank, b.rank)
	})
	r := exhausted
	for _, c := range cs {
		var hatless bool
		if r, hatless = s.try(live, c, s0, s1); r != exhausted || hatless {
			// A buffer that lives with no unplaced one has a fixed place
			// that constrains nothing: if the rest fails with it placed,
			// it fails whichever buffer goes first.
			break
		}
	}
	s.cands, s.secs = s.cands[:base], s.secs[:secBase]
	return r
}

// roomAbove reports whether, with candidate c placed, every section of tight
// still has room above c for its unplaced buffers: all later buffers go at
// c.off or above.
func (s *search) roomAbove(c cand, tight []int32) bool {
	lo, hi, size := s.sc.lo[c.idx], s.sc.hi[c.idx], s.in.bufs[c.idx].Size
	for _, k := range tight {
		need := c.off + s.total[k]
		if need <= s.height {
			return true
		}
		if k < lo || k >= hi || need-size > s.height {
			return false
		}
	}
	return true
}

// cost returns the work of the last run plus a unit for every 64 buffers
// and sections its nodes scanned: roughly proportional to its time.
func (s *search) cost() int64 {
	return min(s.work, s.limit) + s.scanned>>6
}

// isDone reports whether the search has been cancelled or ctx is done.
func (s *search) isDone() bool {
	if s.cancel != nil && s.cancel.Load() {
		return true
	}
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// try places candidate c, searches on, and undoes the placement. It also
// reports whether c lives with no unplaced buffer.
func (s *search) try(live []int32, c cand, s0, s1 int32) (outcome, bool) {
	s.work++
	i, size := c.idx, s.in.bufs[c.idx].Size
	last := int32(len(live) - 1)
	live[c.pos], live[last] = live[last], live[c.pos]
	s.off[i], s.sol[i] = c.off, c.off
	lowMark, floorMark := len(s.lowLog), len(s.floorLog)

	s.cover(i, c.off+size)
	r := exhausted
	ok, hatless := s.raise(i, c.off+size)
	if ok {
		s.settle()
		if s.recheck(floorMark, s0, s1, c.off) {
			r = s.descend(live[:last], i, s0, s1, c.off)
		}
	}
	for k := s.sc.lo[i]; k < s.sc.hi[i]; k++ {
		s.total[k] += size
	}
	for k := len(s.floorLog) - 1; k >= floorMark; k-- {
		s.floor[s.floorLog[k].at] = s.floorLog[k].old
	}
	for k := len(s.lowLog) - 1; k >= lowMark; k-- {
		s.low[s.lowLog[k].at] = s.lowLog[k].old
	}
	s.floorLog, s.lowLog = s.floorLog[:floorMark], s.lowLog[:lowMark]
	s.off[i] = -1
	live[c.pos], live[last] = live[last], live[c.pos]
	return r, hatless
}

// cover takes placed buffer i out of its sections' totals and lifts their
// floors to its top. It starts a new list of sections whose floor may have
// to rise further, with i's sections on it.
func (s *search) cover(i int32, top int64) {
	s.affected = s.affected[:0]
	s.stamp++
	for k := s.sc.lo[i]; k < s.sc.hi[i]; k++ {
		s.total[k] -= s.in.bufs[i].Size
		if s.floor[k] < top {
			s.floorLog = append(s.floorLog, change{k, s.floor[k]})
			s.floor[k] = top
		}
		s.mark[k] = s.stamp
		s.affected = append(s.affected, k)
	}
}

// raise lifts the lowest position of the unplaced buffers living with i to
// top or above. It reports false if one of them no longer fits under the
// height, and whether i lives with no unplaced buffer at all. A floor is
// never below the lowest position of its section's unplaced buffers, so
// only sections where a lifted buffer was at or below the floor may need a
// higher one; raise lists them.
func (s *search) raise(i int32, top int64) (ok, hatless bool) {
	hatless = true
	for _, j := range s.in.neighbours(i) {
		old := s.low[j]
		if s.off[j] >= 0 {
			continue
		}
		hatless = false
		if old >= top {
			continue
		}
		s.lowLog = append(s.lowLog, change{j, old})
		s.low[j] = clearOfPinned(s.in, j, top)
		if s.low[j]+s.in.bufs[j].Size > s.height {
			return false, false
		}
		for k := s.sc.lo[j]; k < s.sc.hi[j]; k++ {
			if s.mark[k] != s.stamp && old <= s.floor[k] {
				s.mark[k] = s.stamp
				s.affected = append(s.affected, k)
			}
		}
	}
	return true, hatless
}

// settle lifts the floor of each listed section to the lowest position of
// its unplaced buffers.
func (s *search) settle() {
	for _, k := range s.affected {
		if f := s.lowest(k, s.floor[k]); f > s.floor[k] {
			s.floorLog = append(s.floorLog, change{k, s.floor[k]})
			s.floor[k] = f
		}
	}
}

// lowest returns the lowest position of any unplaced buffer of section k,
// or some value no higher than floor if that is lower. No unplaced buffer
// gives 0.
func (s *search) lowest(k int32, floor int64) int64 {
	f := int64(math.MaxInt64)
	for _, j := range s.sc.free[k] {
		if s.off[j] < 0 {
			if s.low[j] <= floor {
				return s.low[j]
			}
			f = min(f, s.low[j])
		}
	}
	if f == math.MaxInt64 {
		return 0
	}
	return f
}

// check reports whether every section of [s0, s1) still has room above its
// floor, and above from, for its unplaced buffers.
func (s *search) check(s0, s1 int32, from int64) bool {
	for k := s0; k < s1; k++ {
		if s.total[k] == 0 {
			continue
		}
		f := max(s.floor[k], from)
		if f+s.total[k]+s.pinnedAbove(k, f) > s.height {
			return false
		}
	}
	return true
}

// recheck is check after a placement at from, given that check held before
// it and roomAbove holds for it: only the sections whose floor has risen
// since floorLog[mark] and those with pinned buffers need a look.
func (s *search) recheck(mark int, s0, s1 int32, from int64) bool {
	for _, ch := range s.floorLog[mark:] {
		k := ch.at
		if s.total[k] == 0 || k < s0 || k >= s1 {
			continue
		}
		f := max(s.floor[k], from)
		if f+s.total[k]+s.pinnedAbove(k, f) > s.height {
			return false
		}
	}
	for _, k := range s.sc.withPinned {
		if s0 <= k && k < s1 && !s.check(k, k+1, from) {
			return false
		}
	}
	return true
}

// pinnedAbove returns the bytes of [from, height) that pinned buffers of
// section k cover.
func (s *search) pinnedAbove(k int32, from int64) int64 {
	var n int64
	for _, j := range s.sc.pinned[k] {
		b := s.in.bufs[j]
		n += max(0, min(*b.Fixed+b.Size, s.height)-max(*b.Fixed, from))
	}
	return n
}

// descend searches on after placing i at off, splitting the problem where
// i was the last unplaced buffer spanning two adjacent sections.
func (s *search) descend(live []int32, i, s0, s1 int32, off int64) outcome {
	lo, hi := s.sc.lo[i], s.sc.hi[i]
	var zeros []int32
	for k := lo; k+1 < hi; k++ {
		if s.cuts[k]--; s.cuts[k] == 0 && s0 <= k && k+1 < s1 {
			zeros = append(zeros, k)
		}
	}
	var r outcome
	if len(zeros) == 0 {
		r = s.node(live, s0, s1, off, s.rank[i])
	} else {
		r = s.split(live, s0, s1, zeros)
	}
	for k := lo; k+1 < hi; k++ {
		s.cuts[k]++
	}
	return r
}

// clearOfPinned returns the lowest aligned offset at or above from where
// buffer i overlaps no pinned buffer live with it.
func clearOfPinned(in *instance, i int32, from int64) int64 {
	b := in.bufs[i]
	off := alignUp(from, b.Align)
	if len(in.pinned) == 0 {
		return off
	}
	for moved := true; moved; {
		moved = false
		for _, j := range in.neighbours(i) {
			c := in.bufs[j]
			if c.Fixed != nil && *c.Fixed < off+b.Size && off < *c.Fixed+c.Size {
				off = alignUp(*c.Fixed+c.Size, b.Align)
				moved = true
			}
		}
	}
	return off
}
