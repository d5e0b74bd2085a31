package stripe

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/tflite"
)

// livePeak is the most bytes of subgraph 0's tensors computed at run time
// that are live at once when its operators run in model order (a tensor
// from the operator writing it, or the start for an input, to its last
// reader, or the end for an output): a rough stand-in for a planner's
// peak, to rank regions.
func livePeak(m *graph.Model) int64 {
	sg := &m.Subgraphs[0]
	n := len(sg.Ops)
	first := map[graph.TensorID]int{}
	last := map[graph.TensorID]int{}
	touch := func(t graph.TensorID, i int) {
		if t < 0 || m.HasData(&sg.Tensors[t]) {
			return
		}
		if f, ok := first[t]; !ok || i < f {
			first[t] = i
		}
		if l, ok := last[t]; !ok || i > l {
			last[t] = i
		}
	}
	for _, t := range sg.Inputs {
		touch(t, 0)
	}
	for _, t := range sg.Outputs {
		touch(t, n-1)
	}
	for i := range sg.Ops {
		for _, t := range sg.Ops[i].Inputs {
			touch(t, i)
		}
		for _, t := range sg.Ops[i].Outputs {
			touch(t, i)
		}
	}
	delta := make([]int64, n+1)
	for t, f := range first {
		delta[f] += sg.Tensors[t].Size
		delta[last[t]+1] -= sg.Tensors[t].Size
	}
	var live, peak int64
	for i := 0; i < n; i++ {
		live += delta[i]
		peak = max(peak, live)
	}
	return peak
}

// stripeTrial is one region with its rows applied alone.
type stripeTrial struct {
	r    graph.StripeRegion
	peak int64 // livePeak of out
	out  *graph.Model
}

// lowPeakTrials applies every candidate of subgraph 0 with every k from 2
// to 10 whose extra MACs stay within 10 % of the model's, and returns the
// trials by livePeak, lowest first.
func lowPeakTrials(m *graph.Model) []stripeTrial {
	total := ModelMACs(m)
	var trials []stripeTrial
	for _, r := range Candidates(m) {
		if r.Subgraph != 0 {
			continue
		}
		h := m.Tensor(0, r.Output).Shape[1]
		for k := 2; k <= maxConcatInputs && int32(k) <= h; k++ {
			r.Rows = EvenRows(h, k)
			regs := []graph.StripeRegion{r}
			out, err := Apply(m, regs)
			if err != nil || float64(regs[0].ExtraMACs) > 0.1*float64(total) {
				continue
			}
			trials = append(trials, stripeTrial{regs[0], livePeak(out), out})
		}
	}
	sort.SliceStable(trials, func(a, b int) bool { return trials[a].peak < trials[b].peak })
	return trials
}

// TestStripeFigures prints, for each corpus model of the proof, the
// region and k (of the candidates, k from 2 to 10, extra MACs at most 10
// % of the model's) with the lowest TFLM arena among the 4 best by
// livePeak, with TFLM's arena_used_bytes before and after. It runs only
// with HELIAC_STRIPE_FIGURES=1 (a report, not a check).
func TestStripeFigures(t *testing.T) {
	if os.Getenv("HELIAC_STRIPE_FIGURES") == "" {
		t.Skip("set HELIAC_STRIPE_FIGURES=1 to print the stripe figures")
	}
	tool := tflmrun.Require(t)
	dir := corpus.Require(t)
	saved := proofSeeds
	proofSeeds = []int{1}
	defer func() { proofSeeds = saved }()
	for _, f := range proofModels {
		data, err := os.ReadFile(filepath.Join(dir, "corpus", f))
		require.NoError(t, err)
		m, err := tflite.Load(data)
		require.NoError(t, err)
		total := ModelMACs(m)
		trials := lowPeakTrials(m)
		if len(trials) == 0 {
			t.Logf("%s: no region within 10%% extra MACs", f)
			continue
		}
		_, before := tflmRun(t, tool, m)
		best, bestArena := -1, int64(0)
		for i := 0; i < len(trials) && i < 4; i++ {
			_, a := tflmRun(t, tool, trials[i].out)
			if best < 0 || a < bestArena {
				best, bestArena = i, a
			}
		}
		b := trials[best]
		pct := 100 * float64(b.r.ExtraMACs) / float64(max(total, 1))
		t.Logf("%s: region %d ops (%d..%d), tensor %d -> %d, k=%d: live peak %d -> %d; TFLM arena %d -> %d (%.2f); %+d ops; extra MACs %.1f%%",
			f, len(b.r.Ops), b.r.Ops[0], b.r.Ops[len(b.r.Ops)-1], b.r.Input, b.r.Output, b.r.K(), livePeak(m), b.peak, before, bestArena,
			float64(bestArena)/float64(before), len(b.out.Subgraphs[0].Ops)-len(m.Subgraphs[0].Ops), pct)
	}
}

// TestCachedHaloFigures prints, for the proof's regions of each corpus
// model (pickRegions, 4 a model) and k in {2, 3, 4, 7, 10}, ExtraMACs and
// the operators added with halos recomputed and cached, or why a cache
// is refused. It builds the rewrites only (no TFLM) and runs only with
// HELIAC_STRIPE_FIGURES=1 (a report, not a check).
func TestCachedHaloFigures(t *testing.T) {
	if os.Getenv("HELIAC_STRIPE_FIGURES") == "" {
		t.Skip("set HELIAC_STRIPE_FIGURES=1 to print the stripe figures")
	}
	dir := corpus.Require(t)
	pct := func(n, total int64) float64 { return 100 * float64(n) / float64(max(total, 1)) }
	for _, f := range proofModels {
		data, err := os.ReadFile(filepath.Join(dir, "corpus", f))
		require.NoError(t, err)
		m, err := tflite.Load(data)
		require.NoError(t, err)
		total := ModelMACs(m)
		for _, r := range pickRegions(m, 4) {
			if len(r.Ops) < 2 {
				continue // nothing to cache
			}
			h := m.Tensor(r.Subgraph, r.Output).Shape[1]
			for _, k := range []int{2, 3, 4, 7, 10} {
				if int32(k) > h {
					continue
				}
				r.Rows = EvenRows(h, k)
				line := fmt.Sprintf("%s: %d ops %d..%d, tensor %d -> %d, k=%d:", f, len(r.Ops), r.Ops[0], r.Ops[len(r.Ops)-1], r.Input, r.Output, k)
				for _, halo := range []graph.Halo{graph.HaloRecompute, graph.HaloCache} {
					r.Halo = halo
					regs := []graph.StripeRegion{r}
					out, err := Apply(m, regs)
					if err != nil {
						line += fmt.Sprintf(" %s refused (%v);", halo, err)
						continue
					}
					line += fmt.Sprintf(" %s extra MACs %d (%.2f%%), %+d ops;", halo, regs[0].ExtraMACs, pct(regs[0].ExtraMACs, total),
						len(out.Subgraphs[r.Subgraph].Ops)-len(m.Subgraphs[r.Subgraph].Ops))
				}
				t.Log(line)
			}
		}
	}
}
