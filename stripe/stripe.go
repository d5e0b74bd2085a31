// Package stripe rewrites a model so that regions of row-local operators
// (convolutions, pools, PAD, elementwise operators over NHWC tensors of
// batch 1) run stripe by stripe: each stripe computes a band of rows of the
// region's output from the rows of its input that the band's receptive
// field needs, and a CONCATENATION joins the bands. The construction is
// canonical (docs/stripes.md): the verifier rebuilds it on its own.
//
// Input: a graph.Model and the regions to stripe (Candidates finds them).
// Output: a new graph.Model (Apply), with Model.Stripes recording the
// rewrite; the model given is never changed.
// It imports graph alone.
package stripe

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/heliac/heliac/graph"
)

// maxConcatInputs is TFLM's kMaxInputNum, the most inputs its
// CONCATENATION takes (tensorflow/lite/micro/kernels/concatenation.cc
// @90b983c).
const maxConcatInputs = 10

// MaxStripes is the most stripes a region may have. More than
// maxConcatInputs (10) stripes are joined in groups of at most 10, and
// the groups by one last CONCATENATION of at most 10 inputs
// (docs/stripes.md, "More than 10 stripes: groups").
const MaxStripes = maxConcatInputs * maxConcatInputs

// sliceable are the element types that TFLM's STRIDED_SLICE, PAD and
// CONCATENATION all take (strided_slice.cc, pad.cc, concatenation.cc
// @90b983c): every tensor of a region computed at run time has one.
var sliceable = map[graph.ElementType]bool{graph.Float32: true, graph.Int8: true, graph.Int16: true, graph.Int32: true}

// span is a range of rows [a, b).
type span struct{ a, b int32 }

func (s span) empty() bool { return s.a >= s.b }

func hull(x, y span) span { return span{min(x.a, y.a), max(x.b, y.b)} }

// subgraph holds who writes and reads each tensor of one subgraph.
type subgraph struct {
	m         *graph.Model
	s         graph.SubgraphIndex
	producer  []int   // operator index, -1 for none (the last, of several)
	writers   [][]int // operator indices writing each tensor, ascending
	consumers [][]int // operator indices, ascending, each once
	io        []bool  // a subgraph input or output
}

func analyze(m *graph.Model, s graph.SubgraphIndex) *subgraph {
	sg := &m.Subgraphs[s]
	g := &subgraph{m: m, s: s, producer: make([]int, len(sg.Tensors)), writers: make([][]int, len(sg.Tensors)), consumers: make([][]int, len(sg.Tensors)), io: make([]bool, len(sg.Tensors))}
	for i := range g.producer {
		g.producer[i] = -1
	}
	for i := range sg.Ops {
		op := &sg.Ops[i]
		for _, t := range op.Outputs {
			if t >= 0 && int(t) < len(sg.Tensors) {
				g.producer[t] = i
				g.writers[t] = append(g.writers[t], i)
			}
		}
		for _, t := range op.Inputs {
			if t >= 0 && int(t) < len(sg.Tensors) {
				if c := g.consumers[t]; len(c) == 0 || c[len(c)-1] != i {
					g.consumers[t] = append(c, i)
				}
			}
		}
	}
	for _, l := range [][]graph.TensorID{sg.Inputs, sg.Outputs} {
		for _, t := range l {
			if t >= 0 && int(t) < len(sg.Tensors) {
				g.io[t] = true
			}
		}
	}
	return g
}

func (g *subgraph) tensor(t graph.TensorID) *graph.Tensor { return g.m.Tensor(g.s, t) }

func (g *subgraph) op(i int) *graph.Op { return &g.m.Subgraphs[g.s].Ops[i] }

// constant reports whether t is an operand with constant data.
func (g *subgraph) constant(t graph.TensorID) bool { return g.m.HasData(g.tensor(t)) }

func (g *subgraph) opName(i int) string {
	return fmt.Sprintf("operator %d (%s)", i, g.op(i).Name())
}

func (g *subgraph) tensorName(t graph.TensorID) string {
	return fmt.Sprintf("tensor %d %q", t, g.tensor(t).Name)
}

// region is a checked StripeRegion with what the rows pass needs.
type region struct {
	graph.StripeRegion
	g      *subgraph
	in     map[int]bool
	win    map[int][2]window   // conv-like operators and pools: height, width
	pad    map[int][4][2]int32 // PAD/PADV2/MIRROR_PAD: the paddings
	mirror map[int]int32       // MIRROR_PAD: TFLM's offset (1 REFLECT, 0 SYMMETRIC)
}

// check validates r's operators and tensors (not its Rows) against
// docs/stripes.md, "Region".
func check(g *subgraph, r graph.StripeRegion) (*region, error) {
	sg := &g.m.Subgraphs[g.s]
	reg := &region{StripeRegion: r, g: g, in: map[int]bool{}, win: map[int][2]window{}, pad: map[int][4][2]int32{}, mirror: map[int]int32{}}
	if len(r.Ops) == 0 {
		return nil, fmt.Errorf("no operators")
	}
	for n, i := range r.Ops {
		if i < 0 || i >= len(sg.Ops) {
			return nil, fmt.Errorf("operator %d out of range (subgraph %d has %d)", i, g.s, len(sg.Ops))
		}
		if n > 0 && i <= r.Ops[n-1] {
			return nil, fmt.Errorf("operators not ascending and distinct at operator %d", i)
		}
		reg.in[i] = true
	}
	for _, t := range []graph.TensorID{r.Input, r.Output} {
		if t < 0 || int(t) >= len(sg.Tensors) {
			return nil, fmt.Errorf("tensor %d out of range (subgraph %d has %d)", t, g.s, len(sg.Tensors))
		}
		if err := nhwc(g.tensor(t)); err != nil {
			return nil, fmt.Errorf("%s: %v", g.tensorName(t), err)
		}
	}
	if h := r.HaloKind(); h != graph.HaloRecompute && h != graph.HaloCache {
		return nil, fmt.Errorf("halo %q is neither %q nor %q", r.Halo, graph.HaloRecompute, graph.HaloCache)
	}
	x, y := r.Input, r.Output
	if x == y {
		return nil, fmt.Errorf("input and output are the same %s", g.tensorName(x))
	}
	if g.constant(x) {
		return nil, fmt.Errorf("input %s is a constant", g.tensorName(x))
	}
	if p := g.producer[x]; p >= 0 && reg.in[p] {
		return nil, fmt.Errorf("input %s is written by %s of the region", g.tensorName(x), g.opName(p))
	}
	if p := g.producer[y]; p < 0 || !reg.in[p] {
		return nil, fmt.Errorf("output %s is not written by an operator of the region", g.tensorName(y))
	} else if last := r.Ops[len(r.Ops)-1]; p != last {
		return nil, fmt.Errorf("output %s is written by %s, not by the region's last operator %d", g.tensorName(y), g.opName(p), last)
	}
	for _, w := range g.writers[y] {
		if reg.in[w] && w != r.Ops[len(r.Ops)-1] {
			// Its stripes would be joined into Y twice.
			return nil, fmt.Errorf("output %s is also written by %s of the region; only the region's last operator may write it", g.tensorName(y), g.opName(w))
		}
	}
	for _, w := range g.writers[x] {
		if w > r.Ops[0] && w < r.Ops[len(r.Ops)-1] && !reg.in[w] {
			// The stripes run where the region's last operator ran:
			// they would read the value written here.
			return nil, fmt.Errorf("input %s is written again by %s, between the region's operators", g.tensorName(x), g.opName(w))
		}
	}
	if g.tensor(y).IsVariable {
		return nil, fmt.Errorf("output %s is a variable", g.tensorName(y))
	}
	readsX := false
	for _, i := range r.Ops {
		if err := reg.checkOp(i); err != nil {
			return nil, fmt.Errorf("%s: %v", g.opName(i), err)
		}
		for _, t := range g.op(i).Inputs {
			readsX = readsX || t == x
		}
	}
	if !readsX {
		return nil, fmt.Errorf("no operator of the region reads input %s", g.tensorName(x))
	}
	return reg, nil
}

// nhwc checks that t is a rank-4 tensor of batch 1.
func nhwc(t *graph.Tensor) error {
	if len(t.Shape) != 4 || t.Shape[0] != 1 {
		return fmt.Errorf("shape %v is not NHWC of batch 1", t.Shape)
	}
	if t.Shape[1] < 1 || t.Shape[2] < 1 || t.Shape[3] < 1 {
		return fmt.Errorf("shape %v has an empty dimension", t.Shape)
	}
	return nil
}

func (reg *region) checkOp(i int) error {
	g := reg.g
	op := g.op(i)
	k := kindOf(op.Code)
	if k == notRowLocal {
		return fmt.Errorf("not a row-local operator")
	}
	if len(op.Outputs) != 1 || op.Outputs[0] < 0 {
		return fmt.Errorf("has %d outputs, not 1", len(op.Outputs))
	}
	o := op.Outputs[0]
	if err := nhwc(g.tensor(o)); err != nil {
		return fmt.Errorf("output %s: %v", g.tensorName(o), err)
	}
	if o != reg.Output {
		if g.io[o] || g.tensor(o).IsVariable {
			return fmt.Errorf("output %s is a subgraph input, output or variable", g.tensorName(o))
		}
		for _, c := range g.consumers[o] {
			if !reg.in[c] {
				return fmt.Errorf("output %s is used outside the region, by %s", g.tensorName(o), g.opName(c))
			}
		}
		if len(g.consumers[o]) == 0 {
			return fmt.Errorf("output %s is read by no operator", g.tensorName(o))
		}
		// The rewrite leaves an intermediate unused, of height 0
		// when emitted: no operator outside the region may write it.
		for _, w := range g.writers[o] {
			if !reg.in[w] {
				return fmt.Errorf("output %s is also written outside the region, by %s", g.tensorName(o), g.opName(w))
			}
		}
	}
	if len(op.Intermediates) > 0 {
		return fmt.Errorf("has intermediate tensors")
	}
	if len(op.Inputs) == 0 || op.Inputs[0] == graph.NoTensor || g.constant(op.Inputs[0]) {
		return fmt.Errorf("its first input is not a tensor computed at run time")
	}
	for a, t := range op.Inputs {
		if t == graph.NoTensor || g.constant(t) {
			continue
		}
		if a > 0 && k != elementwiseOp {
			return fmt.Errorf("input %d %s is not constant", a, g.tensorName(t))
		}
		if p := g.producer[t]; t != reg.Input && (p < 0 || !reg.in[p]) {
			return fmt.Errorf("input %s is neither the region's input nor written in the region", g.tensorName(t))
		} else if t != reg.Input && p >= i {
			// The operator reads the value t had before the region
			// writes it (t written twice, or by this operator over
			// itself): a value from outside the region, not its input.
			return fmt.Errorf("input %s is read before %s of the region writes it", g.tensorName(t), g.opName(p))
		}
		if err := nhwc(g.tensor(t)); err != nil {
			return fmt.Errorf("input %s: %v", g.tensorName(t), err)
		}
	}
	for _, t := range append([]graph.TensorID{o}, op.Inputs...) {
		if t == graph.NoTensor || g.constant(t) {
			continue
		}
		if ts := g.tensor(t); !sliceable[ts.Type] {
			return fmt.Errorf("%s is %s, a type TFLM's STRIDED_SLICE, PAD and CONCATENATION do not all take", g.tensorName(t), ts.Type)
		}
	}
	in := g.tensor(op.Inputs[0])
	out := g.tensor(o)
	switch k {
	case convLike, pool:
		h, w, err := windows(g.m, g.s, op)
		if err != nil {
			return err
		}
		// A pool's padding must be 0 in all: a SAME pool whose window
		// overhangs the last row (total 1, leading 0) would be padded
		// again by TFLM over a stripe's rows, and explicit padding would
		// change an average's count or a max.
		if th, tw := h.trailing(in.Shape[1], out.Shape[1]), w.trailing(in.Shape[2], out.Shape[2]); k == pool && (h.pad != 0 || w.pad != 0 || th != 0 || tw != 0) {
			return fmt.Errorf("TFLM pads it by %d+%d rows and %d+%d columns (a pool is striped only without padding)", h.pad, th, w.pad, tw)
		}
		reg.win[i] = [2]window{h, w}
	case pad:
		if len(op.Inputs) < 2 || op.Inputs[1] == graph.NoTensor || !g.constant(op.Inputs[1]) {
			return fmt.Errorf("its paddings are not constant")
		}
		p, err := paddings(g, op.Inputs[1])
		if err != nil {
			return err
		}
		if p[0] != [2]int32{0, 0} {
			return fmt.Errorf("pads the batch")
		}
		for d := 0; d < 4; d++ {
			if p[d][0] < 0 || p[d][1] < 0 || in.Shape[d]+p[d][0]+p[d][1] != out.Shape[d] {
				return fmt.Errorf("paddings %v do not take %v to %v", p, in.Shape, out.Shape)
			}
		}
		if op.Code == opPadV2 && len(op.Inputs) > 2 && op.Inputs[2] != graph.NoTensor && !g.constant(op.Inputs[2]) {
			return fmt.Errorf("its constant value is not constant")
		}
		if op.Code == opMirrorPad {
			// TFLM mirrors rows at most dim - offset deep; deeper, its
			// GetInputDimension clamps or reads out of range
			// (kernels/mirror_pad.cc @90b983c).
			off := mirrorOffset(op)
			for d := 1; d < 4; d++ {
				if max(p[d][0], p[d][1]) > in.Shape[d]-off {
					return fmt.Errorf("paddings %v mirror more than %d of dimension %d's %d", p, in.Shape[d]-off, d, in.Shape[d])
				}
			}
			reg.mirror[i] = off
		}
		reg.pad[i] = p
	case elementwiseOp:
		for a, t := range op.Inputs {
			if t == graph.NoTensor {
				continue
			}
			ts := g.tensor(t)
			if !g.constant(t) {
				if !sameShape(ts.Shape, out.Shape) {
					return fmt.Errorf("input %d %s has shape %v, not the output's %v", a, g.tensorName(t), ts.Shape, out.Shape)
				}
				continue
			}
			if n := len(ts.Shape); n > 4 || n >= 3 && ts.Shape[n-3] != 1 {
				return fmt.Errorf("constant input %d %s of shape %v varies along the rows", a, g.tensorName(t), ts.Shape)
			}
		}
	}
	return nil
}

func sameShape(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// paddings reads a constant INT32 or INT64 [4,2] paddings tensor.
func paddings(g *subgraph, t graph.TensorID) ([4][2]int32, error) {
	var p [4][2]int32
	ts := g.tensor(t)
	data := g.m.Buffers[ts.Buffer].Data
	if !sameShape(ts.Shape, []int32{4, 2}) {
		return p, fmt.Errorf("paddings %s have shape %v, not [4 2]", g.tensorName(t), ts.Shape)
	}
	size := map[graph.ElementType]int{graph.Int32: 4, graph.Int64: 8}[ts.Type]
	if size == 0 || len(data) < 8*size {
		return p, fmt.Errorf("paddings %s are %s with %d bytes, not INT32 or INT64 [4 2]", g.tensorName(t), ts.Type, len(data))
	}
	for d := 0; d < 4; d++ {
		for e := 0; e < 2; e++ {
			off := (2*d + e) * size
			var v int64
			if size == 4 {
				v = int64(int32(binary.LittleEndian.Uint32(data[off:])))
			} else {
				v = int64(binary.LittleEndian.Uint64(data[off:]))
			}
			if v < -1<<30 || v > 1<<30 {
				return p, fmt.Errorf("paddings %s hold %d", g.tensorName(t), v)
			}
			p[d][e] = int32(v)
		}
	}
	return p, nil
}

// stripePad returns the height paddings (top, bottom) of the copy of
// PAD, PADV2 or MIRROR_PAD operator i computing rows q of its output: the
// rows of q above and below the input's (docs/stripes.md).
func (reg *region) stripePad(i int, q span) (int32, int32) {
	top, hin := reg.pad[i][1][0], reg.g.tensor(reg.g.op(i).Inputs[0]).Shape[1]
	return max(0, min(q.b, top)-q.a), max(0, q.b-max(q.a, top+hin))
}

// checkRows validates a region's Rows against its output.
func (reg *region) checkRows() error {
	k := len(reg.Rows)
	if k < 2 || k > MaxStripes {
		err := fmt.Errorf("%d stripes, not between 2 and %d", k, MaxStripes)
		if k > MaxStripes {
			// g = ceil(k/10) groups would pass more inputs to the last
			// CONCATENATION than TFLM takes.
			err = fmt.Errorf("%v: TFLM's CONCATENATION takes at most %d inputs, so the stripes are joined in at most %d groups of at most %d", err, maxConcatInputs, maxConcatInputs, maxConcatInputs)
		}
		return err
	}
	h := reg.g.tensor(reg.Output).Shape[1]
	next := int32(0)
	for j, r := range reg.Rows {
		if r[0] != next || r[1] <= r[0] {
			return fmt.Errorf("stripe %d has rows [%d,%d): the stripes must cover output %s's %d rows once, in order, each non-empty", j, r[0], r[1], reg.g.tensorName(reg.Output), h)
		}
		next = r[1]
	}
	if next != h {
		return fmt.Errorf("the stripes end at row %d, not at output %s's height %d", next, reg.g.tensorName(reg.Output), h)
	}
	return nil
}

// Apply returns a new model in which each region runs stripe by stripe
// (docs/stripes.md); m is not changed. regions[i].MACs and ExtraMACs are
// filled by Apply; the result's Stripes lists the regions in the order
// given. An invalid region is an error naming the operator or tensor and
// what is wrong.
func Apply(m *graph.Model, regions []graph.StripeRegion) (*graph.Model, error) {
	if m == nil {
		return nil, fmt.Errorf("stripe: nil model")
	}
	if len(m.Stripes) > 0 {
		return nil, fmt.Errorf("stripe: the model is already a stripe rewrite (%d regions)", len(m.Stripes))
	}
	out := *m
	out.Subgraphs = append([]graph.Subgraph(nil), m.Subgraphs...)
	out.Buffers = append([]graph.Buffer(nil), m.Buffers...)
	out.Stripes = nil
	infos := map[graph.SubgraphIndex]*subgraph{}
	owner := map[graph.OpRef]int{}
	regs := make([]*region, len(regions))
	for n, r := range regions {
		if r.Subgraph < 0 || int(r.Subgraph) >= len(m.Subgraphs) {
			return nil, fmt.Errorf("stripe: region %d: subgraph %d out of range", n, r.Subgraph)
		}
		g := infos[r.Subgraph]
		if g == nil {
			g = analyze(m, r.Subgraph)
			infos[r.Subgraph] = g
			sg := &out.Subgraphs[r.Subgraph]
			sg.Tensors = append([]graph.Tensor(nil), sg.Tensors...)
		}
		r.Ops = append([]int(nil), r.Ops...)
		r.Rows = append([][2]int32(nil), r.Rows...)
		reg, err := check(g, r)
		if err == nil {
			err = reg.checkRows()
		}
		if err != nil {
			return nil, fmt.Errorf("stripe: region %d (subgraph %d, %d -> %d): %v", n, r.Subgraph, r.Input, r.Output, err)
		}
		for _, i := range r.Ops {
			ref := graph.OpRef{Subgraph: r.Subgraph, Op: graph.OpIndex(i)}
			if o, ok := owner[ref]; ok {
				return nil, fmt.Errorf("stripe: region %d: %s is also in region %d", n, g.opName(i), o)
			}
			owner[ref] = n
		}
		regs[n] = reg
	}
	// Build every region's operators (tensors and buffers appended in
	// region order), then each touched subgraph's operator list.
	built := make([][]graph.Op, len(regs))
	for n, reg := range regs {
		b := &builder{out: &out, s: reg.Subgraph, g: reg.g}
		ops, err := b.region(reg)
		if err != nil {
			return nil, fmt.Errorf("stripe: region %d (subgraph %d, %d -> %d): %v", n, reg.Subgraph, reg.Input, reg.Output, err)
		}
		built[n] = ops
		reg.empty(&out)
		out.Stripes = append(out.Stripes, reg.StripeRegion)
		regions[n].MACs, regions[n].ExtraMACs = reg.MACs, reg.ExtraMACs
	}
	subs := make([]graph.SubgraphIndex, 0, len(infos))
	for s := range infos {
		subs = append(subs, s)
	}
	sort.Slice(subs, func(a, b int) bool { return subs[a] < subs[b] })
	for _, s := range subs {
		old := m.Subgraphs[s].Ops
		var ops []graph.Op
		for i := range old {
			n, ok := owner[graph.OpRef{Subgraph: s, Op: graph.OpIndex(i)}]
			if !ok {
				ops = append(ops, old[i])
				continue
			}
			if last := regs[n].Ops[len(regs[n].Ops)-1]; i == last {
				ops = append(ops, built[n]...)
			}
		}
		out.Subgraphs[s].Ops = ops
	}
	return &out, nil
}

// empty gives the region's intermediate tensors (the outputs of its
// operators but Y), which no operator reads or writes any more, 0 rows:
// shape [1, 0, W, C], 0 bytes. TFLM allocates every tensor of non-zero
// size that no operator uses, all of them over the same lifetime (-1, -1)
// so that they overlap in time and are stacked (micro_allocation_info.cc
// lines 200-205, greedy_memory_planner.cc DoesEntryOverlapInTime @90b983c),
// and skips one of 0 bytes (needs_allocating requires bytes != 0).
func (reg *region) empty(out *graph.Model) {
	ts := out.Subgraphs[reg.Subgraph].Tensors
	for _, i := range reg.Ops {
		o := reg.g.op(i).Outputs[0]
		if o == reg.Output {
			continue
		}
		t := &ts[o]
		t.Shape = []int32{1, 0, t.Shape[2], t.Shape[3]}
		t.Size = 0
	}
}

// EvenRows splits h rows into k stripes as evenly as possible, the first
// ones larger: stripe j has h/k rows, plus one when j < h%k. It returns
// nil when k < 1 or k > h.
func EvenRows(h int32, k int) [][2]int32 {
	if k < 1 || int64(k) > int64(h) {
		return nil
	}
	rows := make([][2]int32, k)
	base, extra := h/int32(k), h%int32(k)
	start := int32(0)
	for j := range rows {
		n := base
		if int32(j) < extra {
			n++
		}
		rows[j] = [2]int32{start, start + n}
		start += n
	}
	return rows
}

// groups returns the groups of consecutive stripes a region of k stripes
// joins before its output (docs/stripes.md, "More than 10 stripes:
// groups"): for k above maxConcatInputs, g = ceil(k/10) groups whose
// sizes split k as EvenRows splits rows (the first k mod g one stripe
// larger), each as the stripes [j0, j1) it joins; nil for k of at most
// 10, whose stripes one CONCATENATION joins.
func groups(k int) [][2]int {
	if k <= maxConcatInputs {
		return nil
	}
	g := (k + maxConcatInputs - 1) / maxConcatInputs
	split := EvenRows(int32(k), g)
	out := make([][2]int, len(split))
	for n, s := range split {
		out[n] = [2]int{int(s[0]), int(s[1])}
	}
	return out
}
