package heliac_test

import (
	"context"
	"testing"

	"github.com/heliac/heliac"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/randmodel"
	"github.com/heliac/heliac/tflite"
)

// BenchmarkCompileAtLimits compiles, as the heliac command does, models at
// the limits heliac accepts: 32,768 steps (liveness.MaxSteps), calls
// nested up to liveness.MaxDepth.
// Every compile of a model within the limits is to stay under two seconds;
// run with -benchtime=3x and read ns/op, or cpu-s/op (the process's CPU
// time, garbage collection on other threads included) on a loaded machine:
//
//   - a chain of 32,765 RELUs written in place (one alias group of 32,764
//     members), and the same without in-place writes;
//   - a wide fan: one input, 16,383 parallel TANH, a chain of ADDs (32,766
//     steps; the order search stops on its work budget);
//   - subgraphs that each call the next twice, 12 deep (4,096 runs of the
//     last one, about 20,500 steps), and calls nested 63 deep.
func BenchmarkCompileAtLimits(b *testing.B) {
	cases := []struct {
		name  string
		model *graph.Model
		opts  heliac.Options
	}{
		{"relu-chain-32765", randmodel.ReluChain(32765, 4), heliac.Options{}},
		{"relu-chain-32765-no-in-place", randmodel.ReluChain(32765, 4), heliac.Options{NoInPlace: true}},
		{"wide-fan-16383", randmodel.WideFan(16383), heliac.Options{}},
		{"call-chain-12x2", randmodel.CallChain(12, 2), heliac.Options{}},
		{"call-chain-63x1", randmodel.CallChain(63, 1), heliac.Options{}},
	}
	for _, c := range cases {
		data, err := tflite.Encode(c.model, tflite.EncodeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			start := cpuTime()
			for b.Loop() {
				if _, err := heliac.Compile(context.Background(), data, c.opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuTime()-start).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
