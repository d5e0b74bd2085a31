package verify

import (
	"encoding/binary"
	"slices"

	"github.com/heliac/heliac/graph"
)

// An Ethos-U operator (CUSTOM "ethos-u", the operator Arm's Vela compiler
// writes for each part of a model it compiles for the NPU) takes the
// command stream, the weights, the scratch ("TFLM arena"), the fast
// scratch and then its feature-map inputs, and its feature-map outputs;
// TFLM's kernel hands all but the command stream to the NPU as base
// addresses, and Vela's command stream reaches the inputs and outputs
// through the scratch's base address, so they must lie where the model's
// own offline plan puts them relative to the scratch
// (tensorflow/lite/micro/kernels/ethos_u/ethosu.cc, Eval, tflite-micro
// 90b983c; Vela writes each scratch-region tensor's address as its
// offline offset: ethosu/vela/tflite_writer.py, serialise_model). The
// checker reads the model's OfflineMemoryAllocation metadata itself and
// holds every operand of such an operator from the scratch on (scratch,
// fast scratch, inputs, outputs) that the model's plan places to the
// model's offset from the operator's scratch.
//
// Such operands may share bytes as the model's plan has them: the scratch
// and fast scratch are the regions the NPU works in, which the others lie
// inside, so they may share bytes with any of them at any step; two other
// operands only at the step of an Ethos-U operator that has both (its
// input and output: the NPU reads the one before it writes the other over
// it), since the model's plan was made for the model's order and a
// schedule that runs them otherwise must keep them apart.

// ethosUCode is the Ethos-U operator's custom code; ethosUArena and
// ethosUFast are the indexes of its scratch and fast scratch inputs.
const (
	ethosUCode  = "ethos-u"
	ethosUArena = 2
	ethosUFast  = 3
)

// ownOffsets reads the model's offline plan: the offset of each tensor the
// plan places (not -1), by tensor. A model without one, or with one whose
// tensor count is not the model's (which TFLM refuses), gives none.
func ownOffsets(m *graph.Model) map[graph.TensorRef]int64 {
	n := 0
	for _, sg := range m.Subgraphs {
		n += len(sg.Tensors)
	}
	for _, md := range m.Metadata {
		if md.Name != "OfflineMemoryAllocation" || md.Buffer < 0 || int(md.Buffer) >= len(m.Buffers) {
			continue
		}
		b := m.Buffers[md.Buffer].Data
		if len(b) != 4*(3+n) || int32(binary.LittleEndian.Uint32(b[8:])) != int32(n) {
			return nil
		}
		out := map[graph.TensorRef]int64{}
		i := 3
		for si, sg := range m.Subgraphs {
			for ti := range sg.Tensors {
				if v := int32(binary.LittleEndian.Uint32(b[4*i:])); v >= 0 {
					out[graph.TensorRef{Subgraph: graph.SubgraphIndex(si), Tensor: graph.TensorID(ti)}] = int64(v)
				}
				i++
			}
		}
		return out
	}
	return nil
}

// ownPair is one tensor an operator addresses relative to another, its
// anchor, and how far from it the model's plan puts it.
type ownPair struct {
	op             graph.OpRef
	tensor, anchor graph.TensorRef
	delta          int64
}

// indexOwnPlan lists, for every Ethos-U operator whose scratch the model's
// plan places, each of its other operands the plan places and that the
// plan.json holds as scratch, with the model's offset from the scratch;
// own marks every tensor so listed, and the scratch.
func (c *checker) indexOwnPlan() {
	c.own, c.ownRegion, c.ownOps = map[graph.TensorRef]int64{}, map[graph.TensorRef]bool{}, map[graph.TensorRef][]graph.OpRef{}
	offs := ownOffsets(c.m)
	if offs == nil {
		return
	}
	isScratch := func(r graph.TensorRef) bool {
		p := c.placed[r]
		return p != nil && p.role == roleScratch
	}
	for si, sg := range c.m.Subgraphs {
		s := graph.SubgraphIndex(si)
		for oi, op := range sg.Ops {
			if op.Code != graph.Custom || op.CustomName != ethosUCode || len(op.Inputs) <= ethosUArena {
				continue
			}
			anchor := graph.TensorRef{Subgraph: s, Tensor: op.Inputs[ethosUArena]}
			base, ok := offs[anchor]
			if !ok || !isScratch(anchor) {
				continue
			}
			o := graph.OpRef{Subgraph: s, Op: graph.OpIndex(oi)}
			c.own[anchor] = base
			c.ownRegion[anchor] = true
			c.ownOps[anchor] = append(c.ownOps[anchor], o)
			for i, t := range append(append([]graph.TensorID{}, op.Inputs[ethosUArena+1:]...), op.Outputs...) {
				r := graph.TensorRef{Subgraph: s, Tensor: t}
				off, ok := offs[r]
				if t == graph.NoTensor || !ok || !isScratch(r) {
					continue
				}
				c.own[r] = off
				c.ownRegion[r] = c.ownRegion[r] || (i == 0 && len(op.Inputs) > ethosUFast) // the fast scratch
				c.ownOps[r] = append(c.ownOps[r], o)
				c.ownPairs = append(c.ownPairs, ownPair{op: o, tensor: r, anchor: anchor, delta: off - base})
			}
		}
	}
}

// ownTogether reports whether p and q are both tensors the model's plan
// holds relative to one another for an Ethos-U operator, in one arena at
// the model's own distance: they may be one alias group.
func (c *checker) ownTogether(p, q *member) bool {
	op, ok1 := c.own[p.key.ref]
	oq, ok2 := c.own[q.key.ref]
	return ok1 && ok2 && p.key.kind == tensorKey && q.key.kind == tensorKey && p.arena == q.arena &&
		p.offset-q.offset == op-oq
}

// ownShare reports whether p and q, both live over steps first..last, may
// share bytes there because the model's own plan puts them so: they are
// together (ownTogether), and one is a scratch region, or first..last is
// the single step of an Ethos-U operator that has both as operands.
func (c *checker) ownShare(p, q *member, first, last int64) bool {
	if !c.ownTogether(p, q) {
		return false
	}
	if c.ownRegion[p.key.ref] || c.ownRegion[q.key.ref] {
		return true
	}
	for _, o := range c.ownOps[p.key.ref] {
		sp, ran := c.tl.spans[o]
		if ran && slices.Contains(c.ownOps[q.key.ref], o) && first == sp.first && last == sp.last {
			return true
		}
	}
	return false
}

// checkOwnPlan checks that every tensor an Ethos-U operator addresses
// relative to its scratch lies, in the scratch's arena, at the model's
// own offset from it.
func (c *checker) checkOwnPlan() {
	for _, e := range c.ownPairs {
		p, a := c.placed[e.tensor], c.placed[e.anchor]
		switch {
		case p.arena != a.arena:
			c.r.add(OwnOffset, "%s is in arena %d and %s in arena %d, but %s addresses it relative to that tensor, its scratch (the model's own offline plan puts it %d bytes from it)",
				c.name(e.tensor), p.arena, c.name(e.anchor), a.arena, c.opName(e.op), e.delta)
		case p.offset-a.offset != e.delta:
			c.r.add(OwnOffset, "%s lies %d bytes from %s, but %s addresses it relative to that tensor, its scratch, where the model's own offline plan puts it %d bytes from it",
				c.name(e.tensor), p.offset-a.offset, c.name(e.anchor), c.opName(e.op), e.delta)
		}
	}
}
