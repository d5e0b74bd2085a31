package dsa

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Buffer is one block of bytes to place. It is live over the half-open steps
// [Start, End) and needs Size contiguous bytes at an offset that is a
// multiple of Align (0 or 1: any offset). A non-nil Fixed pins its offset.
type Buffer struct {
	Start, End int64
	Size       int64
	Align      int64
	Fixed      *int64
}

// Problem is a set of buffers to place in one arena of at most Capacity
// bytes; Capacity 0 means unbounded.
type Problem struct {
	Buffers  []Buffer
	Capacity int64
}

// Solution places a Problem: Offsets[i] is the offset of Buffers[i], and
// Height is the arena size needed, the largest Offset+Size over buffers of
// non-zero size. Optimal says the strategy proved that no placement is
// lower: Height meets LowerBound, or a higher bound Best proved.
type Solution struct {
	Offsets []int64
	Height  int64
	Optimal bool
}

// ErrInfeasible reports that a valid problem has no solution within its
// constraints (or none the strategy could find). Strategies wrap it with
// detail; test for it with errors.Is. Bad input is reported by other errors.
var ErrInfeasible = errors.New("dsa: infeasible")

// Strategy places a problem's buffers. Every strategy validates p first and
// never changes it. When the only failure is a height above p.Capacity, the
// error wraps ErrInfeasible and the Solution is still returned in full, so the
// caller can report how much was needed.
//
// ctx's deadline is a time budget, not a reason to fail: a strategy that
// searches (Best) returns the best placement it has when the deadline
// passes, and the others ignore it. Only a canceled ctx makes a strategy
// return ctx's error.
type Strategy func(ctx context.Context, p Problem) (Solution, error)

// Validate reports the first malformed buffer of p, naming its index: a
// negative size, alignment or pinned offset, a pinned offset that breaks its
// alignment, a non-empty buffer whose End is not after its Start, or totals
// that would overflow int64. A negative Capacity is also malformed.
func Validate(p Problem) error {
	if p.Capacity < 0 {
		return fmt.Errorf("dsa: capacity %d is negative", p.Capacity)
	}
	var total int64 // bound on any strategy's height; must not overflow
	for i, b := range p.Buffers {
		if err := validateBuffer(b); err != nil {
			return fmt.Errorf("dsa: buffer %d: %w", i, err)
		}
		need := b.Size + max(b.Align, 1) - 1
		if b.Fixed != nil {
			need += *b.Fixed
		}
		if need < 0 || total > math.MaxInt64-need {
			return fmt.Errorf("dsa: buffer %d: total size overflows int64", i)
		}
		total += need
	}
	return nil
}

// validateBuffer checks one buffer on its own.
func validateBuffer(b Buffer) error {
	switch {
	case b.Size < 0:
		return fmt.Errorf("size %d is negative", b.Size)
	case b.Size > 0 && b.End <= b.Start:
		return fmt.Errorf("end %d is not after start %d", b.End, b.Start)
	case b.Align < 0:
		return fmt.Errorf("alignment %d is negative", b.Align)
	case b.Fixed == nil:
		return nil
	case *b.Fixed < 0:
		return fmt.Errorf("pinned offset %d is negative", *b.Fixed)
	case *b.Fixed%max(b.Align, 1) != 0:
		return fmt.Errorf("pinned offset %d is not a multiple of alignment %d", *b.Fixed, b.Align)
	}
	return nil
}

// alignUp rounds x up to a multiple of align (0 or 1: x itself).
func alignUp(x, align int64) int64 {
	if align <= 1 {
		return x
	}
	return (x + align - 1) / align * align
}

// liveTogether reports whether a and b are live at a common step.
func liveTogether(a, b Buffer) bool {
	return a.Start < b.End && b.Start < a.End
}

// height returns the largest offset+size over buffers of non-zero size.
func height(bufs []Buffer, offsets []int64) int64 {
	var h int64
	for i, b := range bufs {
		if b.Size > 0 {
			h = max(h, offsets[i]+b.Size)
		}
	}
	return h
}

// fit returns s, with an error wrapping ErrInfeasible if s is taller than a
// non-zero capacity.
func fit(p Problem, s Solution) (Solution, error) {
	s.Optimal = s.Optimal || s.Height <= LowerBound(p)
	if p.Capacity > 0 && s.Height > p.Capacity {
		return s, fmt.Errorf("%w: need %d bytes, capacity %d", ErrInfeasible, s.Height, p.Capacity)
	}
	return s, nil
}
