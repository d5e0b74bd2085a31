package liveness

import (
	"cmp"
	"maps"
	"slices"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
)

// viewOps are the operators whose output is their first input's bytes
// reinterpreted, so output and input can share one buffer.
var viewOps = map[graph.Opcode]bool{
	graph.Reshape:    true,
	graph.Squeeze:    true,
	graph.ExpandDims: true,
	graph.Bitcast:    true,
}

// The sharing rule. An alias group's members share bytes, and a write to
// any of them writes all of them. So a tensor may share bytes with
// another (a view's output with its input, an in-place output with the
// input it is written over) only while those bytes are written by nobody
// else: from the step a member gets its value to its last read, no
// operator but the one giving it that value may write a member of its
// group over its bytes. A tensor the model writes more than once (by two
// operators, or by one whose output is its own input, LOGISTIC(t) -> t)
// changes value in its own bytes; a view of it made before the last
// write would see the new value where the model reads the old.
//
// Liveness keeps the rule without looking at the order, so that every
// legal order (order.Schedule's) keeps it too:
//
//   - a view joins its input's group only when every operator writing
//     the group's root comes before the view in the model's order (the
//     other members of a view group are views, each written once, by its
//     view): the writes to the root and the view's read of its input keep
//     their order in every legal order, so after the view nothing writes
//     the group; a view output written by a second operator never joins;
//   - an in-place write joins an output written once to a group every
//     member of which is dead after the operator (inPlace), so nothing
//     reads the old value after the write;
//   - a called subgraph writes its tensors afresh on every run, and a
//     group lies in one subgraph and holds none of its inputs or outputs,
//     so each run keeps the rule on its own;
//   - is_variable tensors are persistent, and only scratch tensors alias.
//
// The verifier checks the rule itself, on the plan's schedule
// (verify/clobber.go).

// alias joins the output of each view operator to its input's buffer when
// that is safe:
//
//   - both are scratch tensors of the same byte size;
//   - neither is an input or output of any subgraph: the caller owns model
//     inputs and outputs, and control-flow kernels copy subgraph inputs and
//     outputs, so those keep buffers of their own;
//   - the output has no other writer, and every writer of the input's
//     group's root comes before the view (the sharing rule).
//
// Members of a group share the root's buffer; the root's Group becomes the
// union of the members' lifetimes.
//
// With lib (exact-overlap copies on), the output of a slice (SPLIT,
// SPLIT_V, SLICE, STRIDED_SLICE) that is one contiguous block of its
// input joins the input's group over that block, by the same rule, when
// the block lies a multiple of align bytes from the group's root (see
// copies.go).
func (a *analyzer) alias(lib *kernels.Library, align int64) {
	f := a.boundaryFacts()
	a.indexMembers()
	for si, sg := range a.m.Subgraphs {
		s := graph.SubgraphIndex(si)
		lastWrite := map[graph.TensorID]int{} // the last operator writing each tensor, in model order
		for oi, op := range sg.Ops {
			for _, list := range [][]graph.TensorID{op.Outputs, op.Intermediates} {
				for _, t := range list {
					lastWrite[t] = oi
				}
			}
		}
		for oi, op := range sg.Ops {
			if lib != nil {
				a.blockViews(lib, f, lastWrite, s, oi, align)
			}
			if !viewOps[op.Code] || len(op.Inputs) == 0 || len(op.Outputs) != 1 || op.Inputs[0] == graph.NoTensor {
				continue
			}
			in := graph.TensorRef{Subgraph: s, Tensor: op.Inputs[0]}
			out := graph.TensorRef{Subgraph: s, Tensor: op.Outputs[0]}
			ti, to := a.lt.Lookup(in), a.lt.Lookup(out)
			if in == out || ti.Class != Scratch || to.Class != Scratch || ti.Size != to.Size || ti.OwnPlan != nil || to.OwnPlan != nil ||
				f.boundary[in] || f.boundary[out] || f.writers[out] != 1 || to.AliasOf != nil {
				continue
			}
			r := a.root(in)
			if w, ok := lastWrite[r.Tensor]; r == out || (ok && w > oi) {
				continue
			}
			a.join(out, r, ti.AliasOffset)
		}
	}
}

// boundaryFacts is what the alias passes need to know of the model's
// tensors: which are a subgraph's inputs or outputs, which are inputs of
// the main subgraph and not its outputs, and how many operators write
// each.
type boundaryFacts struct {
	boundary, mainInput map[graph.TensorRef]bool
	writers             map[graph.TensorRef]int
}

func (a *analyzer) boundaryFacts() boundaryFacts {
	f := boundaryFacts{boundary: map[graph.TensorRef]bool{}, mainInput: map[graph.TensorRef]bool{}, writers: map[graph.TensorRef]int{}}
	for si, sg := range a.m.Subgraphs {
		s := graph.SubgraphIndex(si)
		for _, t := range sg.Inputs {
			f.boundary[graph.TensorRef{Subgraph: s, Tensor: t}] = true
			if si == 0 {
				f.mainInput[graph.TensorRef{Subgraph: s, Tensor: t}] = true
			}
		}
		for _, t := range sg.Outputs {
			f.boundary[graph.TensorRef{Subgraph: s, Tensor: t}] = true
			delete(f.mainInput, graph.TensorRef{Subgraph: s, Tensor: t})
		}
		for _, op := range sg.Ops {
			for _, t := range op.Outputs {
				f.writers[graph.TensorRef{Subgraph: s, Tensor: t}]++
			}
		}
	}
	return f
}

// root returns the root of r's alias group (r itself when it has none).
func (a *analyzer) root(r graph.TensorRef) graph.TensorRef {
	for {
		t := a.lt.Lookup(r)
		if t.AliasOf == nil {
			return r
		}
		r = *t.AliasOf
	}
}

// join makes out, a tensor in no group (but perhaps the root of members
// of its own, which follow it), a member of root r's group, its first
// byte off bytes from r's. The group's lifetime and extent grow to cover
// out and its members.
//
// indexMembers must have run since the tensors last changed otherwise.
func (a *analyzer) join(out, r graph.TensorRef, off int64) {
	to, rt := a.lt.Lookup(out), a.lt.Lookup(r)
	rt.Group = hull(rt.Group, to.Group)
	rt.Extent = hullBytes(rt.Extent, to.Extent.Shift(off))
	to.AliasOf, to.AliasOffset = &r, off
	for _, i := range a.members[out] {
		m := &a.lt.Tensors[i]
		m.AliasOf = &r
		m.AliasOffset += off
	}
	a.members[r] = append(append(a.members[r], a.members[out]...), a.index(out))
	delete(a.members, out)
	to.Group, to.Extent = to.Live, ByteRange{off, off + to.Size}
}

// index returns where r is in the tensors.
func (a *analyzer) index(r graph.TensorRef) int { return a.lt.first[r.Subgraph] + int(r.Tensor) }

// indexMembers lists, for join, the members of each alias group by root:
// their indexes in the tensors, so that a chain of n joins costs n steps,
// not n².
func (a *analyzer) indexMembers() {
	a.members = map[graph.TensorRef][]int{}
	for i := range a.lt.Tensors {
		if t := &a.lt.Tensors[i]; t.AliasOf != nil {
			a.members[*t.AliasOf] = append(a.members[*t.AliasOf], i)
		}
	}
}

// inPlace joins an operator's output to the alias group of an input it
// may be written over under a contract of lib, when that is safe:
//
//   - both are scratch tensors, and the contract applies (for Exact, the
//     same shape and element size);
//   - the contract lets the input lie at a multiple of align bytes from
//     the output (the largest such offset is taken: PAD's input as far
//     toward the end of its output as it may go);
//   - neither is an input or output of any subgraph, except that with
//     overwrite a main-subgraph input that is not also an output may be
//     written over;
//   - the output has no other writer and is in no group yet (it may be the
//     root of views of its own, which follow it);
//   - the operator runs once and calls no subgraph;
//   - every member of the input's group is dead after the operator: its
//     group's lifetime ends at the operator's step.
//
// Operators are taken in the order they run, so a chain of in-place
// operators forms one group. The first contract that applies to an
// output wins, unless the policy refuses the write (see profile): a
// group's members keep fixed offsets from one another, so a chain of
// writes that each move the output off its input (sliding windows) drifts,
// and the group's span can grow past what the writes save.
func (a *analyzer) inPlace(lib *kernels.Library, overwrite bool, align int64) {
	// No one rule decides every write well, so several policies run and
	// the one of least cost (profile) wins, the first of equals: every
	// contract but Sweep, always (heliac's policy before Sweep); every
	// contract, always; every contract, each write only where it keeps
	// the cost; every contract, each write only where its group's span
	// stays within a cap (the largest scratch tensor, and 1/8, 1/4 and
	// 1/2 more), which breaks a drifting chain into groups; each with
	// outputs placed high or low.
	base := slices.Clone(a.lt.Tensors)
	var best []Tensor
	var bestPeak int64
	placements := map[graph.OpRef][]kernels.Placement{}
	var largest int64
	for _, t := range a.lt.Tensors {
		if t.Class == Scratch {
			largest = max(largest, alignUp(t.Size, align))
		}
	}
	policies := []inPlacePolicy{{}}
	for _, high := range []bool{false, true} {
		policies = append(policies, inPlacePolicy{sweep: true, high: high}, inPlacePolicy{sweep: true, high: high, keepPeak: true})
		for _, eighths := range []int64{8, 9, 10, 12} {
			c := alignUp(largest*eighths/8, align)
			policies = append(policies, inPlacePolicy{sweep: true, high: high, spanCap: c})
		}
	}
	type result struct {
		cost   int64
		pol    inPlacePolicy
		joined []int
	}
	// Each pass costs about the tensors, runs and lifetimes' steps: the
	// passes (policies and search) share a bound on that work, so a model
	// of long-lived tensors on a long timeline gets few.
	passCost := int64(len(a.lt.Tensors) + len(a.lt.Schedule.Runs))
	for _, t := range a.lt.Tensors {
		if t.Class == Scratch && t.Live.First >= 0 {
			passCost += int64(t.Live.Last-t.Live.First) + 1
		}
	}
	passes := int(max(1, inPlaceWork/max(1, passCost))) // an empty model costs nothing
	var results []result
	for i, pol := range policies {
		if i == passes {
			break
		}
		copy(a.lt.Tensors, base)
		joined := a.inPlaceWith(lib, overwrite, align, pol, placements)
		cost := a.newProfile(align).cost()
		if best == nil || cost < bestPeak {
			best, bestPeak = slices.Clone(a.lt.Tensors), cost
		}
		results = append(results, result{cost, pol, joined})
		if i == 0 && !offsetContracts(placements) {
			break // every policy makes the same writes
		}
	}
	// Then a local search over which operators write in place, from each
	// of the three best policies' choices: stop one that writes; let one
	// that does not, and perhaps stop one of the three before or after it
	// that does (moving a chain's break); keep a change that lowers the
	// cost.
	slices.SortStableFunc(results, func(x, y result) int { return cmp.Compare(x.cost, y.cost) })
	evals := len(results)
	for n, start := range results {
		if n == 3 || !start.pol.sweep {
			break
		}
		only := map[int]bool{}
		for _, k := range start.joined {
			only[k] = true
		}
		cost := start.cost
		try := func(add int, drop int) bool {
			evals++
			trial := maps.Clone(only)
			if add >= 0 {
				trial[add] = true
			}
			if drop >= 0 {
				delete(trial, drop)
			}
			copy(a.lt.Tensors, base)
			joined := a.inPlaceWith(lib, overwrite, align, inPlacePolicy{sweep: true, high: start.pol.high, only: trial}, placements)
			c := a.newProfile(align).cost()
			if c >= cost {
				return false
			}
			cost, only = c, map[int]bool{}
			for _, k := range joined {
				only[k] = true
			}
			if c < bestPeak {
				best, bestPeak = slices.Clone(a.lt.Tensors), c
			}
			return true
		}
		budget := evals + maxInPlaceSearch
		if n == 0 {
			budget += maxInPlaceSearch
		}
		budget = min(budget, passes)
		for improved := true; improved && evals < budget; {
			improved = false
			// Stop one that writes, alone (a break that shortens a span).
			for _, k := range slices.Sorted(maps.Keys(only)) {
				if evals < budget && try(-1, k) {
					improved = true
				}
			}
			for k, run := range a.lt.Schedule.Runs {
				if only[k] || len(placements[run.Op]) == 0 {
					continue
				}
				// Runs near k that write, nearest first: three before
				// it, then three after it (moving a chain's break later:
				// an early write that makes its chain drift past the
				// peak may pay once the chain breaks after it).
				var near []int
				for j := k - 1; j >= 0 && len(near) < 3; j-- {
					if only[j] {
						near = append(near, j)
					}
				}
				for j, n := k+1, len(near)+3; j < len(a.lt.Schedule.Runs) && len(near) < n; j++ {
					if only[j] {
						near = append(near, j)
					}
				}
				for _, drop := range append([]int{-1}, near...) {
					if evals >= budget {
						break
					}
					if try(k, drop) {
						improved = true
						break
					}
				}
			}
		}
	}
	copy(a.lt.Tensors, best)
}

// maxInPlaceSearch bounds the passes the in-place local search makes from
// each start (twice as many from the best); inPlaceWork bounds the work of
// all passes together, in tensors, runs and lifetime steps (a pass over
// mobilenet_v2 costs about 1,000).
const (
	maxInPlaceSearch = 96
	inPlaceWork      = 20_000_000
)

// offsetContracts reports whether some placement puts an input elsewhere
// than exactly over its output.
func offsetContracts(placements map[graph.OpRef][]kernels.Placement) bool {
	for _, ps := range placements {
		for _, p := range ps {
			if p.Overlap != kernels.Exact {
				return true
			}
		}
	}
	return false
}

// inPlacePolicy says which in-place writes the pass makes: Sweep
// contracts or not; each write only where it keeps the profile's cost no
// higher (keepPeak), or only where its group's span stays within spanCap
// bytes (when not 0); and where, of the places that keep the group's
// extent least, an output goes: at its highest (high) or lowest.
type inPlacePolicy struct {
	sweep, keepPeak, high bool
	spanCap               int64
	// only, when set, lists the runs (indexes of Schedule.Runs) that
	// write in place where a contract allows, with no other check.
	only map[int]bool
}

// inPlaceWith makes the in-place writes pol allows and returns the runs
// (indexes of Schedule.Runs) that wrote in place; placements caches the
// library's answer per operator.
func (a *analyzer) inPlaceWith(lib *kernels.Library, overwrite bool, align int64, pol inPlacePolicy,
	placements map[graph.OpRef][]kernels.Placement) []int {
	var joined []int
	f := a.boundaryFacts()
	a.indexMembers()
	var prof *profile
	if pol.keepPeak && pol.only == nil {
		prof = a.newProfile(align)
	}
	runs := map[graph.OpRef]int{}
	for _, r := range a.lt.Schedule.Runs {
		runs[r.Op]++
	}
	for k, run := range a.lt.Schedule.Runs {
		if pol.only != nil && !pol.only[k] {
			continue
		}
		s := run.Op.Subgraph
		op := &a.m.Subgraphs[s].Ops[run.Op.Op]
		if runs[run.Op] != 1 || len(op.Called) > 0 || run.Span.First != run.Span.Last {
			continue
		}
		step := run.Span.First
		taken := map[int]bool{}
		ps, ok := placements[run.Op]
		if !ok {
			ps = lib.InPlace(a.m, s, op)
			placements[run.Op] = ps
		}
		for _, p := range ps {
			if taken[p.Output] || (p.Overlap == kernels.Sweep && !pol.sweep && pol.only == nil) {
				continue
			}
			in := graph.TensorRef{Subgraph: s, Tensor: op.Inputs[p.Input]}
			out := graph.TensorRef{Subgraph: s, Tensor: op.Outputs[p.Output]}
			ti, to := a.lt.Lookup(in), a.lt.Lookup(out)
			r := a.root(in)
			if r == out || ti.Class != Scratch || to.Class != Scratch || ti.OwnPlan != nil || to.OwnPlan != nil ||
				(f.boundary[in] && !(overwrite && f.mainInput[in])) || f.boundary[out] ||
				f.writers[out] != 1 || to.AliasOf != nil {
				continue
			}
			rt := a.lt.Lookup(r)
			if rt.Group.Last > step || to.Live.First != step {
				continue
			}
			// The input starts d bytes after the output does, the output
			// off bytes from the group's root.
			d, ok := placeInput(p, align, ti.AliasOffset, ti.Size, to.Size, rt.Extent, pol.high)
			if !ok {
				continue
			}
			off := ti.AliasOffset - d
			if pol.only == nil && pol.spanCap > 0 && alignUp(hullBytes(rt.Extent, to.Extent.Shift(off)).Size(), align) > pol.spanCap {
				continue
			}
			if pol.only == nil && pol.keepPeak && !prof.joinKeepsPeak(rt, to, off) {
				continue
			}
			a.join(out, r, off)
			to.InPlace = &InPlace{Op: run.Op, Input: in, Contract: p.Contract}
			taken[p.Output] = true
			if len(joined) == 0 || joined[len(joined)-1] != k {
				joined = append(joined, k)
			}
		}
	}
	return joined
}

// placeInput returns where p's input is to start relative to its output's
// start, and whether p allows any such place: a multiple of align
// (positive) in [p.Lo, p.Hi] that leaves the group the fewest bytes. The
// input, of in bytes, lies at inAt in a group of extent ext (relative to
// the group's root); the output, of out bytes, will lie at inAt - d. Of
// equals, the output's highest place when high is set, else its lowest.
func placeInput(p kernels.Placement, align, inAt, in, out int64, ext ByteRange, high bool) (int64, bool) {
	down := func(x int64) int64 { // the largest multiple of align <= x
		d := x / align * align
		if d > x { // x negative, not a multiple: division rounded up
			d -= align
		}
		return d
	}
	up := func(x int64) int64 { return down(x + align - 1) }
	span := func(d int64) int64 { return hullBytes(ext, ByteRange{inAt - d, inAt - d + out}).Size() }
	// The span is piecewise linear in d, least where the output lies
	// inside the extent or covers it: the best multiple is next to an end
	// of that range or of p's.
	var cands []int64
	for _, x := range []int64{p.Hi, p.Lo, 0, in - out, inAt - ext.Lo, inAt - ext.Hi + out, inAt - ext.Hi, inAt - ext.Lo + out} {
		cands = append(cands, down(x), up(x))
	}
	best, found := int64(0), false
	for _, d := range cands {
		if !p.Allows(d) {
			continue
		}
		better := !found || span(d) < span(best)
		if found && span(d) == span(best) {
			better = (high && d < best) || (!high && d > best)
		}
		if better {
			best, found = d, true
		}
	}
	return best, found
}

// profile is the live scratch bytes at each step of the timeline with
// each alias group counted, at each step, as the hull of its members live
// there (sizes rounded up to the alignment), and the widest group's span
// (the hull of all its members): plan places a group's members at fixed
// offsets from one another, so its arena is at least both. Its cost,
// max(peak, span), is what the in-place pass checks each write against,
// and what chooses between policies.
type profile struct {
	// diff holds the live bytes as differences: those at step s are
	// the sum of diff[:s+1].
	diff []int64
	// blocks, when set (Options.BlockCost), holds each group's extent
	// over its lifetime, as differences; the cost is then their peak.
	blocks  []int64
	span    int64
	align   int64
	members map[graph.TensorRef][]*Tensor // by group root, the root first
}

func (a *analyzer) newProfile(align int64) *profile {
	p := &profile{diff: make([]int64, a.lt.Schedule.Steps+1), align: align, members: map[graph.TensorRef][]*Tensor{}}
	if a.blockCost {
		p.blocks = make([]int64, a.lt.Schedule.Steps+1)
	}
	for i := range a.lt.Tensors {
		t := &a.lt.Tensors[i]
		if t.Class != Scratch || t.Live.First < 0 {
			continue
		}
		r := t.Ref
		if t.AliasOf != nil {
			r = *t.AliasOf
		}
		p.members[r] = append(p.members[r], t)
	}
	for r, ms := range p.members {
		root := a.lt.Lookup(r)
		p.apply(ms, 0, nil, 0, root.Group, 1)
		p.block(root.Group, root.Extent, 1)
		p.span = max(p.span, p.round(root.Extent.Size()))
	}
	return p
}

func (p *profile) round(size int64) int64 { return alignUp(size, p.align) }

// block adds sign times a group's extent ext over its lifetime g to the
// blocks, when the profile keeps them.
func (p *profile) block(g Interval, ext ByteRange, sign int64) {
	if p.blocks == nil || g.First < 0 {
		return
	}
	w := sign * p.round(ext.Size())
	p.blocks[g.First] += w
	p.blocks[min(g.Last, Step(len(p.blocks)-2))+1] -= w
}

// alignUp rounds size up to a multiple of align.
func alignUp(size, align int64) int64 { return (size + align - 1) / align * align }

// apply adds sign times the width of the group made of ms and, shifted by
// off, more, at each step of over. The width changes only where a
// member's lifetime starts or ends, so apply sweeps over those points,
// with the members live there in two heaps (lowest first byte, highest
// last), and adds each width between two points to the difference array:
// time in the members, not in the steps they live (a group of n
// long-lived members would cost n²).
func (p *profile) apply(ms []*Tensor, off0 int64, more []*Tensor, off int64, over Interval, sign int64) {
	if over.First < 0 {
		return
	}
	last := min(over.Last, Step(len(p.diff)-2))
	var segs []memberSeg
	add := func(t *Tensor, at int64) {
		if f, l := max(t.Live.First, over.First), min(t.Live.Last, last); f <= l {
			segs = append(segs, memberSeg{f, l, at, at + t.Size})
		}
	}
	for _, t := range ms {
		add(t, off0+t.AliasOffset)
	}
	for _, t := range more {
		add(t, off+t.AliasOffset)
	}
	slices.SortFunc(segs, func(a, b memberSeg) int { return cmp.Compare(a.first, b.first) })
	pts := make([]Step, 0, 2*len(segs))
	for _, sg := range segs {
		pts = append(pts, sg.first, sg.last+1)
	}
	slices.Sort(pts)
	pts = slices.Compact(pts)
	lows := &segHeap{segs: segs, less: func(a, b memberSeg) bool { return a.lo < b.lo }}
	highs := &segHeap{segs: segs, less: func(a, b memberSeg) bool { return a.hi > b.hi }}
	next := 0
	for i := 0; i+1 < len(pts); i++ {
		step := pts[i]
		for ; next < len(segs) && segs[next].first <= step; next++ {
			lows.push(next)
			highs.push(next)
		}
		for _, h := range []*segHeap{lows, highs} {
			for len(h.ids) > 0 && segs[h.ids[0]].last < step {
				h.pop()
			}
		}
		if len(lows.ids) == 0 {
			continue
		}
		if lo, hi := segs[lows.ids[0]].lo, segs[highs.ids[0]].hi; hi > lo {
			w := sign * p.round(hi-lo)
			p.diff[step] += w
			p.diff[pts[i+1]] -= w
		}
	}
}

// memberSeg is a member's bytes [lo, hi) in its group over the steps
// [first, last].
type memberSeg struct {
	first, last Step
	lo, hi      int64
}

// segHeap is a heap of indexes of segs, the least by less first.
type segHeap struct {
	ids  []int
	segs []memberSeg
	less func(a, b memberSeg) bool
}

func (h *segHeap) before(i, j int) bool { return h.less(h.segs[h.ids[i]], h.segs[h.ids[j]]) }

func (h *segHeap) push(x int) {
	h.ids = append(h.ids, x)
	for i := len(h.ids) - 1; i > 0 && h.before(i, (i-1)/2); i = (i - 1) / 2 {
		h.ids[i], h.ids[(i-1)/2] = h.ids[(i-1)/2], h.ids[i]
	}
}

func (h *segHeap) pop() {
	n := len(h.ids) - 1
	h.ids[0] = h.ids[n]
	h.ids = h.ids[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && h.before(c+1, c) {
			c++
		}
		if !h.before(c, i) {
			return
		}
		h.ids[i], h.ids[c] = h.ids[c], h.ids[i]
		i = c
	}
}

func (p *profile) cost() int64 {
	m := p.span
	var live int64
	for _, d := range p.diff[:len(p.diff)-1] {
		live += d
		m = max(m, live)
	}
	if p.blocks != nil {
		live = 0
		for _, d := range p.blocks[:len(p.blocks)-1] {
			live += d
			m = max(m, live)
		}
	}
	return m
}

// joinKeepsPeak reports whether making out (with its own members) a member
// of root's group, its first byte off bytes from root's, leaves the cost
// no higher; when it does, the profile takes the joined group.
func (p *profile) joinKeepsPeak(root, out *Tensor, off int64) bool {
	before := p.cost()
	rm, om := p.members[root.Ref], p.members[out.Ref]
	over := hull(root.Group, out.Group)
	p.apply(rm, 0, nil, 0, root.Group, -1)
	p.apply(om, 0, nil, 0, out.Group, -1)
	p.apply(rm, 0, om, off, over, 1)
	joined := hullBytes(root.Extent, out.Extent.Shift(off))
	p.block(root.Group, root.Extent, -1)
	p.block(out.Group, out.Extent, -1)
	p.block(over, joined, 1)
	span := max(p.span, p.round(joined.Size()))
	oldSpan := p.span
	p.span = span
	if p.cost() <= before {
		p.members[root.Ref] = append(rm, om...)
		delete(p.members, out.Ref)
		return true
	}
	p.span = oldSpan
	p.block(over, joined, -1)
	p.block(root.Group, root.Extent, 1)
	p.block(out.Group, out.Extent, 1)
	p.apply(rm, 0, om, off, over, -1)
	p.apply(rm, 0, nil, 0, root.Group, 1)
	p.apply(om, 0, nil, 0, out.Group, 1)
	return false
}
