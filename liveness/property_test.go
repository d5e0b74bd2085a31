package liveness_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/randmodel"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/tflite"
)

// TestProperties analyzes random models (internal/randmodel, written with
// tflite.Encode and read back with tflite.Load) and checks the result
// against a naive walk of the timeline written here from the package doc,
// sharing no code with the analysis. Rerun one failure with
// go test ./liveness -run 'TestProperties/default/seed=22$'.
func TestProperties(t *testing.T) {
	for _, p := range randmodel.Presets() {
		n := propSeeds[p.Name]
		if testing.Short() || raceEnabled {
			n /= 10
		}
		for seed := range n {
			t.Run(fmt.Sprintf("%s/seed=%d", p.Name, seed), func(t *testing.T) {
				data, err := tflite.Encode(randmodel.Generate(seed, p.Config), tflite.EncodeOptions{})
				require.NoError(t, err)
				m, err := tflite.Load(data)
				require.NoError(t, err)
				ref := propWalk(m)
				for _, noAlias := range []bool{true, false} {
					lt, err := liveness.Analyze(m, liveness.Options{NoAlias: noAlias})
					require.NoError(t, err, "NoAlias=%v", noAlias)
					checkProperties(t, m, ref, lt, noAlias)
				}
			})
		}
	}
}

// propSeeds is how many seeds TestProperties runs of each preset.
var propSeeds = map[string]int64{"default": 1000, "large": 300, "deep": 300, "long": 300}

// propUse is one place where a tensor must be live, over the inclusive steps
// [first, last].
type propUse struct {
	first, last liveness.Step
	where       string
}

// propTimeline is the naive reference schedule.
type propTimeline struct {
	steps int
	uses  map[graph.TensorRef][]propUse
	spans map[[2]int]liveness.Interval // (subgraph, op) -> hull of its spans
}

// propWalk schedules m as the package doc says: step 0 for main's
// inputs, one step per operator, called subgraphs inside their caller's
// span (their inputs one step, each operator one more), subgraphs no
// operator calls after main in index order. An operator uses its inputs,
// outputs and intermediates over its whole span; a subgraph's inputs are
// provided at its input step and its outputs are needed at its last step.
func propWalk(m *graph.Model) *propTimeline {
	tl := &propTimeline{uses: map[graph.TensorRef][]propUse{}, spans: map[[2]int]liveness.Interval{}}
	next := liveness.Step(0)
	var run func(s graph.SubgraphIndex)
	run = func(s graph.SubgraphIndex) {
		sg := &m.Subgraphs[s]
		in := next
		next++
		for _, t := range sg.Inputs {
			tl.uses[graph.TensorRef{Subgraph: s, Tensor: t}] = append(tl.uses[graph.TensorRef{Subgraph: s, Tensor: t}], propUse{in, in, fmt.Sprintf("input of subgraph %d", s)})
		}
		for oi, op := range sg.Ops {
			begin := next
			next++
			for _, c := range op.Called {
				run(c)
			}
			end := next - 1
			k := [2]int{int(s), oi}
			if sp, ok := tl.spans[k]; ok {
				tl.spans[k] = liveness.Interval{First: min(sp.First, begin), Last: max(sp.Last, end)}
			} else {
				tl.spans[k] = liveness.Interval{First: begin, Last: end}
			}
			where := fmt.Sprintf("op %d:%d (%s) at %d..%d", s, oi, op.Name(), begin, end)
			for _, list := range [][]graph.TensorID{op.Inputs, op.Outputs, op.Intermediates} {
				for _, t := range list {
					if t == graph.NoTensor {
						continue
					}
					r := graph.TensorRef{Subgraph: s, Tensor: t}
					tl.uses[r] = append(tl.uses[r], propUse{begin, end, where})
				}
			}
		}
		last := next - 1
		for _, t := range sg.Outputs {
			r := graph.TensorRef{Subgraph: s, Tensor: t}
			tl.uses[r] = append(tl.uses[r], propUse{last, last, fmt.Sprintf("output of subgraph %d at %d", s, last)})
		}
	}
	called := map[graph.SubgraphIndex]bool{}
	for _, sg := range m.Subgraphs {
		for _, op := range sg.Ops {
			for _, c := range op.Called {
				called[c] = true
			}
		}
	}
	run(0)
	for s := 1; s < len(m.Subgraphs); s++ {
		if !called[graph.SubgraphIndex(s)] {
			run(graph.SubgraphIndex(s))
		}
	}
	tl.steps = int(next)
	return tl
}

// propClass is the class the package doc gives a tensor.
func propClass(m *graph.Model, t *graph.Tensor, used bool) liveness.Class {
	hasData := t.Buffer > 0 && len(m.Buffers[t.Buffer].Data) > 0
	switch {
	case !used, t.Type == graph.Resource, t.Type == graph.String && !hasData, t.Size == 0 && !hasData:
		return liveness.Unallocated
	case t.IsVariable:
		return liveness.Persistent
	case hasData:
		return liveness.Constant
	}
	return liveness.Scratch
}

func propContains(outer, inner liveness.Interval) bool {
	return outer.First <= inner.First && inner.Last <= outer.Last
}

func checkProperties(t *testing.T, m *graph.Model, tl *propTimeline, lt *liveness.Lifetimes, noAlias bool) {
	t.Helper()
	mode := fmt.Sprintf("NoAlias=%v", noAlias)
	require.Equal(t, tl.steps, lt.Schedule.Steps, "%s: steps", mode)
	for si, sg := range m.Subgraphs {
		for oi := range sg.Ops {
			assert.Equal(t, tl.spans[[2]int{si, oi}], lt.Schedule.Span(graph.OpRef{Subgraph: graph.SubgraphIndex(si), Op: graph.OpIndex(oi)}), "%s: span of op %d:%d", mode, si, oi)
		}
	}
	n := 0
	for si, sg := range m.Subgraphs {
		for ti := range sg.Tensors {
			n++
			r := graph.TensorRef{Subgraph: graph.SubgraphIndex(si), Tensor: graph.TensorID(ti)}
			tt := &sg.Tensors[ti]
			a := lt.Lookup(r)
			require.NotNil(t, a, "%s: no analysis of %v", mode, r)
			uses := tl.uses[r]
			used := len(uses) > 0
			name := fmt.Sprintf("%s: tensor %v (%s, %v %v, variable=%v)", mode, r, tt.Name, tt.Type, tt.Shape, tt.IsVariable)

			// (c) classes.
			assert.Equal(t, used, a.Used, "%s: Used", name)
			assert.Equal(t, propClass(m, tt, used), a.Class, "%s: class", name)
			if tt.Type == graph.Resource && used {
				assert.Equal(t, liveness.NoteResource, a.Note, "%s: a resource handle takes no bytes", name)
			}
			wantSize := tt.Size
			if a.Class == liveness.Constant {
				wantSize = int64(len(m.Buffers[tt.Buffer].Data))
			}
			assert.Equal(t, wantSize, a.Size, "%s: size", name)
			assert.Equal(t, tt.IsDynamic(), a.Dynamic, "%s: dynamic", name)

			if !used {
				continue
			}
			// (a) every use of a scratch tensor lies inside its lifetime.
			hull := liveness.Interval{First: uses[0].first, Last: uses[0].last}
			for _, u := range uses {
				hull = liveness.Interval{First: min(hull.First, u.first), Last: max(hull.Last, u.last)}
				if a.Class == liveness.Scratch {
					assert.True(t, propContains(a.Live, liveness.Interval{First: u.first, Last: u.last}),
						"%s: used by %s outside its lifetime %v", name, u.where, a.Live)
				}
			}
			// (b) tightness: the lifetime is the hull of the uses.
			assert.Equal(t, hull, a.Live, "%s: lifetime is not the hull of its uses %v", name, uses)

			// (d) aliases.
			if noAlias {
				assert.Nil(t, a.AliasOf, "%s: aliased with NoAlias", name)
			}
			if a.AliasOf == nil {
				continue
			}
			root := lt.Lookup(*a.AliasOf)
			require.NotNil(t, root, "%s: alias of unknown tensor %v", name, *a.AliasOf)
			assert.Nil(t, root.AliasOf, "%s: AliasOf %v is not a group root", name, *a.AliasOf)
			assert.True(t, propContains(root.Group, a.Live), "%s: lifetime %v outside its root %v's group %v", name, a.Live, *a.AliasOf, root.Group)
			assert.Equal(t, root.Size, a.Size, "%s: size differs from root %v", name, *a.AliasOf)
			assert.Equal(t, liveness.Scratch, a.Class, "%s: aliased member is not scratch", name)
			assert.Equal(t, liveness.Scratch, root.Class, "%s: alias root %v is not scratch", name, *a.AliasOf)
			assert.Equal(t, a.Live, a.Group, "%s: a member's Group is its Live", name)
			assert.Equal(t, r.Subgraph, a.AliasOf.Subgraph, "%s: alias across subgraphs", name)
			assert.True(t, propViewChain(m, *a.AliasOf, r), "%s: not reached from root %v by view operators", name, *a.AliasOf)
			assert.False(t, propBoundary(m, r) || propBoundary(m, *a.AliasOf), "%s: subgraph input or output aliased", name)
		}
	}
	require.Len(t, lt.Tensors, n, "%s: one analysis per tensor", mode)
	propCheckGroups(t, lt, mode)
	propCheckSharing(t, m, lt, mode)
	propCheckVariables(t, m, lt, mode)
}

// propCheckSharing checks the sharing rule naively, in the model's order:
// between the last write of a group member before an operator reads it
// and that read, no operator writes another member of its group, but a
// view operator making a member out of a member (which writes nothing).
func propCheckSharing(t *testing.T, m *graph.Model, lt *liveness.Lifetimes, mode string) {
	t.Helper()
	groups := map[graph.TensorRef][]graph.TensorRef{}
	for _, a := range lt.Tensors {
		if a.AliasOf != nil {
			groups[*a.AliasOf] = append(groups[*a.AliasOf], a.Ref)
		}
	}
	for root, ms := range groups {
		ms = append(ms, root)
		sg := &m.Subgraphs[root.Subgraph]
		member := map[graph.TensorID]bool{}
		for _, r := range ms {
			member[r.Tensor] = true
		}
		writes := func(op *graph.Op, t graph.TensorID) bool {
			return slices.Contains(op.Outputs, t) || slices.Contains(op.Intermediates, t)
		}
		for _, r := range ms {
			last := -1
			for oi := range sg.Ops {
				op := &sg.Ops[oi]
				if slices.Contains(op.Inputs, r.Tensor) && last >= 0 {
					for k := last + 1; k <= oi; k++ {
						w := &sg.Ops[k]
						for _, q := range ms {
							view := propViews[w.Code] && len(w.Outputs) == 1 && w.Outputs[0] == q.Tensor && len(w.Inputs) > 0 && member[w.Inputs[0]]
							assert.False(t, q != r && writes(w, q.Tensor) && !view,
								"%s: %v shares bytes with %v, which op %d:%d (%s) writes after op %d:%d gives it its value and before op %d:%d reads it",
								mode, r, q, root.Subgraph, k, w.Name(), root.Subgraph, last, root.Subgraph, oi)
						}
					}
				}
				if writes(op, r.Tensor) {
					last = oi
				}
			}
		}
	}
}

// propCheckGroups checks that each root's Group is exactly the hull of its own
// and its members' lifetimes.
func propCheckGroups(t *testing.T, lt *liveness.Lifetimes, mode string) {
	t.Helper()
	groups := map[graph.TensorRef]liveness.Interval{}
	for _, a := range lt.Tensors {
		if a.AliasOf == nil {
			continue
		}
		g, ok := groups[*a.AliasOf]
		if !ok {
			g = lt.Lookup(*a.AliasOf).Live
		}
		groups[*a.AliasOf] = liveness.Interval{First: min(g.First, a.Live.First), Last: max(g.Last, a.Live.Last)}
	}
	for _, a := range lt.Tensors {
		if a.AliasOf != nil {
			continue
		}
		g, ok := groups[a.Ref]
		if !ok {
			g = a.Live
		}
		assert.Equal(t, g, a.Group, "%s: group of root %v", mode, a.Ref)
	}
}

var propViews = map[graph.Opcode]bool{graph.Reshape: true, graph.Squeeze: true, graph.ExpandDims: true, graph.Bitcast: true}

// propViewChain reports whether a chain of view operators (input 0 to output 0)
// leads from root to member.
func propViewChain(m *graph.Model, root, member graph.TensorRef) bool {
	sg := &m.Subgraphs[member.Subgraph]
	for cur, steps := member.Tensor, 0; steps <= len(sg.Ops); steps++ {
		if cur == root.Tensor {
			return true
		}
		found := false
		for _, op := range sg.Ops {
			if propViews[op.Code] && len(op.Outputs) == 1 && op.Outputs[0] == cur && len(op.Inputs) > 0 && op.Inputs[0] != graph.NoTensor {
				cur, found = op.Inputs[0], true
				break
			}
		}
		if !found {
			return false
		}
	}
	return false
}

func propBoundary(m *graph.Model, r graph.TensorRef) bool {
	for si, sg := range m.Subgraphs {
		for _, list := range [][]graph.TensorID{sg.Inputs, sg.Outputs} {
			for _, t := range list {
				if graph.SubgraphIndex(si) == r.Subgraph && t == r.Tensor {
					return true
				}
			}
		}
	}
	return false
}

// propCheckVariables follows handles naively and checks each variable's
// size: a handle without a container refers to every variable of its
// shared_name that handles with one name, or else to the one of its
// shared_name without.
func propCheckVariables(t *testing.T, m *graph.Model, lt *liveness.Lifetimes, mode string) {
	t.Helper()
	key := func(si, oi int, r graph.ResourceName) graph.ResourceName {
		if r == (graph.ResourceName{}) {
			r.SharedName = fmt.Sprintf("#%d:%d", si, oi)
		}
		return r
	}
	contained := map[string][]graph.ResourceName{}
	for si, sg := range m.Subgraphs {
		for oi, op := range sg.Ops {
			if op.Code != graph.VarHandle {
				continue
			}
			if r := key(si, oi, *op.Resource); r.HasContainer && !slices.Contains(contained[r.SharedName], r) {
				contained[r.SharedName] = append(contained[r.SharedName], r)
			}
		}
	}
	varOf := map[graph.TensorRef][]graph.ResourceName{}
	for si, sg := range m.Subgraphs {
		for oi, op := range sg.Ops {
			if op.Code != graph.VarHandle {
				continue
			}
			name := key(si, oi, *op.Resource)
			names := []graph.ResourceName{name}
			if c := contained[op.Resource.SharedName]; !name.HasContainer && len(c) > 0 {
				names = c
			}
			varOf[graph.TensorRef{Subgraph: graph.SubgraphIndex(si), Tensor: op.Outputs[0]}] = names
		}
	}
	for changed := true; changed; {
		changed = false
		link := func(from, to graph.TensorRef) {
			for _, v := range varOf[from] {
				if !slices.Contains(varOf[to], v) {
					varOf[to], changed = append(varOf[to], v), true
				}
			}
		}
		for si, sg := range m.Subgraphs {
			for _, op := range sg.Ops {
				skip := 0
				switch op.Code {
				case graph.If:
					skip = 1
				case graph.While:
				default:
					continue
				}
				for _, c := range op.Called {
					callee := &m.Subgraphs[c]
					for i, in := range callee.Inputs {
						link(graph.TensorRef{Subgraph: graph.SubgraphIndex(si), Tensor: op.Inputs[i+skip]}, graph.TensorRef{Subgraph: c, Tensor: in})
					}
					for i, out := range callee.Outputs {
						link(graph.TensorRef{Subgraph: c, Tensor: out}, graph.TensorRef{Subgraph: graph.SubgraphIndex(si), Tensor: op.Outputs[i]})
					}
				}
			}
		}
	}
	size := map[graph.ResourceName]int64{}
	for _, names := range varOf {
		for _, name := range names {
			size[name] = max(size[name], 0)
		}
	}
	for si, sg := range m.Subgraphs {
		for _, op := range sg.Ops {
			var value graph.TensorID
			switch op.Code {
			case graph.AssignVariable:
				value = op.Inputs[1]
			case graph.ReadVariable:
				value = op.Outputs[0]
			default:
				continue
			}
			names, ok := varOf[graph.TensorRef{Subgraph: graph.SubgraphIndex(si), Tensor: op.Inputs[0]}]
			require.True(t, ok, "%s: %s in subgraph %d through a handle no VAR_HANDLE made", mode, op.Name(), si)
			for _, name := range names {
				size[name] = max(size[name], sg.Tensors[value].Size)
			}
		}
	}
	got := map[graph.ResourceName]int64{}
	for _, v := range lt.Variables {
		got[v.Name] = v.Size
		for _, h := range v.Handles {
			assert.Contains(t, varOf[h], v.Name, "%s: handle %v of variable %v", mode, h, v.Name)
		}
	}
	assert.Equal(t, size, got, "%s: variables and their sizes", mode)
}
