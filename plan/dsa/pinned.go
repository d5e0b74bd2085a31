package dsa

import (
	"cmp"
	"fmt"
	"slices"
)

// slot is a placed buffer of non-zero size: bytes [off, end) during the
// steps of bufs[idx].
type slot struct {
	off, end int64
	idx      int
}

// arena is the set of placed buffers, kept in ascending order of offset
// (equal offsets in placement order).
type arena struct {
	bufs  []Buffer
	slots []slot
}

// add records that bufs[i] sits at off. Zero-size buffers occupy nothing and
// are not recorded.
func (a *arena) add(i int, off int64) {
	size := a.bufs[i].Size
	if size == 0 {
		return
	}
	at, _ := slices.BinarySearchFunc(a.slots, off+1, func(s slot, t int64) int {
		return cmp.Compare(s.off, t)
	})
	a.slots = slices.Insert(a.slots, at, slot{off: off, end: off + size, idx: i})
}

// collision returns a placed buffer that bufs[i] at off would share a byte
// with at some step, or -1.
func (a *arena) collision(i int, off int64) int {
	b := a.bufs[i]
	if b.Size == 0 {
		return -1
	}
	for _, s := range a.slots {
		if s.off < off+b.Size && off < s.end && liveTogether(a.bufs[s.idx], b) {
			return s.idx
		}
	}
	return -1
}

// pin places every buffer with a Fixed offset, in index order, into a new
// arena and writes their offsets. Two pinned buffers that collide make the
// problem infeasible.
func pin(bufs []Buffer, offsets []int64) (*arena, error) {
	return pinChecked(bufs, offsets, true)
}

// pinChecked is pin; without check, pinned buffers may collide.
func pinChecked(bufs []Buffer, offsets []int64, check bool) (*arena, error) {
	a := &arena{bufs: bufs, slots: make([]slot, 0, len(bufs))}
	for i, b := range bufs {
		if b.Fixed == nil {
			continue
		}
		off := *b.Fixed
		if j := a.collision(i, off); check && j >= 0 {
			return nil, fmt.Errorf("%w: pinned buffers %d and %d overlap", ErrInfeasible, j, i)
		}
		offsets[i] = off
		a.add(i, off)
	}
	return a, nil
}
