package liveness

import (
	"github.com/heliac/heliac/graph"
)

// OwnPlan is set on each member of an alias group whose offsets from one
// another are the model's own: an operator's kernel addresses those
// tensors relative to one another, so the model's offline memory plan
// (TFLM's OfflineMemoryAllocation metadata) is part of what it computes.
// The group's root is the anchor the kernel addresses the others from;
// each member's AliasOffset is its offline offset minus the root's.
// Members overlap by design (the model's plan puts them so); each holds
// its bytes while it lives, as every alias member does.
type OwnPlan struct {
	// Op is the first operator (in model order) of those that address
	// the group; Operator is its name, e.g. "CUSTOM:ethos-u".
	Op       graph.OpRef
	Operator string
	// Ops counts the operators that address the group.
	Ops int
}

// EthosU is the custom code of the operator Arm's Vela compiler puts in a
// model for each part it compiles for an Ethos-U NPU.
const EthosU = "ethos-u"

// The Ethos-U contract, from TFLM's kernel and Vela's writer:
//
//   - The operator's inputs are the command stream, the weights ("TFLM
//     model"), the scratch ("TFLM arena"), the fast scratch, then the
//     feature-map inputs; its outputs are the feature-map outputs. The
//     kernel passes every input but the command stream, then every
//     output, to the NPU driver as base addresses 0, 1, 2, ...; "the
//     command stream produced by Vela will access the IFM and OFM buffers
//     using base address 1 [the TFLM arena]. This means that it is not
//     possible to point the input and output tensors outside of the TFLM
//     arena." (tensorflow/lite/micro/kernels/ethos_u/ethosu.cc, Eval,
//     tflite-micro 90b983c.)
//   - Vela gives every tensor of memory type Scratch or Scratch_fast its
//     address within its region as its offline offset (ethosu/vela/
//     tflite_writer.py, serialise_model), and every NPU operator of a
//     model shares the one scratch and fast-scratch tensor (ethosu/vela/
//     npu_serialisation.py, serialise_npu_subgraph_into_tensors). When
//     Vela does not spill to a separate fast memory, the fast scratch is
//     the scratch region again (same size, offset 0), reached through
//     base address 2.
//
// So every non-constant operand of an ethos-u operator from the scratch
// on (scratch, fast scratch, feature maps in and out) keeps its offline
// offset minus the scratch's; operators sharing an operand share one
// group. An operand the model's plan leaves to TFLM (-1) keeps nothing,
// and without an offline plan (or with one TFLM would refuse) there is
// nothing to keep.
const (
	ethosUScratch = 2 // the input that is the TFLM arena, NPU base address 1
)

// offlineOffsets returns the model's offline plan: one offset per tensor
// of every subgraph (subgraph by subgraph), -1 for a tensor TFLM places
// itself; nil when the model has none, or one whose tensor count is not
// the model's (TFLM then refuses the model: GetOfflinePlannedOffsets,
// tensorflow/lite/micro/micro_allocator.cc, 90b983c).
func offlineOffsets(m *graph.Model) []int64 {
	total := 0
	for _, sg := range m.Subgraphs {
		total += len(sg.Tensors)
	}
	for _, md := range m.Metadata {
		if md.Name != graph.OfflinePlanName || md.Buffer < 0 || int(md.Buffer) >= len(m.Buffers) {
			continue
		}
		_, _, offs, err := graph.ReadOfflinePlan(m.Buffers[md.Buffer].Data)
		if err != nil || len(offs) != total {
			return nil
		}
		out := make([]int64, total)
		for i, o := range offs {
			out[i] = int64(o)
		}
		return out
	}
	return nil
}

// ownPlan forms an alias group of the operands of every ethos-u operator
// (see the contract above) at the offsets from one another that the
// model's own offline plan gives them, before any view or in-place group
// is formed; those passes leave the members alone.
func (a *analyzer) ownPlan() {
	offs := offlineOffsets(a.m)
	if offs == nil {
		return
	}
	a.indexMembers() // for join
	base := 0
	for si, sg := range a.m.Subgraphs {
		a.ownPlanSubgraph(graph.SubgraphIndex(si), offs[base:base+len(sg.Tensors)])
		base += len(sg.Tensors)
	}
}

func (a *analyzer) ownPlanSubgraph(s graph.SubgraphIndex, offs []int64) {
	sg := &a.m.Subgraphs[s]
	parent := map[graph.TensorID]graph.TensorID{}
	find := func(t graph.TensorID) graph.TensorID {
		for parent[t] != t {
			parent[t] = parent[parent[t]]
			t = parent[t]
		}
		return t
	}
	anchorOf := map[graph.TensorID]graph.TensorID{} // by component: the first operator's scratch
	firstOp := map[graph.TensorID]graph.OpIndex{}
	ops := map[graph.TensorID]int{}
	var order []graph.TensorID // every member, in the order first seen
	for oi := range sg.Ops {
		op := &sg.Ops[oi]
		if op.Code != graph.Custom || op.CustomName != EthosU || len(op.Inputs) <= ethosUScratch {
			continue
		}
		anchor := op.Inputs[ethosUScratch]
		if !a.keepsOffset(s, anchor, offs) {
			continue
		}
		var members []graph.TensorID
		for _, t := range append(append([]graph.TensorID{}, op.Inputs[ethosUScratch:]...), op.Outputs...) {
			if a.keepsOffset(s, t, offs) {
				members = append(members, t)
			}
		}
		for _, t := range members {
			if _, ok := parent[t]; !ok {
				parent[t] = t
				order = append(order, t)
			}
		}
		// Join every member's component to the anchor's; a component
		// keeps the anchor and first operator it had first.
		ra := find(anchor)
		if _, ok := anchorOf[ra]; !ok {
			anchorOf[ra], firstOp[ra] = anchor, graph.OpIndex(oi)
		}
		ops[ra]++
		for _, t := range members {
			rt := find(t)
			if rt == ra {
				continue
			}
			if _, ok := anchorOf[rt]; ok {
				ops[ra] += ops[rt]
				if firstOp[rt] < firstOp[ra] {
					anchorOf[ra], firstOp[ra] = anchorOf[rt], firstOp[rt]
				}
			}
			parent[rt] = ra
		}
	}
	for _, t := range order {
		c := find(t)
		root := anchorOf[c]
		own := &OwnPlan{Op: graph.OpRef{Subgraph: s, Op: firstOp[c]}, Operator: sg.Ops[firstOp[c]].Name(), Ops: ops[c]}
		a.lt.Lookup(graph.TensorRef{Subgraph: s, Tensor: t}).OwnPlan = own
		if t != root {
			a.join(graph.TensorRef{Subgraph: s, Tensor: t}, graph.TensorRef{Subgraph: s, Tensor: root}, offs[t]-offs[root])
		}
	}
}

// keepsOffset reports whether tensor t of subgraph s is one whose offline
// offset an ethos-u operator relies on: a scratch tensor the model's plan
// places.
func (a *analyzer) keepsOffset(s graph.SubgraphIndex, t graph.TensorID, offs []int64) bool {
	if t == graph.NoTensor || t < 0 || int(t) >= len(offs) || offs[t] < 0 {
		return false
	}
	return a.lt.Lookup(graph.TensorRef{Subgraph: s, Tensor: t}).Class == Scratch
}

// HasOwnPlan reports whether m has an operator whose operands keep the
// offsets the model's own offline plan gives them (see OwnPlan): an
// ethos-u operator whose scratch that plan places. The model's plan was
// made for the order the model lists its operators in, and members other
// than the scratch regions may share bytes in it only because of that
// order, so such a model runs in its own order.
func HasOwnPlan(m *graph.Model) bool {
	offs := offlineOffsets(m)
	if offs == nil {
		return false
	}
	base := 0
	for _, sg := range m.Subgraphs {
		for _, op := range sg.Ops {
			if op.Code == graph.Custom && op.CustomName == EthosU && len(op.Inputs) > ethosUScratch {
				if t := op.Inputs[ethosUScratch]; t >= 0 && int(t) < len(sg.Tensors) && offs[base+int(t)] >= 0 {
					return true
				}
			}
		}
		base += len(sg.Tensors)
	}
	return false
}

// OwnOffsets returns the offsets the model's own offline plan (TFLM's
// OfflineMemoryAllocation metadata) gives its tensors, subgraph by
// subgraph, -1 for a tensor TFLM places itself; nil when the model
// carries none TFLM would take.
func OwnOffsets(m *graph.Model) []int64 { return offlineOffsets(m) }
