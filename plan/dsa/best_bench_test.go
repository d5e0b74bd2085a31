package dsa

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// syntheticChain returns n buffers along a long chain of steps: buffer i
// starts at step i/2 and lives 1 to 6 steps, with a random size of 16 to
// 4096 bytes in steps of 16. The seed is fixed, so the problem is too.
func syntheticChain(n int) Problem {
	r := rand.New(rand.NewPCG(uint64(n), 1))
	p := Problem{Buffers: make([]Buffer, n)}
	for i := range p.Buffers {
		start := int64(i / 2)
		p.Buffers[i] = Buffer{Start: start, End: start + 1 + r.Int64N(6), Size: 16 * (1 + r.Int64N(256))}
	}
	return p
}

// BenchmarkBestSynthetic times Best, with no deadline, on long chains of
// buffers and reports the height it reaches next to the lower bound.
func BenchmarkBestSynthetic(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		p := syntheticChain(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var s Solution
			for b.Loop() {
				var err error
				if s, err = Best(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
			lb := LowerBound(p)
			b.ReportMetric(float64(s.Height), "height")
			b.ReportMetric(float64(lb), "lowerbound")
			b.ReportMetric(float64(s.Height)/float64(lb), "height/lb")
		})
	}
}
