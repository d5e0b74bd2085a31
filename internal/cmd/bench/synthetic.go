package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// synthetic builds a model of n tensors: a chain of operators, each reading
// the previous output and sometimes an older one (a skip connection), with
// sizes between 16 B and 64 KiB.
func synthetic(n int) *graph.Model {
	r := rand.New(rand.NewPCG(uint64(n), 1))
	sg := graph.Subgraph{Tensors: make([]graph.Tensor, n)}
	for i := range sg.Tensors {
		elems := int32(4 + r.IntN(16384))
		sg.Tensors[i] = graph.Tensor{Name: fmt.Sprintf("t%d", i), Type: graph.Float32, Shape: []int32{elems}, Size: int64(elems) * 4}
	}
	sg.Inputs = []graph.TensorID{0}
	sg.Outputs = []graph.TensorID{graph.TensorID(n - 1)}
	for i := 1; i < n; i++ {
		in := []graph.TensorID{graph.TensorID(i - 1)}
		if i > 8 && r.IntN(4) == 0 {
			in = append(in, graph.TensorID(i-2-r.IntN(6)))
		}
		sg.Ops = append(sg.Ops, graph.Op{Code: 0, CodeName: "ADD", Inputs: in, Outputs: []graph.TensorID{graph.TensorID(i)}})
	}
	return &graph.Model{Version: 3, Subgraphs: []graph.Subgraph{sg}, Buffers: []graph.Buffer{{}}}
}

// synthetics plans synthetic graphs of growing size and reports time and
// memory.
func synthetics() error {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "synthetic tensors\tarena\tlower bound\tarena/LB\tms\tMiB allocated\t")
	for _, n := range []int{1000, 10000, 30000} { // the largest within liveness.MaxSteps
		m := synthetic(n)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		lt, err := liveness.Analyze(m, liveness.Options{})
		if err != nil {
			return err
		}
		p, err := plan.Build(context.Background(), m, lt, plan.Options{})
		if err != nil {
			return err
		}
		ms := float64(time.Since(start).Microseconds()) / 1000
		runtime.ReadMemStats(&after)
		size, lb := p.ScratchTotals()
		fmt.Fprintf(w, "%d\t%d\t%d\t%.3f\t%.1f\t%.1f\t\n", n, size, lb, float64(size)/float64(lb), ms,
			float64(after.TotalAlloc-before.TotalAlloc)/(1<<20))
	}
	return w.Flush()
}
