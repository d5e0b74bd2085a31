package verify

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/heliac/heliac/graph"
)

// use is where on the timeline a user needs a tensor live: over the
// inclusive steps [first, last], the hull of every step it uses the
// tensor at (a user that runs several times, in a subgraph called several
// times, has one use). Each use is the hull of steps that are themselves
// used, so the tensor must be live over all of it.
type use struct {
	ref         graph.TensorRef
	first, last int64
	by          user
}

// user is what uses a tensor: an operator, or a subgraph's boundary (its
// inputs at its input step, its outputs at its last step). Messages spell
// it out only when they need to (checker.where).
type user struct {
	op       graph.OpRef // the operator, when boundary is 0
	boundary int8        // 0, boundaryIn or boundaryOut
}

const (
	boundaryIn  int8 = 1 // an input of subgraph op.Subgraph
	boundaryOut int8 = 2 // an output of subgraph op.Subgraph
)

// where names a use's user: "op 0:1 (ADD)", "input of subgraph 1".
func (c *checker) where(u use) string {
	switch u.by.boundary {
	case boundaryIn:
		return fmt.Sprintf("input of subgraph %d", u.by.op.Subgraph)
	case boundaryOut:
		return fmt.Sprintf("output of subgraph %d", u.by.op.Subgraph)
	}
	return c.opName(u.by.op)
}

// timeline is the model run in the order the plan's schedule gives.
type timeline struct {
	steps int64
	// uses holds one use per tensor and user, in the order of their first
	// step: its size is bounded by the model's, not by the timeline's.
	uses []use
	// order[s] is the order subgraph s runs its operators in; nil for a
	// subgraph that never runs.
	order [][]graph.OpIndex
	// spans is, for every operator that runs, the hull of its runs.
	spans map[graph.OpRef]span
}

// span is an inclusive range of steps.
type span struct{ first, last int64 }

// walk runs the model (docs/plan-format.md) in the order the plan's
// schedule lists its operator runs, and checks as it goes that the list
// describes such a run. Step 0 holds the main subgraph's inputs and each
// operator takes the next step. An operator that calls subgraphs runs each
// callee inside itself, again on every call: the callee's inputs take one
// step, then each of its operators one step, and the schedule lists the
// callee's runs right after its caller's. The operator's span runs from
// its own step to the last step of its callees, and its inputs, outputs and
// intermediates are used over the whole span. A subgraph's inputs are used
// at its input step and its outputs at its last step. Subgraphs no
// operator calls follow the main one, each on its own, in index order.
// The walk takes time linear in the timeline, which tooCostly bounds
// first, and memory linear in the model.
//
// Every run of a subgraph must run each of its operators exactly once, in
// one order for all its runs, and each schedule entry must give the steps
// its place gives it. A schedule that breaks these is BadSchedule; a model
// the loader should have rejected (a call cycle, an index out of range), or
// that the planner would have refused (more than MaxSteps steps or MaxUses
// operand uses), is Malformed. Either ends the walk with a nil
// timeline: nothing else can be checked against it.
func walk(m *graph.Model, runs []run) (*timeline, []Violation) {
	var r report
	if len(m.Subgraphs) == 0 {
		r.add(Malformed, "model has no subgraphs")
		return nil, r
	}
	w := &walker{m: m, runs: runs, r: &r, useAt: map[useKey]int{},
		tl: &timeline{order: make([][]graph.OpIndex, len(m.Subgraphs)), spans: map[graph.OpRef]span{}}}
	called := make([]bool, len(m.Subgraphs))
	for si := range m.Subgraphs {
		for oi, op := range m.Subgraphs[si].Ops {
			for _, c := range op.Called {
				if c < 0 || int(c) >= len(m.Subgraphs) {
					r.add(Malformed, "model: op %d:%d (%s) calls subgraph %d, which does not exist", si, oi, escapeName(op.Name()), c)
					return nil, r
				}
				called[c] = true
			}
		}
	}
	if cycle := callCycle(m); cycle != nil {
		parts := make([]string, len(cycle))
		for i, s := range cycle {
			parts[i] = fmt.Sprint(s)
		}
		r.add(Malformed, "model: the calls form a cycle: subgraph %s", strings.Join(parts, " calls "))
		return nil, r
	}
	if why := tooCostly(m, called); why != "" {
		r.add(Malformed, "%s", why)
		return nil, r
	}
	ok := w.subgraph(0, nil)
	for si := 1; ok && si < len(m.Subgraphs); si++ {
		if !called[si] {
			ok = w.subgraph(graph.SubgraphIndex(si), nil)
		}
	}
	if ok && w.pos < len(runs) {
		e := &runs[w.pos]
		r.add(BadSchedule, "%s: op %v runs after every subgraph has run all its operators", e.path, e.op)
		ok = false
	}
	if !ok {
		return nil, r
	}
	w.tl.steps = w.next
	return w.tl, r
}

type walker struct {
	m    *graph.Model
	runs []run
	pos  int // the next schedule entry
	r    *report
	tl   *timeline
	next int64 // the next free step
	// useAt finds the use of tl.uses that a tensor and user already have.
	useAt map[useKey]int
}

// useKey is a tensor and a user of it.
type useKey struct {
	ref graph.TensorRef
	by  user
}

// callCycle returns a chain of calls that leads from a subgraph back to
// itself, such as [0 1 0], or nil when the calls form no cycle.
func callCycle(m *graph.Model) []graph.SubgraphIndex {
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]int, len(m.Subgraphs))
	var path []graph.SubgraphIndex
	var visit func(s graph.SubgraphIndex) []graph.SubgraphIndex
	visit = func(s graph.SubgraphIndex) []graph.SubgraphIndex {
		switch state[s] {
		case onPath:
			i := slices.Index(path, s)
			return append(slices.Clone(path[i:]), s)
		case done:
			return nil
		}
		state[s] = onPath
		path = append(path, s)
		for _, op := range m.Subgraphs[s].Ops {
			for _, c := range op.Called {
				if cycle := visit(c); cycle != nil {
					return cycle
				}
			}
		}
		path = path[:len(path)-1]
		state[s] = done
		return nil
	}
	for s := range m.Subgraphs {
		if cycle := visit(graph.SubgraphIndex(s)); cycle != nil {
			return cycle
		}
	}
	return nil
}

// subgraph runs subgraph s, called by the run caller (nil at the top
// level), and reports whether the walk may go on. The calls form no cycle
// (walk has checked), so the recursion ends.
func (w *walker) subgraph(s graph.SubgraphIndex, caller *run) bool {
	sg := &w.m.Subgraphs[s]
	in := w.next
	w.next++
	if !w.useAll(s, sg.Inputs, in, in, user{op: graph.OpRef{Subgraph: s}, boundary: boundaryIn}) {
		return false
	}
	ran := make([]bool, len(sg.Ops))
	order := make([]graph.OpIndex, 0, len(sg.Ops))
	for range sg.Ops {
		e := w.nextRun(s, ran, caller)
		if e == nil {
			return false
		}
		op := &sg.Ops[e.op.Op]
		ran[e.op.Op] = true
		order = append(order, e.op.Op)
		begin := w.next
		w.next++
		for _, c := range op.Called {
			if !w.subgraph(c, e) {
				return false
			}
		}
		end := w.next - 1
		if e.name != op.Name() {
			w.r.add(Malformed, "%s: name %s, but op %v is %s", e.path, shown(e.name), e.op, shown(op.Name()))
		}
		if e.start != begin || e.end != end {
			w.r.add(BadSchedule, "%s: op %v (%s) runs over steps %d..%d, not %d..%d as the schedule's order gives",
				e.path, e.op, escapeName(op.Name()), e.start, e.end, begin, end)
		}
		sp, seen := w.tl.spans[e.op]
		if !seen {
			sp = span{begin, end}
		}
		w.tl.spans[e.op] = span{min(sp.first, begin), max(sp.last, end)}
		for _, list := range [][]graph.TensorID{op.Inputs, op.Outputs, op.Intermediates} {
			if !w.useAll(s, list, begin, end, user{op: e.op}) {
				return false
			}
		}
	}
	last := w.next - 1
	if !w.useAll(s, sg.Outputs, last, last, user{op: graph.OpRef{Subgraph: s}, boundary: boundaryOut}) {
		return false
	}
	switch prev := w.tl.order[s]; {
	case prev == nil:
		w.tl.order[s] = order
	case !slices.Equal(prev, order):
		w.r.add(BadSchedule, "subgraph %d runs its operators in the order %v on one call and %v on another; a subgraph has one order",
			s, prev, order)
	}
	return true
}

// nextRun takes the next schedule entry, which must run an operator of
// subgraph s that has not run yet in this run of s, or reports why not.
func (w *walker) nextRun(s graph.SubgraphIndex, ran []bool, caller *run) *run {
	if w.pos >= len(w.runs) {
		w.r.add(BadSchedule, "the schedule ends before subgraph %d%s has run %s", s, inside(caller), w.pending(s, ran))
		return nil
	}
	e := &w.runs[w.pos]
	w.pos++
	switch {
	case e.op.Subgraph != s:
		w.r.add(BadSchedule, "%s: op %v runs before subgraph %d%s has run %s", e.path, e.op, s, inside(caller), w.pending(s, ran))
		return nil
	case e.op.Op < 0 || int(e.op.Op) >= len(ran):
		w.r.add(BadSchedule, "%s: op %v does not exist", e.path, e.op)
		return nil
	case ran[e.op.Op]:
		w.r.add(BadSchedule, "%s: op %v runs twice in one run of subgraph %d, before %s", e.path, e.op, s, w.pending(s, ran))
		return nil
	}
	return e
}

// pending names the first operator of subgraph s that has not run yet.
func (w *walker) pending(s graph.SubgraphIndex, ran []bool) string {
	oi := slices.Index(ran, false)
	return fmt.Sprintf("op %v (%s)", graph.OpRef{Subgraph: s, Op: graph.OpIndex(oi)}, escapeName(w.m.Subgraphs[s].Ops[oi].Name()))
}

// inside says, for messages, that a callee runs inside its caller.
func inside(caller *run) string {
	if caller == nil {
		return ""
	}
	return fmt.Sprintf(", which op %v (%s) calls and which must run inside it,", caller.op, escapeName(caller.name))
}

// useAll records that the tensors of subgraph s in list are used over
// [first, last]; omitted optional tensors are skipped.
func (w *walker) useAll(s graph.SubgraphIndex, list []graph.TensorID, first, last int64, by user) bool {
	for _, t := range list {
		if t == graph.NoTensor {
			continue
		}
		if t < 0 || int(t) >= len(w.m.Subgraphs[s].Tensors) {
			what := fmt.Sprintf("op %v", by.op)
			switch by.boundary {
			case boundaryIn:
				what = fmt.Sprintf("input of subgraph %d", s)
			case boundaryOut:
				what = fmt.Sprintf("output of subgraph %d", s)
			}
			w.r.add(Malformed, "model: %s refers to tensor %d:%d, which does not exist", what, s, t)
			return false
		}
		w.use(graph.TensorRef{Subgraph: s, Tensor: t}, first, last, by)
	}
	return true
}

// use records that by uses tensor r over [first, last], widening the use
// the two already have.
func (w *walker) use(r graph.TensorRef, first, last int64, by user) {
	k := useKey{r, by}
	if i, ok := w.useAt[k]; ok {
		u := &w.tl.uses[i]
		u.first, u.last = min(u.first, first), max(u.last, last)
		return
	}
	w.useAt[k] = len(w.tl.uses)
	w.tl.uses = append(w.tl.uses, use{ref: r, first: first, last: last, by: by})
}

// checkSchedule checks that the order each subgraph runs its operators in
// keeps what the model's order means:
//
//   - an operator that writes a tensor (an output or intermediate) and one
//     that reads or writes it run in the model's order, so every input is
//     produced before it is read and never overwritten before;
//   - the operators that read or write a stateful (is_variable) tensor,
//     and those that read or assign a resource variable (themselves or
//     through the subgraphs they call), run in the model's order.
func (c *checker) checkSchedule() {
	touches := c.variableAccess(c.vars)
	for si, order := range c.tl.order {
		if order == nil {
			continue
		}
		s := graph.SubgraphIndex(si)
		pos := make([]int, len(order))
		for i, oi := range order {
			pos[oi] = i
		}
		sg := &c.m.Subgraphs[si]
		access := map[graph.TensorID][]graph.OpIndex{} // every operator that reads or writes a tensor, in model order
		writes := map[graph.TensorID]map[graph.OpIndex]bool{}
		for oi, op := range sg.Ops {
			for _, list := range [][]graph.TensorID{op.Inputs, op.Outputs, op.Intermediates} {
				for _, t := range list {
					// Operators come in model order: oi can only be the last.
					if a := access[t]; t != graph.NoTensor && (len(a) == 0 || a[len(a)-1] != graph.OpIndex(oi)) {
						access[t] = append(access[t], graph.OpIndex(oi))
					}
				}
			}
			for _, list := range [][]graph.TensorID{op.Outputs, op.Intermediates} {
				for _, t := range list {
					if writes[t] == nil {
						writes[t] = map[graph.OpIndex]bool{}
					}
					writes[t][graph.OpIndex(oi)] = true
				}
			}
		}
		for _, t := range sortedIDs(access) {
			ref := graph.TensorRef{Subgraph: s, Tensor: t}
			stateful := sg.Tensors[t].IsVariable
			if !stateful && len(writes[t]) == 0 {
				continue // read only: any order will do
			}
			ops := access[t]
			for _, ab := range c.outOfOrder(ops, pos, stateful, writes[t]) {
				a, b := ops[ab[0]], ops[ab[1]]
				c.r.add(BadSchedule, "%s runs before %s, but %s", c.opName(graph.OpRef{Subgraph: s, Op: b}),
					c.opName(graph.OpRef{Subgraph: s, Op: a}), c.conflict(ref, writes[t][a], writes[t][b]))
			}
		}
		c.checkVariableOrder(s, pos, touches)
		c.checkHandleOrder(s, pos)
	}
}

// outOfOrder returns, sorted, the pairs i < j of ops (the operators that
// access one tensor, in model order) that the schedule (pos) runs the
// other way round although one of them writes the tensor (writes) or it
// is stateful. When the schedule keeps their order there are none, and
// only pairs with a writer can be out of order for a tensor that is not
// stateful: the work is the operators times its writers (one, nearly
// always), not every pair (a value a thousand operators read).
func (c *checker) outOfOrder(ops []graph.OpIndex, pos []int, stateful bool, writes map[graph.OpIndex]bool) [][2]int {
	if slices.IsSortedFunc(ops, func(a, b graph.OpIndex) int { return cmp.Compare(pos[a], pos[b]) }) {
		return nil
	}
	var out [][2]int
	for i, a := range ops {
		if !stateful && !writes[a] {
			continue
		}
		for j := range ops {
			if lo, hi := min(i, j), max(i, j); j != i && pos[ops[lo]] > pos[ops[hi]] {
				out = append(out, [2]int{lo, hi})
			}
		}
	}
	slices.SortFunc(out, func(x, y [2]int) int { return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1])) })
	return slices.Compact(out)
}

// conflict says why two operators that access tensor r must keep the
// model's order: the earlier one (a) writes it, the later one (b) writes
// it, or else it is stateful.
func (c *checker) conflict(r graph.TensorRef, aWrites, bWrites bool) string {
	switch {
	case aWrites:
		return fmt.Sprintf("the model writes %s there first", c.name(r))
	case bWrites:
		return fmt.Sprintf("the model reads %s there before it is written", c.name(r))
	}
	return fmt.Sprintf("the model accesses stateful %s there first", c.name(r))
}

func sortedIDs(m map[graph.TensorID][]graph.OpIndex) []graph.TensorID {
	ids := make([]graph.TensorID, 0, len(m))
	for t := range m {
		ids = append(ids, t)
	}
	slices.Sort(ids)
	return ids
}

// variableAccess returns, for every operator, the resource variables it
// reads or assigns, itself or through the subgraphs it calls.
func (c *checker) variableAccess(vars []*resVar) map[graph.OpRef]map[*resVar]bool {
	direct := map[graph.OpRef]map[*resVar]bool{}
	for _, v := range vars {
		for _, o := range v.accessors {
			if direct[o] == nil {
				direct[o] = map[*resVar]bool{}
			}
			direct[o][v] = true
		}
	}
	of := map[graph.SubgraphIndex]map[*resVar]bool{} // every variable a subgraph touches
	var visit func(s graph.SubgraphIndex, depth int) map[*resVar]bool
	all := map[graph.OpRef]map[*resVar]bool{}
	visit = func(s graph.SubgraphIndex, depth int) map[*resVar]bool {
		if got, ok := of[s]; ok || depth > len(c.m.Subgraphs) {
			return got
		}
		of[s] = nil // guards against cycles, which walk has excluded
		set := map[*resVar]bool{}
		for oi, op := range c.m.Subgraphs[s].Ops {
			o := graph.OpRef{Subgraph: s, Op: graph.OpIndex(oi)}
			mine := map[*resVar]bool{}
			for v := range direct[o] {
				mine[v] = true
			}
			for _, callee := range op.Called {
				for v := range visit(callee, depth+1) {
					mine[v] = true
				}
			}
			if len(mine) > 0 {
				all[o] = mine
			}
			for v := range mine {
				set[v] = true
			}
		}
		of[s] = set
		return set
	}
	for si := range c.m.Subgraphs {
		visit(graph.SubgraphIndex(si), 0)
	}
	return all
}

// checkVariableOrder checks that the operators of subgraph s that touch a
// resource variable run in the model's order.
func (c *checker) checkVariableOrder(s graph.SubgraphIndex, pos []int, touches map[graph.OpRef]map[*resVar]bool) {
	byVar := map[*resVar][]graph.OpIndex{}
	var vars []*resVar
	for oi := range c.m.Subgraphs[s].Ops {
		for v := range touches[graph.OpRef{Subgraph: s, Op: graph.OpIndex(oi)}] {
			if byVar[v] == nil {
				vars = append(vars, v)
			}
			byVar[v] = append(byVar[v], graph.OpIndex(oi))
		}
	}
	slices.SortFunc(vars, func(a, b *resVar) int { return a.order - b.order })
	for _, v := range vars {
		ops := byVar[v]
		for i, a := range ops {
			for _, b := range ops[i+1:] {
				if pos[a] > pos[b] {
					c.r.add(BadSchedule, "%s runs before %s, but the model reads and assigns %s there first",
						c.opName(graph.OpRef{Subgraph: s, Op: b}), c.opName(graph.OpRef{Subgraph: s, Op: a}), v.key)
				}
			}
		}
	}
}

// checkHandleOrder checks that the VAR_HANDLE operators of subgraph s run
// in the model's order when any VAR_HANDLE of the model has no container.
// TFLM creates variables as it prepares the operators, subgraph by
// subgraph in the order each lists them, and gives a handle without a
// container the variable of its shared_name it created first, so the
// order of those operators decides which variable it is; and once a
// handle without a container has created a variable, a handle with a
// container prepared after it crashes TFLM, whatever its shared_name
// (TFLM 90b983c: micro_interpreter_graph.cc PrepareSubgraphs;
// micro_resource_variable.cc FindId compares each variable's container
// with strcmp, null for the one a handle without a container created).
func (c *checker) checkHandleOrder(s graph.SubgraphIndex, pos []int) {
	uncontained := ""
	for si, sg := range c.m.Subgraphs {
		for oi, op := range sg.Ops {
			if op.Code == graph.VarHandle && (op.Resource == nil || !op.Resource.HasContainer) && uncontained == "" {
				uncontained = c.opName(graph.OpRef{Subgraph: graph.SubgraphIndex(si), Op: graph.OpIndex(oi)})
			}
		}
	}
	if uncontained == "" {
		return
	}
	var handles []int // the VAR_HANDLE operators of s, in model order
	for oi, op := range c.m.Subgraphs[s].Ops {
		if op.Code == graph.VarHandle {
			handles = append(handles, oi)
		}
	}
	for i := 1; i < len(handles); i++ {
		a, b := handles[i-1], handles[i]
		if pos[a] > pos[b] {
			c.r.add(BadSchedule, "%s runs before %s, but VAR_HANDLE operators keep the model's order when one has no container (%s): TFLM resolves such a handle, and crashes on a later one with a container, by the order it prepares them",
				c.opName(graph.OpRef{Subgraph: s, Op: graph.OpIndex(b)}), c.opName(graph.OpRef{Subgraph: s, Op: graph.OpIndex(a)}), uncontained)
		}
	}
}

// checkOrdering checks the ordering object against the schedule: a known
// strategy; the model's order in every subgraph when it says "model"; a
// proof of optimality only for a "memory" order (what is proven is the
// search's to say: verify checks only that the order is legal).
func (c *checker) checkOrdering() {
	switch c.doc.strategy {
	case "model":
		for si, order := range c.tl.order {
			for i, oi := range order {
				if int(oi) != i {
					c.r.add(BadSchedule, "ordering: strategy is %q, but subgraph %d runs its operators in the order %v", c.doc.strategy, si, order)
					break
				}
			}
		}
	case "memory", "given":
	default:
		c.r.add(Malformed, "ordering: strategy is %q, not one of model, memory, given", c.doc.strategy)
	}
	if c.doc.timedOut && (c.doc.strategy != "memory" || c.doc.proven) {
		c.r.add(Malformed, "ordering: a %q order (proven optimal %t) cannot have stopped on the wall clock; only an unproven memory order can",
			c.doc.strategy, c.doc.proven)
	}
	if c.doc.proven && c.doc.strategy != "memory" {
		c.r.add(Malformed, "ordering: a %q order cannot be proven optimal", c.doc.strategy)
	}
}
