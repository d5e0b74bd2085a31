package verify

import (
	"fmt"
	"maps"
	"slices"

	"github.com/heliac/heliac/graph"
)

// varKey names a resource variable: VAR_HANDLE operators with the same
// container and shared_name name one variable. A handle without a
// container and one with container "" have the same key: the rule of
// resolveVariables never makes a variable of each for one shared_name.
type varKey struct{ container, shared string }

func (k varKey) String() string {
	if k.container == "" {
		return "resource variable " + shown(k.shared)
	}
	return "resource variable " + shown(k.shared) + " in container " + shown(k.container)
}

func (e *varEntry) key() varKey { return varKey{e.container, e.shared} }

// resVar is a resource variable as the verifier resolves it from the model.
type resVar struct {
	key       varKey
	order     int                      // its place in the order of first VAR_HANDLE
	handles   map[graph.TensorRef]bool // every tensor that carries it
	accessors []graph.OpRef            // the READ_VARIABLE and ASSIGN_VARIABLE operators through its handles
	need      int64                    // the largest value assigned or read
	needBy    string                   // "op 0:3 (ASSIGN_VARIABLE) writes", the operator that needs the most
	needVia   graph.TensorRef          // the handle it uses
}

// carriers maps each tensor to the variables it may be a handle of.
type carriers map[graph.TensorRef]map[*resVar]bool

// add records that r may be a handle of v, and reports whether that is new.
func (cs carriers) add(r graph.TensorRef, v *resVar) bool {
	if cs[r] == nil {
		cs[r] = map[*resVar]bool{}
	}
	if cs[r][v] {
		return false
	}
	cs[r][v] = true
	v.handles[r] = true
	return true
}

// pass adds the variables of from to to, and reports whether any is new.
func (cs carriers) pass(from, to graph.TensorRef) bool {
	changed := false
	for v := range cs[from] {
		changed = cs.add(to, v) || changed
	}
	return changed
}

func tref(s graph.SubgraphIndex, t graph.TensorID) graph.TensorRef {
	return graph.TensorRef{Subgraph: s, Tensor: t}
}

// resolveVariables names the variables of the VAR_HANDLE operators, by
// TFLM's rule made static (TFLM 90b983c, micro_resource_variable.cc:
// FindId matches a handle without a container to the first variable of its
// shared_name created in any container, which depends on the order handles
// are prepared; kernels/var_handle.cc). A handle with a container is a
// handle of the variable of its (container, shared_name). One without is a
// handle of every variable of its shared_name that a handle with a
// container names; when there is none, it names the variable of its
// shared_name without a container, or, with an empty shared_name too, its
// own ("#subgraph:op"). Then it follows the handles through control flow,
// and records the largest value each variable is assigned or read.
// Variables are returned in the order of the first VAR_HANDLE that may
// refer to them.
func (c *checker) resolveVariables() []*resVar {
	type handleOp struct {
		out       graph.TensorRef
		key       varKey
		container bool   // the options give a container
		shared    string // as the options give it ("" when unnamed, whose key is "#subgraph:op")
	}
	var ops []handleOp
	withContainer := map[string][]varKey{} // shared_name → keys of handles with a container, in model order
	for si := range c.m.Subgraphs {
		for oi, op := range c.m.Subgraphs[si].Ops {
			if op.Code != graph.VarHandle || len(op.Outputs) == 0 || op.Outputs[0] == graph.NoTensor {
				continue
			}
			h := handleOp{out: tref(graph.SubgraphIndex(si), op.Outputs[0])}
			if r := op.Resource; r != nil {
				h.key, h.container, h.shared = varKey{r.Container, r.SharedName}, r.HasContainer, r.SharedName
			}
			if h.key == (varKey{}) && !h.container {
				h.key.shared = fmt.Sprintf("#%d:%d", si, oi)
			}
			if h.container && !slices.Contains(withContainer[h.key.shared], h.key) {
				withContainer[h.key.shared] = append(withContainer[h.key.shared], h.key)
			}
			ops = append(ops, h)
		}
	}
	byKey := map[varKey]*resVar{}
	var vars []*resVar
	cs := carriers{}
	for _, h := range ops {
		keys := []varKey{h.key}
		if others := withContainer[h.shared]; !h.container && len(others) > 0 {
			keys = others // any of them, whichever TFLM created first
		}
		for _, k := range keys {
			v := byKey[k]
			if v == nil {
				v = &resVar{key: k, order: len(vars), handles: map[graph.TensorRef]bool{}}
				byKey[k] = v
				vars = append(vars, v)
			}
			cs.add(h.out, v)
		}
	}
	for changed := true; changed; {
		changed = c.passHandles(cs) // until no tensor gains a variable
	}
	c.measureValues(cs)
	return vars
}

// passHandles passes handles once through every WHILE (operand i to input
// i of cond and body, body output i to result i) and IF (operand i+1 to
// input i of each branch), and reports whether any tensor gained a
// variable.
func (c *checker) passHandles(cs carriers) bool {
	changed := false
	for si := range c.m.Subgraphs {
		s := graph.SubgraphIndex(si)
		for _, op := range c.m.Subgraphs[si].Ops {
			first := 0 // the operand that becomes input 0 of the callees
			switch op.Code {
			case graph.While:
				if len(op.Called) >= 2 {
					body := op.Called[1]
					for i, out := range c.m.Subgraphs[body].Outputs {
						if i < len(op.Outputs) && op.Outputs[i] != graph.NoTensor {
							changed = cs.pass(tref(body, out), tref(s, op.Outputs[i])) || changed
						}
					}
				}
			case graph.If:
				first = 1 // operand 0 is the condition
			default:
				continue
			}
			for i := first; i < len(op.Inputs); i++ {
				for _, callee := range op.Called {
					if ins := c.m.Subgraphs[callee].Inputs; op.Inputs[i] != graph.NoTensor && i-first < len(ins) {
						changed = cs.pass(tref(s, op.Inputs[i]), tref(callee, ins[i-first])) || changed
					}
				}
			}
		}
	}
	return changed
}

// measureValues records, for every variable, the largest value an
// ASSIGN_VARIABLE writes or a READ_VARIABLE returns through one of its
// handles.
func (c *checker) measureValues(cs carriers) {
	for si := range c.m.Subgraphs {
		s := graph.SubgraphIndex(si)
		for oi, op := range c.m.Subgraphs[si].Ops {
			var value graph.TensorID
			var verb string
			switch {
			case op.Code == graph.AssignVariable && len(op.Inputs) >= 2:
				value, verb = op.Inputs[1], "writes"
			case op.Code == graph.ReadVariable && len(op.Inputs) >= 1 && len(op.Outputs) >= 1:
				value, verb = op.Outputs[0], "reads"
			default:
				continue
			}
			if op.Inputs[0] == graph.NoTensor || value == graph.NoTensor {
				continue
			}
			size := c.m.Subgraphs[si].Tensors[value].Size
			h := tref(s, op.Inputs[0])
			for v := range cs[h] {
				v.accessors = append(v.accessors, graph.OpRef{Subgraph: s, Op: graph.OpIndex(oi)})
				if size > v.need {
					v.needVia = h
					v.need, v.needBy = size, fmt.Sprintf("op %d:%d (%s) %s", si, oi, escapeName(op.Name()), verb)
				}
			}
		}
	}
}

// indexVariables makes a member of each resource_variables entry.
func (c *checker) indexVariables() {
	c.vars = c.resolveVariables()
	for i := range c.doc.variables {
		e := &c.doc.variables[i]
		c.addMember(&member{path: e.path, key: key{kind: variableKey, variable: e.key()}, what: e.key().String(),
			binding: binding{role: rolePersistent, arena: e.arena, memory: e.memory, offset: e.offset},
			size:    e.size, declared: e.size})
	}
}

// checkVariables matches resource_variables against the variables of the
// model: each entry names a variable once, lists exactly its handles, and
// has the size of its largest value; every variable with a value of
// non-zero size has an entry. Placement in the persistent arena is checked
// with the arena (checkArenas).
func (c *checker) checkVariables() {
	byKey := map[varKey]*resVar{}
	for _, v := range c.vars {
		byKey[v.key] = v
	}
	entry := map[*resVar]*varEntry{}
	for i := range c.doc.variables {
		e := &c.doc.variables[i]
		k := e.key()
		v := byKey[k]
		switch {
		case v == nil:
			c.r.add(Malformed, "%s: no VAR_HANDLE names %s", e.path, k)
			continue
		case entry[v] != nil:
			continue // allocated twice: reported by index
		}
		entry[v] = e
		switch {
		case e.size < v.need:
			c.r.add(OutOfBounds, "%s holds %d bytes, but %s %d bytes through %s", k, e.size, v.needBy, v.need, c.name(v.needVia))
		case e.size > v.need:
			c.r.add(Malformed, "%s: %s has size %d, but its largest value has %d bytes", e.path, k, e.size, v.need)
		}
		c.checkHandles(e, v)
	}
	for _, v := range c.vars {
		if entry[v] == nil && v.need > 0 {
			c.r.add(Unplaced, "%s, which %s %d bytes through %s, has no resource_variables entry", v.key, v.needBy, v.need, c.name(v.needVia))
		}
	}
}

// checkHandles checks that a variable's entry lists exactly the tensors
// that carry it, each once.
func (c *checker) checkHandles(e *varEntry, v *resVar) {
	listed := map[graph.TensorRef]bool{}
	for j, h := range e.handles {
		switch {
		case c.tensor(h) == nil:
			c.r.add(Malformed, "%s.handles[%d]: tensor %v does not exist", e.path, j, h)
		case listed[h]:
			c.r.add(Malformed, "%s.handles[%d]: %s is listed twice", e.path, j, c.name(h))
		case !v.handles[h]:
			c.r.add(Malformed, "%s.handles[%d]: %s is not a handle of %s", e.path, j, c.name(h), v.key)
		}
		listed[h] = true
	}
	for _, h := range slices.SortedFunc(maps.Keys(v.handles), cmpRef) {
		if !listed[h] {
			c.r.add(Malformed, "%s: handles leave out %s, a handle of %s", e.path, c.name(h), v.key)
		}
	}
}

func cmpRef(x, y graph.TensorRef) int {
	switch {
	case less(x, y):
		return -1
	case less(y, x):
		return 1
	}
	return 0
}
