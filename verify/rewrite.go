package verify

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/heliac/heliac/graph"
)

// Rewrite checks that rewritten, the model heliac emits for a plan that
// records stripes, is the stripe rewrite of original the record
// describes: it rebuilds the rewritten model from original and the
// record with the verifier's own code (as Plan does) and compares the two
// operator by operator and tensor by tensor: opcodes, options (padding
// VALID on the copies of convolutions, the rest as the original
// operator's), operands (constants the original's tensor ids), the data
// of every constant (slice bounds, paddings), shapes, types and
// quantization. A halo one row short, a border padded with the wrong
// value or a weight swapped is a RewriteMismatch naming the operator or
// tensor, even where every size still fits. rewritten may be the model
// in memory (its Stripes, when set, must be the plan's record) or one
// read back from the .tflite heliac wrote (no record). A plan without
// stripes needs rewritten to equal original. It returns nil when the
// models agree.
func Rewrite(original, rewritten *graph.Model, planJSON []byte) []Violation {
	return checkRewrite(original, rewritten, planJSON, false)
}

// RewriteFile is Rewrite for emitted, the model read back from the
// .tflite --emit-tflite writes beside a plan that records stripes. That
// file lists each subgraph's operators in the plan's schedule order (TFLM
// runs them as listed), and gives the region's intermediate tensors,
// which the rewrite keeps at their ids though no operator uses them any
// more, a height of 0 with their shape in shape_signature: TFLM gives
// bytes to every non-constant tensor of non-zero size, used or not
// (tensorflow/lite/micro/micro_allocation_info.cc @90b983c). Both are
// accepted; everything else is compared as Rewrite does.
func RewriteFile(original, emitted *graph.Model, planJSON []byte) []Violation {
	return checkRewrite(original, emitted, planJSON, true)
}

// checkRewrite rebuilds the rewrite from original and plan.json and
// compares got with it; file says got was read back from the .tflite
// (RewriteFile: operators in the schedule's order, unused intermediates
// of height 0).
func checkRewrite(original, got *graph.Model, planJSON []byte, file bool) []Violation {
	if original == nil || got == nil {
		return report{{Malformed, "model is nil"}}
	}
	doc, bad := decode(planJSON)
	if doc == nil {
		return bad
	}
	want, bad := rebuildModel(original, doc)
	if want == nil {
		return bad
	}
	var order [][]graph.OpIndex
	if file {
		order = scheduleOrder(doc, len(want.Subgraphs))
	}
	var r report
	compareModels(&r, want, got, order, file)
	if len(r) == 0 {
		return nil
	}
	return r
}

// scheduleOrder lists, per subgraph, its operators in the order the
// plan's schedule first runs them.
func scheduleOrder(doc *planDoc, subgraphs int) [][]graph.OpIndex {
	order := make([][]graph.OpIndex, subgraphs)
	seen := map[graph.OpRef]bool{}
	for _, run := range doc.schedule {
		s := run.op.Subgraph
		if s < 0 || int(s) >= len(order) || seen[run.op] {
			continue
		}
		seen[run.op] = true
		order[s] = append(order[s], run.op.Op)
	}
	return order
}

// compareModels reports each way got differs from want, the rebuild.
// order, when not nil, lists per subgraph the rebuild's operators in the
// order got lists them (a subgraph whose list is not a permutation of
// its operators keeps the model's order); file says got was read from a
// .tflite (RewriteFile).
func compareModels(r *report, want, got *graph.Model, order [][]graph.OpIndex, file bool) {
	if len(got.Subgraphs) != len(want.Subgraphs) {
		r.add(RewriteMismatch, "the rewritten model has %d subgraphs, the rebuild %d", len(got.Subgraphs), len(want.Subgraphs))
		return
	}
	if got.Stripes != nil {
		// A model read back from a .tflite carries no record: the file
		// holds none.
		compareRecords(r, want.Stripes, got.Stripes)
	}
	for s := range want.Subgraphs {
		ws, gs := &want.Subgraphs[s], &got.Subgraphs[s]
		si := graph.SubgraphIndex(s)
		if len(gs.Tensors) != len(ws.Tensors) {
			r.add(RewriteMismatch, "subgraph %d of the rewritten model has %d tensors, the rebuild %d", s, len(gs.Tensors), len(ws.Tensors))
		}
		var unused map[graph.TensorID]bool
		if file {
			unused = unusedTensors(ws)
		}
		for t := range min(len(gs.Tensors), len(ws.Tensors)) {
			compareTensors(r, want, got, si, graph.TensorID(t), unused[graph.TensorID(t)])
		}
		if !slices.Equal(gs.Inputs, ws.Inputs) || !slices.Equal(gs.Outputs, ws.Outputs) {
			r.add(RewriteMismatch, "subgraph %d: inputs %v and outputs %v, the rebuild's %v and %v", s, gs.Inputs, gs.Outputs, ws.Inputs, ws.Outputs)
		}
		if len(gs.Ops) != len(ws.Ops) {
			r.add(RewriteMismatch, "subgraph %d of the rewritten model has %d operators, the rebuild %d", s, len(gs.Ops), len(ws.Ops))
		}
		perm := identity(len(ws.Ops))
		if s < len(order) && isPermutation(order[s], len(ws.Ops)) {
			perm = order[s]
		}
		for i := range min(len(gs.Ops), len(ws.Ops)) {
			compareOps(r, got, si, graph.OpIndex(i), &ws.Ops[perm[i]], &gs.Ops[i])
		}
	}
}

func identity(n int) []graph.OpIndex {
	out := make([]graph.OpIndex, n)
	for i := range out {
		out[i] = graph.OpIndex(i)
	}
	return out
}

// isPermutation reports whether order lists each of n operators once.
func isPermutation(order []graph.OpIndex, n int) bool {
	if len(order) != n {
		return false
	}
	seen := make([]bool, n)
	for _, o := range order {
		if o < 0 || int(o) >= n || seen[o] {
			return false
		}
		seen[o] = true
	}
	return true
}

// unusedTensors returns the tensors of sg that no operator reads or
// writes and that are no subgraph input or output.
func unusedTensors(sg *graph.Subgraph) map[graph.TensorID]bool {
	used := map[graph.TensorID]bool{}
	for _, ts := range [][]graph.TensorID{sg.Inputs, sg.Outputs} {
		for _, t := range ts {
			used[t] = true
		}
	}
	for _, op := range sg.Ops {
		for _, ts := range [][]graph.TensorID{op.Inputs, op.Outputs, op.Intermediates} {
			for _, t := range ts {
				used[t] = true
			}
		}
	}
	out := map[graph.TensorID]bool{}
	for t := range sg.Tensors {
		if !used[graph.TensorID(t)] {
			out[graph.TensorID(t)] = true
		}
	}
	return out
}

// heightZeroed reports whether got is want with its height 0 and its
// shape kept in shape_signature (or the signature the model gave), as
// RewriteFile accepts for an unused tensor.
func heightZeroed(got, want *graph.Tensor) bool {
	if len(got.Shape) != 4 || len(want.Shape) != 4 || got.Shape[1] != 0 {
		return false
	}
	zeroed := slices.Clone(want.Shape)
	zeroed[1] = 0
	sig := got.ShapeSignature
	return slices.Equal(got.Shape, zeroed) && (sig == nil || slices.Equal(sig, want.Shape) || slices.Equal(sig, want.ShapeSignature))
}

// compareRecords reports a rewritten model whose own Stripes differ from
// the record.
func compareRecords(r *report, want, got []graph.StripeRegion) {
	if len(got) != len(want) {
		r.add(RewriteMismatch, "the rewritten model records %d stripe regions, plan.json %d", len(got), len(want))
		return
	}
	for i := range want {
		w, g := &want[i], &got[i]
		if w.Subgraph != g.Subgraph || w.Input != g.Input || w.Output != g.Output || !slices.Equal(w.Ops, g.Ops) ||
			!slices.Equal(w.Rows, g.Rows) || w.HaloKind() != g.HaloKind() || w.MACs != g.MACs || w.ExtraMACs != g.ExtraMACs {
			r.add(RewriteMismatch, "stripes[%d]: the rewritten model records %+v, plan.json %+v", i, *g, *w)
		}
	}
}

// tensorName formats a tensor of m as "s:t (name)".
func tensorName(m *graph.Model, s graph.SubgraphIndex, t graph.TensorID) string {
	ts := m.Subgraphs[s].Tensors
	if t < 0 || int(t) >= len(ts) {
		return fmt.Sprintf("%d:%d", s, t)
	}
	return fmt.Sprintf("%d:%d (%s)", s, t, escapeName(ts[t].Name))
}

// compareTensors reports a tensor of got that differs from the rebuild's:
// name, type, shape, quantization, variable flag, and constant data; an
// unused tensor may have its height zeroed (RewriteFile).
func compareTensors(r *report, want, got *graph.Model, s graph.SubgraphIndex, t graph.TensorID, unused bool) {
	w, g := &want.Subgraphs[s].Tensors[t], &got.Subgraphs[s].Tensors[t]
	name := tensorName(got, s, t)
	switch {
	case g.Name != w.Name:
		r.add(RewriteMismatch, "tensor %s: the rebuild names it %q", name, escapeName(w.Name))
	case g.Type != w.Type || !slices.Equal(g.Shape, w.Shape) && !(unused && heightZeroed(g, w)):
		r.add(RewriteMismatch, "tensor %s is %v %v, the rebuild's %v %v", name, g.Type, g.Shape, w.Type, w.Shape)
	case !sameQuant(g.Quantization, w.Quantization):
		r.add(RewriteMismatch, "tensor %s: quantization %s, the rebuild's %s", name, quantText(g.Quantization), quantText(w.Quantization))
	case g.IsVariable != w.IsVariable:
		r.add(RewriteMismatch, "tensor %s: variable %v, the rebuild's %v", name, g.IsVariable, w.IsVariable)
	case !bytes.Equal(dataOf(got, g), dataOf(want, w)):
		r.add(RewriteMismatch, "tensor %s: its constant data (%d bytes) is not the rebuild's (%d bytes)%s",
			name, len(dataOf(got, g)), len(dataOf(want, w)), int32Diff(dataOf(got, g), dataOf(want, w), g.Type))
	}
}

// dataOf returns a tensor's constant bytes, nil when it has none.
func dataOf(m *graph.Model, t *graph.Tensor) []byte {
	if !m.HasData(t) {
		return nil
	}
	return m.Buffers[t.Buffer].Data
}

// int32Diff shows two INT32 data as values, for slice bounds and
// paddings; "" for other types or long data.
func int32Diff(got, want []byte, typ graph.ElementType) string {
	if typ != graph.Int32 || len(got) > 64 || len(want) > 64 || len(got)%4 != 0 || len(want)%4 != 0 {
		return ""
	}
	vals := func(b []byte) []int32 {
		out := make([]int32, len(b)/4)
		for i := range out {
			out[i] = int32(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
		}
		return out
	}
	return fmt.Sprintf(": %v, the rebuild's %v", vals(got), vals(want))
}

func sameQuant(a, b *graph.Quantization) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Scale, b.Scale) && slices.Equal(a.ZeroPoint, b.ZeroPoint) && a.QuantizedDim == b.QuantizedDim &&
		a.HasCustomQuant == b.HasCustomQuant
}

func quantText(q *graph.Quantization) string {
	if q == nil {
		return "none"
	}
	return fmt.Sprintf("scale %v zero point %v", q.Scale, q.ZeroPoint)
}

// compareOps reports an operator of got that differs from the rebuild's.
func compareOps(r *report, got *graph.Model, s graph.SubgraphIndex, i graph.OpIndex, w, g *graph.Op) {
	name := fmt.Sprintf("op %d:%d (%s)", s, i, escapeName(g.Name()))
	if g.Code != w.Code || g.CustomName != w.CustomName {
		r.add(RewriteMismatch, "%s: the rebuild has %s here", name, escapeName(w.Name()))
		return
	}
	if !slices.Equal(g.Inputs, w.Inputs) {
		r.add(RewriteMismatch, "%s reads %s, the rebuild's %s", name, refList(got, s, g.Inputs), refList(got, s, w.Inputs))
	}
	if !slices.Equal(g.Outputs, w.Outputs) {
		r.add(RewriteMismatch, "%s writes %s, the rebuild's %s", name, refList(got, s, g.Outputs), refList(got, s, w.Outputs))
	}
	if !slices.Equal(g.Intermediates, w.Intermediates) || !slices.Equal(g.Called, w.Called) {
		r.add(RewriteMismatch, "%s: intermediates or called subgraphs differ from the rebuild's", name)
	}
	switch {
	case (w.Code == opStridedSlice || w.Code == opPad || w.Code == opConcatenation) && w.Options != nil:
		// Operators the rewrite adds: what their kernels read of the
		// options must be the rebuild's; fields left out read as the
		// schema's defaults. (A PAD of the original written without
		// options, which TFLM reads as PadOptions' defaults, is kept
		// as it was: compared below, as every operator of the
		// original.)
		for _, f := range w.Options.Fields {
			if got := g.Options.Int(f.Name); got != f.Int {
				r.add(RewriteMismatch, "%s: option %s is %d, the rebuild's %d", name, f.Name, got, f.Int)
			}
		}
		if w.Code == opConcatenation && g.Options == nil {
			r.add(RewriteMismatch, "%s has no ConcatenationOptions; TFLM would concatenate along axis 0", name)
		}
		if g.Version != w.Version {
			r.add(RewriteMismatch, "%s: version %d, the rebuild's %d (docs/stripes.md: 2 over INT8, else 1)", name, g.Version, w.Version)
		}
	default:
		if g.Version != w.Version {
			r.add(RewriteMismatch, "%s: version %d, the original operator's %d", name, g.Version, w.Version)
		}
		if d := optionsDiff(g.Options, w.Options); d != "" {
			r.add(RewriteMismatch, "%s: options %s", name, d)
		}
		if d := optionsDiff(g.Options2, w.Options2); d != "" {
			r.add(RewriteMismatch, "%s: options_2 %s", name, d)
		}
		if !bytes.Equal(g.CustomOptions, w.CustomOptions) {
			r.add(RewriteMismatch, "%s: custom options differ from the original operator's", name)
		}
		if (g.Window == nil) != (w.Window == nil) || g.Window != nil && *g.Window != *w.Window {
			r.add(RewriteMismatch, "%s: window %+v, the rebuild's %+v", name, g.Window, w.Window)
		}
	}
}

// refList formats tensor ids as "[s:t (name), ...]".
func refList(m *graph.Model, s graph.SubgraphIndex, ts []graph.TensorID) string {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, t := range ts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tensorName(m, s, t))
	}
	b.WriteByte(']')
	return b.String()
}

// optionsDiff describes how options table g differs from w, by value
// (a field the file leaves out and one it gives with the default value
// are the same); "" when they agree.
func optionsDiff(g, w *graph.Options) string {
	if g == nil || w == nil {
		if g == w {
			return ""
		}
		return fmt.Sprintf("%v, the rebuild's %v", g != nil, w != nil)
	}
	if g.Table != w.Table || len(g.Fields) != len(w.Fields) {
		return fmt.Sprintf("table %s, the rebuild's %s", g.Table, w.Table)
	}
	for i := range w.Fields {
		a, b := g.Fields[i], w.Fields[i]
		a.Present, b.Present = false, false
		if fmt.Sprint(a) != fmt.Sprint(b) {
			return fmt.Sprintf("field %s is %v, the rebuild's %v", b.Name, fieldValue(&a), fieldValue(&b))
		}
	}
	return ""
}

func fieldValue(f *graph.OptionField) any {
	switch f.Kind {
	case graph.OptionInt:
		return f.Int
	case graph.OptionFloat:
		return f.Float
	case graph.OptionString:
		return f.Str
	case graph.OptionInts:
		return f.Ints
	}
	return fmt.Sprint(*f)
}
