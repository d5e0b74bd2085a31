package liveness

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestApplyMatchesSteps checks profile.apply, which sweeps over the points
// where members start and end, against the width of the group worked out
// at every step.
func TestApplyMatchesSteps(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const steps = 20
	for trial := range 500 {
		member := func() *Tensor {
			f := Step(r.IntN(steps+4) - 2)
			return &Tensor{Size: r.Int64N(40), AliasOffset: r.Int64N(64) - 16, Live: Interval{f, f + Step(r.IntN(8)) - 1}}
		}
		var ms, more []*Tensor
		for range r.IntN(6) {
			ms = append(ms, member())
		}
		for range r.IntN(4) {
			more = append(more, member())
		}
		off0, off := r.Int64N(32), r.Int64N(64)-32
		first := Step(r.IntN(steps + 2))
		over := Interval{first, first + Step(r.IntN(steps))}
		sign := int64(1 - 2*r.IntN(2))
		p := &profile{diff: make([]int64, steps+1), align: 16}
		p.apply(ms, off0, more, off, over, sign)

		var live int64
		for s := Step(0); s < steps; s++ {
			live += p.diff[s]
			lo, hi := int64(1<<62), int64(-(1 << 62))
			mark := func(ts []*Tensor, base int64) {
				for _, t := range ts {
					if t.Live.First <= s && s <= t.Live.Last {
						lo, hi = min(lo, base+t.AliasOffset), max(hi, base+t.AliasOffset+t.Size)
					}
				}
			}
			var want int64
			if s >= over.First && s <= over.Last {
				mark(ms, off0)
				mark(more, off)
				if hi > lo {
					want = sign * p.round(hi-lo)
				}
			}
			assert.Equal(t, want, live, "trial %d, step %d", trial, s)
		}
	}
}
