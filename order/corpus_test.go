package order_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/order"
)

// TestCorpusFigures logs, per corpus model and mode (plain, and with TFLM's
// in-place contracts, heliac's default), the model order's peak, the best
// peak, the lower bound, whether it is proven and the time taken, and the
// geometric mean of best over model order. It asserts no timing.
func TestCorpusFigures(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("corpus figures take a second, and their times mean nothing under the race detector")
	}
	models := corpusModels(t)
	for _, mo := range modes(t)[:2] {
		logSum, n := 0.0, 0
		t.Logf("%s:", mo.name)
		t.Logf("%-60s %10s %10s %10s %6s %9s %6s %7s", "model", "model", "best", "bound", "proven", "work", "ms", "change")
		for _, nm := range models {
			m := load(t, nm.data)
			start := time.Now()
			r, err := order.Schedule(context.Background(), m, mo.options(m))
			ms := time.Since(start).Milliseconds()
			require.NoError(t, err, nm.name)
			change := 0.0
			if r.ModelPeak > 0 {
				change = 100 * (float64(r.Peak)/float64(r.ModelPeak) - 1)
				logSum += math.Log(float64(r.Peak) / float64(r.ModelPeak))
				n++
			}
			t.Logf("%-60s %10d %10d %10d %6v %9d %6d %+6.1f%%", nm.name, r.ModelPeak, r.Peak, r.LowerBound, r.Proven, r.Work, ms, change)
			assert.False(t, r.TimedOut, "%s: the search stopped on the clock, not its work budget", nm.name)
			assert.LessOrEqual(t, r.Peak, r.ModelPeak, nm.name)
			assert.LessOrEqual(t, r.LowerBound, r.Peak, nm.name)
		}
		if n > 0 {
			t.Logf("%s: geometric mean of best/model order over %d models: %.4f", mo.name, n, math.Exp(logSum/float64(n)))
		}
	}
}

// BenchmarkCorpus schedules every corpus model once per iteration; run one
// model with -bench 'Corpus/dp_net'.
func BenchmarkCorpus(b *testing.B) {
	for _, nm := range corpusModels(b) {
		m := load(b, nm.data)
		b.Run(nm.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := order.Schedule(context.Background(), m, order.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
