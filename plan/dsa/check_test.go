package dsa

import (
	"fmt"
	"testing"
)

// violations checks s against p the naive way, sharing no code with the
// package: every pair of non-empty buffers live at a common step must not
// share a byte, offsets must be aligned, pinned and non-negative, and Height
// must be the largest end. It returns one line per violation.
func violations(p Problem, s Solution) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if len(s.Offsets) != len(p.Buffers) {
		bad("%d offsets for %d buffers", len(s.Offsets), len(p.Buffers))
		return out
	}
	var top int64
	for i, b := range p.Buffers {
		off := s.Offsets[i]
		switch {
		case off < 0:
			bad("buffer %d: negative offset %d", i, off)
		case b.Align > 1 && off%b.Align != 0:
			bad("buffer %d: offset %d not a multiple of %d", i, off, b.Align)
		case b.Fixed != nil && off != *b.Fixed:
			bad("buffer %d: offset %d, pinned at %d", i, off, *b.Fixed)
		}
		if b.Size > 0 && off+b.Size > top {
			top = off + b.Size
		}
		for j := i + 1; j < len(p.Buffers); j++ {
			c := p.Buffers[j]
			if b.Size == 0 || c.Size == 0 {
				continue
			}
			inTime := b.Start < c.End && c.Start < b.End
			inSpace := off < s.Offsets[j]+c.Size && s.Offsets[j] < off+b.Size
			if inTime && inSpace {
				bad("buffers %d and %d overlap", i, j)
			}
		}
	}
	if s.Height != top {
		bad("height %d, buffers reach %d", s.Height, top)
	}
	return out
}

// requireValid fails t now if s does not solve p.
func requireValid(t testing.TB, p Problem, s Solution) {
	t.Helper()
	if v := violations(p, s); len(v) > 0 {
		t.Fatalf("invalid solution: %v", v)
	}
}

func ptr(v int64) *int64 { return &v }

// strategies lists every strategy, for tests that run them all.
var strategies = []struct {
	name string
	run  Strategy
}{
	{"Linear", Linear},
	{"Greedy", Greedy},
	{"Best", Best},
}
