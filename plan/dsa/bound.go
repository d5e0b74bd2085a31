package dsa

import (
	"cmp"
	"slices"
)

// LowerBound returns the peak over steps of the total size of the buffers
// live at that step. No placement can be lower. Buffers that are empty or
// malformed (see Validate) are ignored.
func LowerBound(p Problem) int64 {
	peak, _ := Peak(p)
	return peak
}

// Peak returns LowerBound(p) and the first step at which that many bytes
// are live (0 for a problem with nothing live).
func Peak(p Problem) (bytes, step int64) {
	type event struct{ step, delta int64 }
	events := make([]event, 0, 2*len(p.Buffers))
	for _, b := range p.Buffers {
		if b.Size > 0 && b.Start < b.End {
			events = append(events, event{b.Start, b.Size}, event{b.End, -b.Size})
		}
	}
	// At equal steps, ends come before starts: intervals are half-open.
	slices.SortFunc(events, func(x, y event) int {
		if c := cmp.Compare(x.step, y.step); c != 0 {
			return c
		}
		return cmp.Compare(x.delta, y.delta)
	})
	var live int64
	for _, e := range events {
		live += e.delta
		if live > bytes {
			bytes, step = live, e.step
		}
	}
	return bytes, step
}
