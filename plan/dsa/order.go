package dsa

import (
	"cmp"
	"slices"
)

// preorder is a static order of buffers for the exact search, written as
// MiniMalloc writes them: a string of keys, each sorting larger first, ties
// going to the next key and finally to the lower index.
//
//	W  lifetime, End-Start
//	A  area, Size*lifetime
//	T  total: the most unplaced bytes in any section the buffer lives in
type preorder string

// The orders the search takes turns with, as MiniMalloc does.
const (
	orderWAT preorder = "WAT"
	orderTAW preorder = "TAW"
	orderTWA preorder = "TWA"
)

// sortBy sorts list by the preorder, with T read from the current section
// totals, and gives each buffer its position as rank.
func (s *search) sortBy(list []int32) {
	for _, j := range list {
		var t int64
		for k := s.sc.lo[j]; k < s.sc.hi[j]; k++ {
			t = max(t, s.total[k])
		}
		s.keyT[j] = t
	}
	bufs := s.in.bufs
	slices.SortFunc(list, func(x, y int32) int {
		a, b := bufs[x], bufs[y]
		for _, key := range s.order {
			var c int
			switch key {
			case 'W':
				c = cmp.Compare(width(b), width(a))
			case 'A':
				c = cmp.Compare(area(b), area(a))
			case 'T':
				c = cmp.Compare(s.keyT[y], s.keyT[x])
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(x, y)
	})
	for k, j := range list {
		s.rank[j] = int32(k)
	}
}
