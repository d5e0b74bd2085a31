package plan

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
)

// hotSets returns, for each rule with Hottest set, the constants it takes:
// of the constants whose rule it is (by the precedence of applyRules), the
// ones with the most bytes read per inference per byte of the rule's arena
// (Alloc.Traffic.Read over the size rounded up to the bank's alignment;
// constants over one model buffer count as one, their reads summed, as
// the arena holds one copy), hottest first, each taken when it still fits
// in Hottest bytes and skipped when it does not; constants read by no
// operator per inference are never taken. Ties go to the lower allocation
// index. The others fall through to the rules below it.
func (pl *placer) hotSets() map[int]map[int]bool {
	eligible := map[int][]int{}
	for i := range pl.p.Allocs {
		a := &pl.p.Allocs[i]
		if a.Class != liveness.Constant {
			continue
		}
		rank, chosen := 0, -1
		for ri, r := range pl.opts.Rules {
			if rk := ruleRank(r, a); rk > 0 && rk >= rank {
				rank, chosen = rk, ri
			}
		}
		if chosen >= 0 && pl.opts.Rules[chosen].Hottest > 0 {
			eligible[chosen] = append(eligible[chosen], i)
		}
	}
	sets := map[int]map[int]bool{}
	for ri, ids := range eligible {
		r := pl.opts.Rules[ri]
		align := pl.bankAlign(r.Memory)
		type group struct {
			ids        []int
			read, size int64
		}
		var groups []*group
		byBuffer := map[graph.BufferIndex]*group{}
		for _, i := range ids {
			a := &pl.p.Allocs[i]
			buf := pl.m.Tensor(a.Ref.Subgraph, a.Ref.Tensor).Buffer
			g := byBuffer[buf]
			if g == nil {
				g = &group{size: alignTo(a.Size, align)}
				byBuffer[buf] = g
				groups = append(groups, g)
			}
			g.ids = append(g.ids, i)
			g.read += a.Traffic.Read
		}
		// Hottest first: read/size descending, exactly (cross products in
		// 128 bits); then by first allocation, as groups were made.
		slices.SortStableFunc(groups, func(x, y *group) int { return -cmpDensity(x.read, x.size, y.read, y.size) })
		set := map[int]bool{}
		var total int64
		for _, g := range groups {
			if g.read == 0 || total+g.size > r.Hottest {
				continue
			}
			total += g.size
			for _, i := range g.ids {
				set[i] = true
			}
		}
		sets[ri] = set
	}
	return sets
}

// cmpDensity compares t/n with u/m (n, m > 0; t, u >= 0) exactly.
func cmpDensity(t, n, u, m int64) int {
	hi1, lo1 := bits.Mul64(uint64(t), uint64(m))
	hi2, lo2 := bits.Mul64(uint64(u), uint64(n))
	if c := cmp.Compare(hi1, hi2); c != 0 {
		return c
	}
	return cmp.Compare(lo1, lo2)
}
