package dsa

// sections is the time structure of an instance that the exact search
// needs, after MiniMalloc's sweep. A section is the set of buffers live at
// one step where the set is largest locally (a maximal clique of the
// interval graph): a step just before some buffer ends, with a start since
// the last such step. Every non-empty buffer lives in a contiguous run of
// sections, and any two buffers live together share a section.
//
//	step        0   1   2   3   4   5
//	a           [=======)               a: sections [0,1)
//	b               [===========)       b: sections [0,2)
//	c                       [=======)   c: sections [1,2)
//	section         0       1
//
// Section 0 is {a, b}, live at step 1; section 1 is {b, c}, at step 3.
type sections struct {
	free   [][]int32 // free[s]: the free buffers live at section s
	pinned [][]int32 // pinned[s]: the pinned buffers live at section s
	lo, hi []int32   // buffer i lives in sections [lo[i], hi[i])
	// withPinned lists the sections with pinned buffers, ascending.
	withPinned []int32
	// cuts[s] counts the free buffers live in both s and s+1; a zero splits
	// the free buffers into two groups that never live together.
	cuts []int32
}

// newSections sweeps the instance, or returns nil when its sections would
// hold more than maxMembers entries.
func newSections(in *instance, maxMembers int) *sections {
	n := len(in.bufs)
	sc := &sections{lo: make([]int32, n), hi: make([]int32, n)}
	var act active
	act.init(n)
	members, started := 0, false
	for _, e := range events(in.bufs) {
		if e.start {
			sc.lo[e.idx] = int32(len(sc.free))
			act.add(e.idx)
			started = true
			continue
		}
		if started {
			members += len(act.list)
			if members > maxMembers {
				return nil
			}
			var free, pinned []int32
			for _, j := range act.list {
				if in.bufs[j].Fixed != nil {
					pinned = append(pinned, j)
				} else {
					free = append(free, j)
				}
			}
			if len(pinned) > 0 {
				sc.withPinned = append(sc.withPinned, int32(len(sc.free)))
			}
			sc.free = append(sc.free, free)
			sc.pinned = append(sc.pinned, pinned)
			started = false
		}
		sc.hi[e.idx] = int32(len(sc.free))
		act.remove(e.idx)
	}
	sc.cuts = make([]int32, max(len(sc.free)-1, 0))
	for _, i := range in.free {
		for s := sc.lo[i]; s+1 < sc.hi[i]; s++ {
			sc.cuts[s]++
		}
	}
	return sc
}
