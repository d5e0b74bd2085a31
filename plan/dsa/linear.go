package dsa

import (
	"context"
	"errors"
)

// Linear is the trivially correct baseline, like TFLM's LinearMemoryPlanner:
// it reuses no bytes. Pinned buffers sit at their Fixed offsets; every other
// buffer, in index order, is stacked above all buffers placed before it,
// rounded up to its alignment. Its height is the sum of all sizes plus
// alignment padding (plus what the pinned buffers take). It ignores ctx's
// deadline and fails only when ctx is canceled.
func Linear(ctx context.Context, p Problem) (Solution, error) {
	if err := Validate(p); err != nil {
		return Solution{}, err
	}
	if err := ctx.Err(); errors.Is(err, context.Canceled) {
		return Solution{}, err
	}
	s := Solution{Offsets: make([]int64, len(p.Buffers))}
	a, err := pin(p.Buffers, s.Offsets)
	if err != nil {
		return Solution{}, err
	}
	var top int64
	for _, sl := range a.slots {
		top = max(top, sl.end)
	}
	for i, b := range p.Buffers {
		if b.Fixed != nil || b.Size == 0 {
			continue
		}
		s.Offsets[i] = alignUp(top, b.Align)
		top = s.Offsets[i] + b.Size
	}
	s.Height = top
	return fit(p, s)
}
