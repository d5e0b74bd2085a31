// Package traffic estimates the bytes each tensor and resource variable of
// a model moves per inference: the figure by which a plan can be judged for
// speed as well as size, since a tensor read often is worth the fastest
// bank.
//
// Input: a validated *graph.Model and its *liveness.Lifetimes (whose
// Schedule lists every run of every operator). Output: *Traffic, a new
// value; neither input is changed. It imports graph, kernels (TFLM's
// padding) and liveness only, never plan, emit or verify.
//
// # The model
//
// The estimate is a model of the loops of TFLM's reference kernels
// (tflite-micro 90b983c), not a measurement. Each run of an operator
// reads each of its input operands' bytes once and writes each of its
// outputs' bytes once, except where the reference kernels' loops give the
// re-reads exactly from the shapes: CONV_2D and DEPTHWISE_CONV_2D read
// their filter and bias once per output pixel and their input once per
// window (about filter_h*filter_w/(stride_h*stride_w) times),
// FULLY_CONNECTED its filter and bias once per batch row (repeats, in
// rereads.go, cites each loop). Elsewhere kernels that read an operand
// more than once (a pool's windows, a kernel's scratch) move more, and
// the reference convolutions load a window again for each output channel
// it feeds, so on the reference kernels the figures are lower bounds.
// CMSIS-NN's loops differ: its convolutions compute a few output pixels
// per pass over the filter, from an im2col copy of their windows
// (docs/planning.md), so there the filters' figures are high and the
// activations' low. Either way it ranks constants by how often the
// kernels read each byte, which is what choosing a bank needs. Also left
// out: an operator's intermediates, the application filling the inputs
// and reading the outputs, and a control-flow kernel's copies between its
// operands and its subgraphs' (counted as its own operands' reads and
// writes).
//
// Runs are counted as the schedule has them:
//
//   - a subgraph called by WHILE, IF or STABLEHLO_COMPOSITE counts once per
//     call site run; a WHILE's condition and body count once per run of the
//     WHILE, as its trip count is unknown ahead of time (another lower
//     bound);
//   - a subgraph called by CALL_ONCE runs on the first inference only, so
//     it counts 0 per inference (Once holds its bytes);
//   - a subgraph no operator calls (another signature's entry point) counts
//     as run once.
//
// A view (RESHAPE, SQUEEZE, EXPAND_DIMS, BITCAST) whose output shares its
// input's bytes (liveness's alias) moves none of them: TFLM's kernels copy
// only when the two buffers differ (reshape.cc: `if (input->data.raw !=
// output->data.raw)`); its other inputs (a shape, an axis) count as read,
// as every operator's do. An in-place write or an exact-overlap copy
// still reads and writes its operands' bytes.
//
// A resource variable is read by READ_VARIABLE and written by
// ASSIGN_VARIABLE through a handle that names it alone; a handle that may
// name several variables (one without a container) is counted against none.
package traffic

import (
	"math"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
)

// Bytes is what one tensor or variable moves: bytes read and written.
type Bytes struct {
	Read, Written int64
}

// Total is the bytes read and written.
func (b Bytes) Total() int64 { return b.Read + b.Written }

// Add returns the sum of b and c (each at most math.MaxInt64).
func (b Bytes) Add(c Bytes) Bytes { return Bytes{satAdd(b.Read, c.Read), satAdd(b.Written, c.Written)} }

// satAdd is a+b for a, b >= 0, at most math.MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Traffic is the estimate of Estimate: per tensor and per resource
// variable, the bytes moved per inference, and those moved on the first
// inference only.
type Traffic struct {
	tensors   map[graph.TensorRef]Bytes
	once      map[graph.TensorRef]Bytes
	variables []Bytes // by index into liveness.Lifetimes.Variables
	varOnce   []Bytes
}

// Tensor returns the bytes tensor ref moves per inference (zero for a
// tensor no operator run per inference uses).
func (t *Traffic) Tensor(ref graph.TensorRef) Bytes { return t.tensors[ref] }

// TensorOnce returns the bytes tensor ref moves on the first inference
// only (in subgraphs CALL_ONCE runs).
func (t *Traffic) TensorOnce(ref graph.TensorRef) Bytes { return t.once[ref] }

// Variable returns the bytes resource variable i (an index into
// liveness.Lifetimes.Variables) moves per inference.
func (t *Traffic) Variable(i int) Bytes {
	if i < 0 || i >= len(t.variables) {
		return Bytes{}
	}
	return t.variables[i]
}

// VariableOnce returns the bytes resource variable i moves on the first
// inference only.
func (t *Traffic) VariableOnce(i int) Bytes {
	if i < 0 || i >= len(t.varOnce) {
		return Bytes{}
	}
	return t.varOnce[i]
}

// Estimate counts, for every run of the schedule of lt, the bytes its
// operator reads and writes (see the package doc for the model).
func Estimate(m *graph.Model, lt *liveness.Lifetimes) *Traffic {
	t := &Traffic{tensors: map[graph.TensorRef]Bytes{}, once: map[graph.TensorRef]Bytes{},
		variables: make([]Bytes, len(lt.Variables)), varOnce: make([]Bytes, len(lt.Variables))}
	handles := map[graph.TensorRef][]int{}
	for i, v := range lt.Variables {
		for _, h := range v.Handles {
			handles[h] = append(handles[h], i)
		}
	}
	// callers holds the runs that call subgraphs and whose spans hold the
	// current run; onceDepth counts the CALL_ONCEs among them.
	type caller struct {
		last liveness.Step
		once bool
	}
	var callers []caller
	onceDepth := 0
	for _, run := range lt.Schedule.Runs {
		for len(callers) > 0 && callers[len(callers)-1].last < run.Span.First {
			if callers[len(callers)-1].once {
				onceDepth--
			}
			callers = callers[:len(callers)-1]
		}
		op := &m.Subgraphs[run.Op.Subgraph].Ops[run.Op.Op]
		if len(op.Called) > 0 {
			c := caller{last: run.Span.Last, once: op.Code == graph.CallOnce}
			callers = append(callers, c)
			if c.once {
				onceDepth++
			}
		}
		tensors, variables := t.tensors, t.variables
		if onceDepth > 0 {
			tensors, variables = t.once, t.varOnce
		}
		s := run.Op.Subgraph
		view := isView(op, s, lt)
		for k, id := range op.Inputs {
			if id != graph.NoTensor && !(view && k == 0) {
				ref := graph.TensorRef{Subgraph: s, Tensor: id}
				read := operandReads(&m.Subgraphs[s], op, k, size(lt, ref))
				tensors[ref] = tensors[ref].Add(Bytes{Read: read})
			}
		}
		for _, id := range op.Outputs {
			if view {
				break
			}
			ref := graph.TensorRef{Subgraph: s, Tensor: id}
			tensors[ref] = tensors[ref].Add(Bytes{Written: size(lt, ref)})
		}
		if len(op.Inputs) == 0 || op.Inputs[0] == graph.NoTensor {
			continue
		}
		vs := handles[graph.TensorRef{Subgraph: s, Tensor: op.Inputs[0]}]
		if len(vs) != 1 {
			continue
		}
		v := vs[0]
		switch op.Code {
		case graph.ReadVariable:
			variables[v] = variables[v].Add(Bytes{Read: readSize(lt, s, op.Outputs, 0, lt.Variables[v].Size)})
		case graph.AssignVariable:
			variables[v] = variables[v].Add(Bytes{Written: readSize(lt, s, op.Inputs, 1, lt.Variables[v].Size)})
		}
	}
	return t
}

// readSize is the bytes of operand i of ids, or def when there is none.
func readSize(lt *liveness.Lifetimes, s graph.SubgraphIndex, ids []graph.TensorID, i int, def int64) int64 {
	if i >= len(ids) || ids[i] == graph.NoTensor {
		return def
	}
	return size(lt, graph.TensorRef{Subgraph: s, Tensor: ids[i]})
}

// size is the bytes a tensor occupies: 0 for one that takes none
// (a resource handle, a run-time string, a zero-size tensor).
func size(lt *liveness.Lifetimes, ref graph.TensorRef) int64 {
	t := lt.Lookup(ref)
	if t == nil || t.Class == liveness.Unallocated {
		return 0
	}
	return t.Size
}

// viewOps are the operators whose output reinterprets their first input's
// bytes (liveness joins them in one alias group).
var viewOps = map[graph.Opcode]bool{graph.Reshape: true, graph.Squeeze: true, graph.ExpandDims: true, graph.Bitcast: true}

// isView reports whether op is a view whose output shares its first
// input's bytes: the kernel then moves none.
func isView(op *graph.Op, s graph.SubgraphIndex, lt *liveness.Lifetimes) bool {
	if !viewOps[op.Code] || len(op.Inputs) == 0 || len(op.Outputs) != 1 || op.Inputs[0] == graph.NoTensor {
		return false
	}
	out := lt.Lookup(graph.TensorRef{Subgraph: s, Tensor: op.Outputs[0]})
	in := lt.Lookup(graph.TensorRef{Subgraph: s, Tensor: op.Inputs[0]})
	if out == nil || in == nil || out.InPlace != nil || out.Copy != nil || out.OwnPlan != nil || out.AliasOffset != 0 {
		return false
	}
	return root(out) == root(in) && (out.AliasOf != nil || in.AliasOf != nil)
}

// root is the root of t's alias group (t itself when it has none).
func root(t *liveness.Tensor) graph.TensorRef {
	if t.AliasOf != nil {
		return *t.AliasOf
	}
	return t.Ref
}
