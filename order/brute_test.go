package order

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/randmodel"
	"github.com/heliac/heliac/liveness"
)

// allOrders returns every order of p's operators that its dependencies
// allow, or nil when there are more than limit.
func allOrders(p *problem, limit int) [][]int32 {
	var out [][]int32
	done := make([]bool, p.n)
	cur := make([]int32, 0, p.n)
	var rec func() bool
	rec = func() bool {
		if len(cur) == p.n {
			out = append(out, append([]int32(nil), cur...))
			return len(out) <= limit
		}
		for x := range p.n {
			if done[x] {
				continue
			}
			ready := true
			for _, y := range p.preds[x] {
				ready = ready && done[y]
			}
			if !ready {
				continue
			}
			done[x] = true
			cur = append(cur, int32(x))
			ok := rec()
			cur = cur[:len(cur)-1]
			done[x] = false
			if !ok {
				return false
			}
		}
		return true
	}
	if !rec() {
		return nil
	}
	return out
}

// TestBruteForce checks the search against every order of small random
// models: LowerBound is at most the best peak, Peak at least it, and equal
// to it when Proven; and the cost model of one subgraph agrees with the
// timeline walk (never above it, equal when every subgraph runs once).
func TestBruteForce(t *testing.T) {
	cfg := randmodel.Config{Ops: 7, Subgraphs: 3, MaxDepth: 2}
	seeds := int64(400)
	if testing.Short() || raceEnabled {
		seeds = 40
	}
	checked, gains, proven := 0, 0, 0
	for seed := range seeds {
		m := randmodel.Generate(seed, cfg)
		md, err := analyze(m, DefaultAlignment)
		require.NoError(t, err)
		fx := findEffects(md)
		// Every combination of the subgraphs' orders, if few enough.
		per := make([][][]int32, len(m.Subgraphs))
		combos := 1
		for s := range m.Subgraphs {
			per[s] = allOrders(newProblem(md, fx, graph.SubgraphIndex(s), make([]int64, len(m.Subgraphs)), nil), 2000)
			if per[s] == nil || combos*len(per[s]) > 20000 {
				combos = 0
				break
			}
			combos *= len(per[s])
		}
		if combos == 0 {
			continue
		}
		checked++
		for _, hook := range []func(graph.OpRef) []Pair{nil, firstInPlace} {
			opts := Options{TimeLimit: 10e9, InPlace: hook}
			r, err := Schedule(context.Background(), m, opts)
			require.NoError(t, err)
			best := bestPeak(md, per, md.inPlacePairs(hook, false))
			name := fmt.Sprintf("seed %d, in place %v", seed, hook != nil)
			assert.LessOrEqual(t, r.LowerBound, best, name)
			assert.GreaterOrEqual(t, r.Peak, best, name)
			if r.Proven {
				assert.Equal(t, best, r.Peak, name)
			}
			if hook == nil && r.Proven {
				proven++
			}
			if hook == nil && best < r.ModelPeak {
				gains++
			}
		}
		checkCostModel(t, fmt.Sprintf("seed %d", seed), md, fx, per, nil)
		checkCostModel(t, fmt.Sprintf("seed %d, in place", seed), md, fx, per, md.inPlacePairs(firstInPlace, false))
	}
	t.Logf("%d of %d models small enough to enumerate; %d have a better order than the model's, %d proven", checked, seeds, gains, proven)
	assert.Greater(t, checked, int(seeds)/2)
}

// firstInPlace lets every operator's first output take its first input's
// bytes.
func firstInPlace(graph.OpRef) []Pair { return []Pair{{Input: 0, Output: 0}} }

// bestPeak returns the least peak on the timeline over every combination
// of the subgraphs' orders in per.
func bestPeak(md *model, per [][][]int32, inPlace [][][]bufPair) int64 {
	best := int64(-1)
	pick := make([]int, len(per))
	for {
		ord := make([][]graph.OpIndex, len(per))
		for s := range ord {
			for _, x := range per[s][pick[s]] {
				ord[s] = append(ord[s], graph.OpIndex(x))
			}
		}
		if e := md.peakOf(ord, inPlace); best < 0 || e < best {
			best = e
		}
		s := 0
		for ; s < len(pick); s++ {
			if pick[s]++; pick[s] < len(per[s]) {
				break
			}
			pick[s] = 0
		}
		if s == len(pick) {
			return best
		}
	}
}

// checkCostModel compares, for each order of subgraph 0 (its callees in
// model order), the cost model's peak with the timeline walk's and (with
// no in-place pairs) with liveness's.
func checkCostModel(t *testing.T, name string, md *model, fx *effects, per [][][]int32, inPlace [][][]bufPair) {
	m := md.m
	pairs := func(s graph.SubgraphIndex) [][]bufPair {
		if inPlace == nil {
			return nil
		}
		return inPlace[s]
	}
	calleePeak := make([]int64, len(m.Subgraphs))
	for _, s := range md.post {
		if s == 0 {
			continue
		}
		p := newProblem(md, fx, s, calleePeak, pairs(s))
		calleePeak[s] = p.peakOf(analyzeStructure(p), identity(p.n))
	}
	p := newProblem(md, fx, 0, calleePeak, pairs(0))
	st := analyzeStructure(p)
	single := true
	for _, n := range md.runs {
		single = single && n == 1
	}
	for _, o := range per[0] {
		ord := modelOrder(m)
		for i, x := range o {
			ord[0][i] = graph.OpIndex(x)
		}
		n, e := p.peakOf(st, o), md.peakOf(ord, inPlace)
		if md.entry[0] && onlyEntry(md) {
			assert.LessOrEqual(t, n, e, "%s: order %v: cost model above the timeline", name, o)
			if single && p.tail == 0 {
				assert.Equal(t, e, n, "%s: order %v: cost model and timeline", name, o)
			}
		}
		if inPlace == nil { // liveness takes contracts, not pairs
			lt, err := liveness.Analyze(m, liveness.Options{Order: ord})
			require.NoError(t, err)
			assert.Equal(t, livenessPeak(lt, DefaultAlignment), e, "%s: order %v: timeline and liveness", name, o)
		}
		// The segments' costs are the whole subgraph's.
		local := make([]int32, p.n)
		var segPeak int64 = p.inStep
		pos := make([]int, p.n)
		for i, x := range o {
			pos[x] = i
		}
		for k := range st.segs {
			v := segmentView(p, st, k, local)
			lo := make([]int32, 0, len(v.ops))
			for _, x := range o {
				if st.phase[x] == int32(k) {
					lo = append(lo, local[x])
				}
			}
			segPeak = max(segPeak, v.peakOf(lo))
		}
		assert.Equal(t, n, segPeak, "%s: order %v: segments and subgraph", name, o)
	}
}

// onlyEntry reports whether subgraph 0 is the model's only entry, so that
// its peak is the model's.
func onlyEntry(md *model) bool {
	for s, e := range md.entry {
		if e && s != 0 {
			return false
		}
	}
	return true
}

func identity(n int) []int32 {
	o := make([]int32, n)
	for i := range o {
		o[i] = int32(i)
	}
	return o
}

// livenessPeak is the peak of live scratch bytes of lt, alias groups once.
func livenessPeak(lt *liveness.Lifetimes, align int64) int64 {
	delta := make([]int64, lt.Schedule.Steps+1)
	for _, tn := range lt.Tensors {
		if tn.Class == liveness.Scratch && tn.AliasOf == nil {
			size := alignUp(tn.Size, align)
			delta[tn.Group.First] += size
			delta[tn.Group.Last+1] -= size
		}
	}
	var cur, peak int64
	for _, d := range delta {
		cur += d
		peak = max(peak, cur)
	}
	return peak
}

// TestLimitsAreLiveness keeps the work limits equal to liveness's.
func TestLimitsAreLiveness(t *testing.T) {
	assert.Equal(t, []int{liveness.MaxSteps, liveness.MaxUses, liveness.MaxDepth}, []int{maxSteps, maxUses, maxDepth})
}
