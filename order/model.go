package order

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// Limits on the work a model may ask for. They are liveness's (MaxSteps,
// MaxUses, MaxDepth; a test keeps them equal): Schedule refuses what
// liveness.Analyze refuses, before it walks a timeline that could grow
// exponentially with the depth of calls.
const (
	maxSteps = 1 << 15
	maxUses  = 1 << 17
	maxDepth = 64
)

// model is what Schedule learns about a model before it searches, none of
// which depends on the order: which tensors are scratch, the buffer each
// scratch tensor lives in (an alias group is one buffer), how subgraphs
// call each other and how often each runs.
type model struct {
	m     *graph.Model
	align int64
	// buf[s][t] is the buffer of tensor t of subgraph s (the tensor id of
	// its alias group's root), or -1 when the tensor is not scratch.
	buf [][]graph.TensorID
	// size[s][t] is the aligned size of buffer t (a root) of subgraph s.
	size [][]int64
	// entry[s] is set for the subgraphs the timeline runs on their own:
	// the main one and those no operator calls.
	entry []bool
	// runs[s] is how often subgraph s runs in one run of the model,
	// saturating at 2: more than once makes lifetimes hulls over runs.
	runs []int
	// post lists every subgraph after the subgraphs it calls.
	post []graph.SubgraphIndex
}

// analyze checks m's indices and work limits and classifies its tensors as
// liveness does.
func analyze(m *graph.Model, align int64) (*model, error) {
	if len(m.Subgraphs) == 0 {
		return nil, fmt.Errorf("order: model has no subgraphs")
	}
	if err := checkIndices(m); err != nil {
		return nil, err
	}
	md := &model{m: m, align: align, entry: make([]bool, len(m.Subgraphs)), runs: make([]int, len(m.Subgraphs))}
	called := make([]bool, len(m.Subgraphs))
	for _, sg := range m.Subgraphs {
		for _, op := range sg.Ops {
			for _, c := range op.Called {
				called[c] = true
			}
		}
	}
	for s := range m.Subgraphs {
		md.entry[s] = s == 0 || !called[s]
	}
	if err := md.checkWork(); err != nil {
		return nil, err
	}
	md.countRuns()
	md.classify()
	md.alias()
	return md, nil
}

// checkIndices reports a tensor or subgraph index out of range: the
// loader excludes them, but a model built in Go may hold any.
func checkIndices(m *graph.Model) error {
	for si, sg := range m.Subgraphs {
		bad := func(what string, t graph.TensorID) error {
			return fmt.Errorf("order: subgraphs[%d].%s: tensor %d out of range [0, %d)", si, what, t, len(sg.Tensors))
		}
		for i, t := range sg.Inputs {
			if t != graph.NoTensor && (t < 0 || int(t) >= len(sg.Tensors)) {
				return bad(fmt.Sprintf("inputs[%d]", i), t)
			}
		}
		for i, t := range sg.Outputs {
			if t != graph.NoTensor && (t < 0 || int(t) >= len(sg.Tensors)) {
				return bad(fmt.Sprintf("outputs[%d]", i), t)
			}
		}
		for oi, op := range sg.Ops {
			for _, t := range operands(&op) {
				if t < 0 || int(t) >= len(sg.Tensors) {
					return bad(fmt.Sprintf("operators[%d]", oi), t)
				}
			}
			for _, c := range op.Called {
				if c < 0 || int(c) >= len(m.Subgraphs) {
					return fmt.Errorf("order: subgraphs[%d].operators[%d]: calls subgraph %d, out of range [0, %d)", si, oi, c, len(m.Subgraphs))
				}
			}
		}
	}
	return nil
}

// operands returns every tensor op lists (inputs, outputs, intermediates),
// omitted optional inputs left out.
func operands(op *graph.Op) []graph.TensorID {
	out := make([]graph.TensorID, 0, len(op.Inputs)+len(op.Outputs)+len(op.Intermediates))
	for _, list := range [][]graph.TensorID{op.Inputs, op.Outputs, op.Intermediates} {
		for _, t := range list {
			if t != graph.NoTensor {
				out = append(out, t)
			}
		}
	}
	return out
}

// checkWork refuses call cycles and models over the work limits, and sets
// post.
func (md *model) checkWork() error {
	type work struct{ steps, uses, depth int64 }
	m := md.m
	done := make([]*work, len(m.Subgraphs))
	busy := make([]bool, len(m.Subgraphs))
	var visit func(s graph.SubgraphIndex, depth int) (work, error)
	visit = func(s graph.SubgraphIndex, depth int) (work, error) {
		if w := done[s]; w != nil {
			return *w, nil
		}
		switch {
		case depth > maxDepth:
			return work{}, fmt.Errorf("order: calls nest deeper than %d at subgraph %d", maxDepth, s)
		case busy[s]:
			return work{}, fmt.Errorf("order: subgraph %d calls itself", s)
		}
		busy[s] = true
		defer func() { busy[s] = false }()
		sg := &m.Subgraphs[s]
		w := work{steps: 1, uses: int64(len(sg.Inputs) + len(sg.Outputs))}
		for _, op := range sg.Ops {
			w.steps++
			w.uses += int64(len(op.Inputs) + len(op.Outputs) + len(op.Intermediates))
			for _, c := range op.Called {
				cw, err := visit(c, depth+1)
				if err != nil {
					return work{}, err
				}
				w.steps += cw.steps
				w.uses += cw.uses
				w.depth = max(w.depth, cw.depth+1)
			}
		}
		const again = "with the subgraphs it calls, each run again on every call"
		switch {
		case w.depth > maxDepth:
			return work{}, fmt.Errorf("order: calls nest %d deep below subgraph %d, over the limit of %d", w.depth, s, maxDepth)
		case w.steps > maxSteps:
			return work{}, fmt.Errorf("order: subgraph %d takes %d steps %s, over the limit of %d", s, w.steps, again, maxSteps)
		case w.uses > maxUses:
			return work{}, fmt.Errorf("order: subgraph %d makes %d operand uses %s, over the limit of %d", s, w.uses, again, maxUses)
		}
		done[s] = &w
		md.post = append(md.post, s)
		return w, nil
	}
	var total work
	for s := range m.Subgraphs {
		if !md.entry[s] {
			continue
		}
		w, err := visit(graph.SubgraphIndex(s), 0)
		if err != nil {
			return err
		}
		total.steps += w.steps
		total.uses += w.uses
	}
	switch {
	case total.steps > maxSteps:
		return fmt.Errorf("order: the model's entry subgraphs take %d steps together, over the limit of %d", total.steps, maxSteps)
	case total.uses > maxUses:
		return fmt.Errorf("order: the model's entry subgraphs make %d operand uses together, over the limit of %d", total.uses, maxUses)
	}
	return nil
}

// countRuns sets runs: entries run once, and a callee once per run of each
// operator that calls it.
func (md *model) countRuns() {
	// post lists callees before callers; walk it backwards so a caller's
	// count is final before its callees'.
	for s := range md.runs {
		if md.entry[s] {
			md.runs[s] = 1
		}
	}
	for i := len(md.post) - 1; i >= 0; i-- {
		s := md.post[i]
		for _, op := range md.m.Subgraphs[s].Ops {
			for _, c := range op.Called {
				md.runs[c] = min(md.runs[c]+md.runs[s], 2)
			}
		}
	}
}

// classify sets buf to each scratch tensor itself, and -1 for the others,
// with liveness's rules: a tensor no operator or boundary refers to, a
// resource handle, a run-time string, a zero-size tensor, is_variable state
// and constants are not scratch.
func (md *model) classify() {
	m := md.m
	md.buf = make([][]graph.TensorID, len(m.Subgraphs))
	md.size = make([][]int64, len(m.Subgraphs))
	for si, sg := range m.Subgraphs {
		used := make([]bool, len(sg.Tensors))
		for _, list := range [][]graph.TensorID{sg.Inputs, sg.Outputs} {
			for _, t := range list {
				if t != graph.NoTensor {
					used[t] = true
				}
			}
		}
		for oi := range sg.Ops {
			for _, t := range operands(&sg.Ops[oi]) {
				used[t] = true
			}
		}
		md.buf[si] = make([]graph.TensorID, len(sg.Tensors))
		md.size[si] = make([]int64, len(sg.Tensors))
		for ti := range sg.Tensors {
			t := &sg.Tensors[ti]
			md.buf[si][ti] = -1
			hasData := m.HasData(t)
			if !used[ti] || t.Type == graph.Resource || t.Type == graph.String && !hasData ||
				t.Size == 0 && !hasData || t.IsVariable || hasData {
				continue
			}
			md.buf[si][ti] = graph.TensorID(ti)
			md.size[si][ti] = alignUp(t.Size, md.align)
		}
	}
}

// viewOps are liveness's view operators: their output may share their
// first input's bytes.
var viewOps = map[graph.Opcode]bool{graph.Reshape: true, graph.Squeeze: true, graph.ExpandDims: true, graph.Bitcast: true}

// alias joins view outputs to their input's buffer exactly as liveness
// does (liveness/alias.go): both scratch of one size, neither a subgraph
// input or output, the output written once, every writer of the input's
// buffer before the view in the model's order (the sharing rule);
// operators in model order.
func (md *model) alias() {
	m := md.m
	boundary := make([]map[graph.TensorID]bool, len(m.Subgraphs))
	for si, sg := range m.Subgraphs {
		boundary[si] = map[graph.TensorID]bool{}
		for _, list := range [][]graph.TensorID{sg.Inputs, sg.Outputs} {
			for _, t := range list {
				boundary[si][t] = true
			}
		}
	}
	for si, sg := range m.Subgraphs {
		writers, lastWrite := writes(&sg)
		buf := md.buf[si]
		joined := make([]bool, len(buf)) // liveness's AliasOf != nil
		for oi, op := range sg.Ops {
			if !viewOps[op.Code] || len(op.Inputs) == 0 || len(op.Outputs) != 1 || op.Inputs[0] == graph.NoTensor {
				continue
			}
			in, out := op.Inputs[0], op.Outputs[0]
			if in == out || buf[in] < 0 || buf[out] < 0 || sg.Tensors[in].Size != sg.Tensors[out].Size ||
				boundary[si][in] || boundary[si][out] || writers[out] != 1 || joined[out] {
				continue
			}
			r := buf[in]
			if w, ok := lastWrite[r]; r == out || (ok && w > oi) {
				continue
			}
			joined[out] = true
			for t := range buf {
				if buf[t] == out {
					buf[t] = r
				}
			}
		}
	}
}

// alignUp rounds n up to a multiple of align (a power of two, or 1).
func alignUp(n, align int64) int64 {
	if align <= 1 {
		return n
	}
	return (n + align - 1) &^ (align - 1)
}

// writes returns how many operators of sg write each tensor (as an
// output) and the last operator, in model order, writing each (as an
// output or an intermediate): what the view and copy rules of liveness
// ask of a tensor's writers.
func writes(sg *graph.Subgraph) (writers, lastWrite map[graph.TensorID]int) {
	writers, lastWrite = map[graph.TensorID]int{}, map[graph.TensorID]int{}
	for oi, op := range sg.Ops {
		for _, t := range op.Outputs {
			writers[t]++
		}
		for _, list := range [][]graph.TensorID{op.Outputs, op.Intermediates} {
			for _, t := range list {
				lastWrite[t] = oi
			}
		}
	}
	return writers, lastWrite
}
