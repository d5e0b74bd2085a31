package verify

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/heliac/heliac/graph"
)

// A plan made for a model rewritten stripe by stripe (--patches,
// docs/stripes.md) records the rewrite in its stripes list. The verifier
// does not trust the rewrite: from the original model and that record it
// builds the rewritten model with its own code, following the canonical
// construction of docs/stripes.md, checks the record against the
// original (a valid region, rows that cover the output once, MACs), and
// verifies the plan against what it built. Rewrite compares a rewritten
// model with that rebuild, operator by operator. Nothing here is shared
// with package stripe.

// maxStripes is the most stripes a region may have (docs/stripes.md,
// "What may be striped"). More than maxConcatInputs are joined in groups
// (stripegroups.go).
const maxStripes = 100

// Builtin operator codes the rebuild uses or recognises
// (tensorflow/lite/schema/schema.fbs, BuiltinOperator).
const (
	opAdd           graph.Opcode = 0
	opConcatenation graph.Opcode = 2
	opPad           graph.Opcode = 34
	opStridedSlice  graph.Opcode = 45
	opPadV2         graph.Opcode = 60
	opMirrorPad     graph.Opcode = 100
)

// elementwise lists the operators with one row mapping whose every
// non-constant operand has the output's shape: output row r reads row r
// of each.
var elementwise = map[string]bool{
	"ADD": true, "SUB": true, "MUL": true, "RELU": true, "RELU6": true, "RELU_N1_TO_1": true, "RELU_0_TO_1": true,
	"LEAKY_RELU": true, "HARD_SWISH": true, "LOGISTIC": true, "TANH": true, "QUANTIZE": true, "DEQUANTIZE": true,
	"ABS": true, "NEG": true, "MAXIMUM": true, "MINIMUM": true, "SQUARED_DIFFERENCE": true, "ELU": true, "FLOOR": true,
	"CEIL": true, "ROUND": true,
}

// stripeRec is one stripes entry of plan.json.
type stripeRec struct {
	path          string
	subgraph      graph.SubgraphIndex
	input, output graph.TensorID
	ops           []graph.OpIndex
	k             int64
	rows          [][2]int64
	halo          graph.Halo // HaloRecompute or HaloCache (absent: HaloRecompute)
	macs, extra   int64
}

// decodeStripe reads one stripes entry.
func decodeStripe(o *object) stripeRec {
	s := stripeRec{path: o.path, subgraph: graph.SubgraphIndex(o.index("subgraph")), k: o.int("k"),
		macs: o.int("macs"), extra: o.int("extra_macs")}
	id := func(key string) graph.TensorID {
		text := o.str(key)
		ref, ok := parseID(text)
		if *o.ok && (!ok || ref.Subgraph != s.subgraph) {
			o.r.add(Malformed, "%s: %q is not a tensor id of subgraph %d", o.at(key), text, s.subgraph)
			*o.ok = false
		}
		return ref.Tensor
	}
	s.input, s.output = id("input"), id("output")
	s.halo = decodeHalo(o)
	for i, v := range o.list("operators") {
		text, isStr := v.(string)
		ref, ok := parseID(text)
		if !isStr || !ok || ref.Subgraph != s.subgraph {
			o.r.add(Malformed, "%s.operators[%d]: %s is not an operator id of subgraph %d", o.path, i, jsonType(v), s.subgraph)
			*o.ok = false
			continue
		}
		s.ops = append(s.ops, graph.OpIndex(ref.Tensor))
	}
	for i, v := range o.list("rows") {
		pair, isList := v.([]any)
		var r [2]int64
		ok := isList && len(pair) == 2
		for j := 0; ok && j < 2; j++ {
			n, isNum := pair[j].(interface{ Int64() (int64, error) })
			var err error
			if ok = isNum; ok {
				r[j], err = n.Int64()
				ok = err == nil
			}
		}
		if !ok {
			o.r.add(Malformed, "%s.rows[%d]: %s, want [start, end]", o.path, i, jsonType(v))
			*o.ok = false
			continue
		}
		s.rows = append(s.rows, r)
	}
	return s
}

// decodeHalo reads a stripes entry's halo: "recompute" or "cache";
// absent (plans written before the key existed) means recompute
// (docs/plan-format.md). Any other value is Malformed.
func decodeHalo(o *object) graph.Halo {
	text := o.optStr("halo")
	if text == nil {
		return graph.HaloRecompute
	}
	switch h := graph.Halo(*text); h {
	case graph.HaloRecompute, graph.HaloCache:
		return h
	}
	o.r.add(Malformed, "%s: %q is not a halo; want %q or %q (or no key, meaning %q)", o.at("halo"), *text,
		graph.HaloRecompute, graph.HaloCache, graph.HaloRecompute)
	*o.ok = false
	return graph.HaloRecompute
}

// rebuildModel returns the model the plan was made for: m itself when
// the plan records no stripes, else m rewritten by the verifier's own
// rebuild of the record (nil, with the violations, when the record is
// not a valid rewrite of m). A model that is itself already rewritten
// (its Stripes set) is refused: the verifier rebuilds from the original.
func rebuildModel(m *graph.Model, doc *planDoc) (*graph.Model, []Violation) {
	if len(doc.stripes) == 0 {
		if len(m.Stripes) > 0 {
			return nil, report{{Malformed, "the model is a stripe rewrite (it has stripes), but plan.json records none; " +
				"give the verifier the original model and a plan with its stripes"}}
		}
		return m, nil
	}
	if len(m.Stripes) > 0 {
		return nil, report{{Malformed, "the model given is already a stripe rewrite; the verifier rebuilds it from the original model " +
			"(the one whose sha256 plan.json names) and the stripes record"}}
	}
	b := &rebuilder{orig: m}
	out := b.build(doc.stripes)
	if len(b.r) > 0 {
		return nil, b.r
	}
	return out, nil
}

// rebuilder builds a rewritten model from the original and a stripes
// record, reporting each way the record is not a valid rewrite.
type rebuilder struct {
	orig *graph.Model
	out  *graph.Model
	r    report
}

// rowRange is a range of rows [lo, hi).
type rowRange struct{ lo, hi int64 }

func (a rowRange) hull(b rowRange) rowRange { return rowRange{min(a.lo, b.lo), max(a.hi, b.hi)} }

// geom is what one operator of a region does to rows: for a window
// operator its stride, dilated window height and TFLM's top padding, with
// the width paddings a conv-like copy's PAD adds; for PAD its top padding.
type geom struct {
	window             bool
	stride, kh, top    int64
	left, right        int64
	padTop             int64
	convLike, isPad    bool
	padPaddings, padIn graph.TensorID // PAD/PADV2/MIRROR_PAD: its paddings tensor and input
	mirror             bool           // MIRROR_PAD
	mirrorOff          int64          // MIRROR_PAD: 1 REFLECT, 0 SYMMETRIC (TFLM's offset)
}

// region is one record being rebuilt, with the original subgraph's
// indexes.
type region struct {
	rec   *stripeRec
	sg    *graph.Subgraph
	inR   map[graph.OpIndex]bool
	geoms map[graph.OpIndex]*geom
}

// build applies every record in order and returns the rewritten model.
func (b *rebuilder) build(recs []stripeRec) *graph.Model {
	out := *b.orig
	out.Subgraphs = slices.Clone(b.orig.Subgraphs)
	out.Buffers = slices.Clone(b.orig.Buffers)
	out.Stripes = nil
	b.out = &out
	cloned := map[graph.SubgraphIndex]bool{}
	replace := map[graph.SubgraphIndex]map[graph.OpIndex][]graph.Op{}
	removed := map[graph.SubgraphIndex]map[graph.OpIndex]bool{}
	for i := range recs {
		rec := &recs[i]
		s := rec.subgraph
		if int(s) >= len(b.orig.Subgraphs) {
			b.r.add(BadStripes, "%s: subgraph %d does not exist", rec.path, s)
			continue
		}
		if !cloned[s] {
			out.Subgraphs[s].Tensors = slices.Clone(b.orig.Subgraphs[s].Tensors)
			cloned[s] = true
			replace[s] = map[graph.OpIndex][]graph.Op{}
			removed[s] = map[graph.OpIndex]bool{}
		}
		for _, op := range rec.ops {
			if removed[s][op] {
				b.r.add(BadStripes, "%s: op %d:%d is in two regions", rec.path, s, op)
				return nil
			}
		}
		rg := b.checkRegion(rec)
		if rg == nil {
			continue
		}
		ops := b.stripeOps(rg)
		if ops == nil {
			continue
		}
		for _, op := range rec.ops {
			removed[s][op] = true
			zeroRows(&out.Subgraphs[s], b.orig.Subgraphs[s].Ops[op].Outputs, rec.output)
		}
		replace[s][rec.ops[len(rec.ops)-1]] = ops
		out.Stripes = append(out.Stripes, graph.StripeRegion{Subgraph: s, Input: rec.input, Output: rec.output,
			Ops: opInts(rec.ops), Rows: rows32(rec.rows), Halo: haloOf(rec), MACs: rec.macs, ExtraMACs: rec.extra})
	}
	if len(b.r) > 0 {
		return nil
	}
	for s := range replace {
		var ops []graph.Op
		for i, op := range b.orig.Subgraphs[s].Ops {
			if rep, ok := replace[s][graph.OpIndex(i)]; ok {
				ops = append(ops, rep...)
			} else if !removed[s][graph.OpIndex(i)] {
				ops = append(ops, op)
			}
		}
		out.Subgraphs[s].Ops = ops
	}
	return &out
}

// zeroRows gives a region's intermediate tensors (the outputs of its
// operators but Y, which no operator uses after the rewrite) 0 rows:
// shape [1, 0, W, C], 0 bytes, name, type, quantization, buffer and shape
// signature kept (docs/stripes.md: TFLM would allocate an unused tensor of
// non-zero size, micro_allocation_info.cc @90b983c).
func zeroRows(sg *graph.Subgraph, outs []graph.TensorID, y graph.TensorID) {
	for _, o := range outs {
		if o == y || o < 0 || int(o) >= len(sg.Tensors) || len(sg.Tensors[o].Shape) != 4 {
			continue
		}
		t := &sg.Tensors[o]
		t.Shape = []int32{t.Shape[0], 0, t.Shape[2], t.Shape[3]}
		t.Size = 0
	}
}

// haloOf is the record's halo: HaloCache, or HaloRecompute (also for a
// record that gives none).
func haloOf(rec *stripeRec) graph.Halo {
	if rec.halo == graph.HaloCache {
		return graph.HaloCache
	}
	return graph.HaloRecompute
}

func opInts(ops []graph.OpIndex) []int {
	out := make([]int, len(ops))
	for i, o := range ops {
		out[i] = int(o)
	}
	return out
}

func rows32(rows [][2]int64) [][2]int32 {
	out := make([][2]int32, len(rows))
	for i, r := range rows {
		out[i] = [2]int32{int32(r[0]), int32(r[1])}
	}
	return out
}

// tname formats a tensor of the original model as "s:t (name)".
func (b *rebuilder) tname(s graph.SubgraphIndex, t graph.TensorID) string {
	ts := b.orig.Subgraphs[s].Tensors
	if t < 0 || int(t) >= len(ts) {
		return fmt.Sprintf("%d:%d", s, t)
	}
	return fmt.Sprintf("%d:%d (%s)", s, t, escapeName(ts[t].Name))
}

// oname formats an operator of the original model as "op s:i (NAME)".
func (b *rebuilder) oname(s graph.SubgraphIndex, i graph.OpIndex) string {
	return fmt.Sprintf("op %d:%d (%s)", s, i, escapeName(b.orig.Subgraphs[s].Ops[i].Name()))
}

// constant reports whether t holds constant data.
func (b *rebuilder) constant(s graph.SubgraphIndex, t graph.TensorID) bool {
	return b.orig.HasData(&b.orig.Subgraphs[s].Tensors[t])
}

// nhwc reports whether a tensor is rank 4 with batch 1.
func nhwc(t *graph.Tensor) bool { return len(t.Shape) == 4 && t.Shape[0] == 1 }

// checkRegion checks that a record names a region of the original model
// that may be striped (docs/stripes.md, "Region"), its rows, k and MACs,
// and returns it, or nil after reporting why not.
func (b *rebuilder) checkRegion(rec *stripeRec) *region {
	s := rec.subgraph
	sg := &b.orig.Subgraphs[s]
	bad := func(format string, args ...any) *region {
		b.r.add(BadStripes, rec.path+": "+format, args...)
		return nil
	}
	nt := graph.TensorID(len(sg.Tensors))
	if rec.input < 0 || rec.input >= nt || rec.output < 0 || rec.output >= nt {
		return bad("input %d:%d or output %d:%d is not a tensor of the model", s, rec.input, s, rec.output)
	}
	X, Y := &sg.Tensors[rec.input], &sg.Tensors[rec.output]
	if !nhwc(X) || !nhwc(Y) {
		return bad("input %s %v and output %s %v must both be rank 4 with batch 1", b.tname(s, rec.input), X.Shape,
			b.tname(s, rec.output), Y.Shape)
	}
	if rec.input == rec.output || b.constant(s, rec.input) {
		return bad("input %s must be a non-constant tensor other than the output", b.tname(s, rec.input))
	}
	if len(rec.ops) == 0 {
		return bad("no operators")
	}
	for i, op := range rec.ops {
		if op < 0 || int(op) >= len(sg.Ops) {
			return bad("operator %d:%d does not exist", s, op)
		}
		if i > 0 && op <= rec.ops[i-1] {
			return bad("operators are not ascending: %d:%d after %d:%d", s, op, s, rec.ops[i-1])
		}
	}
	// Rows and k.
	k := int64(len(rec.rows))
	if rec.k != k {
		return bad("k is %d, but rows lists %d stripes", rec.k, k)
	}
	if k < 2 || k > maxStripes {
		return bad("k is %d; a region has 2 to %d stripes (more than %d are joined in groups of at most %d: TFLM's CONCATENATION "+
			"takes at most %d inputs)", k, maxStripes, maxConcatInputs, maxConcatInputs, maxConcatInputs)
	}
	h := int64(Y.Shape[1])
	next := int64(0)
	for j, r := range rec.rows {
		if r[0] != next || r[1] <= r[0] {
			return bad("rows[%d] is [%d,%d), but stripe %d must start at row %d and be non-empty: the stripes cover the %d rows of %s "+
				"exactly once, in order", j, r[0], r[1], j, next, h, b.tname(s, rec.output))
		}
		next = r[1]
	}
	if next != h {
		return bad("the stripes end at row %d, but %s has %d rows: the stripes cover it exactly once", next, b.tname(s, rec.output), h)
	}
	rg := &region{rec: rec, sg: sg, inR: map[graph.OpIndex]bool{}, geoms: map[graph.OpIndex]*geom{}}
	for _, op := range rec.ops {
		rg.inR[op] = true
	}
	producer := map[graph.TensorID]graph.OpIndex{}
	writers := map[graph.TensorID][]graph.OpIndex{}
	consumers := map[graph.TensorID][]graph.OpIndex{}
	for i := range sg.Ops {
		for _, t := range sg.Ops[i].Outputs {
			producer[t] = graph.OpIndex(i)
			writers[t] = append(writers[t], graph.OpIndex(i))
		}
		for _, t := range sg.Ops[i].Inputs {
			if t != graph.NoTensor {
				consumers[t] = append(consumers[t], graph.OpIndex(i))
			}
		}
	}
	boundary := map[graph.TensorID]bool{}
	for _, t := range sg.Inputs {
		boundary[t] = true
	}
	for _, t := range sg.Outputs {
		boundary[t] = true
	}
	readsX, writesY := false, false
	for _, oi := range rec.ops {
		op := &sg.Ops[oi]
		if len(op.Outputs) != 1 {
			return bad("%s has %d outputs; a region's operators have one", b.oname(s, oi), len(op.Outputs))
		}
		o := op.Outputs[0]
		if o == rec.output {
			writesY = true
		} else {
			ot := &sg.Tensors[o]
			if boundary[o] || ot.IsVariable {
				return bad("%s writes %s, a subgraph input/output or variable, which only the output may be", b.oname(s, oi), b.tname(s, o))
			}
			if len(consumers[o]) == 0 {
				return bad("%s writes %s, which no operator of the region reads", b.oname(s, oi), b.tname(s, o))
			}
			for _, c := range consumers[o] {
				if !rg.inR[c] {
					return bad("%s writes %s, which %s outside the region reads; only the output may be read outside",
						b.oname(s, oi), b.tname(s, o), b.oname(s, c))
				}
			}
			// The rewrite leaves the region's intermediates unused
			// (of height 0 when emitted): none may be written outside.
			for _, w := range writers[o] {
				if !rg.inR[w] {
					return bad("%s writes %s, which %s outside the region writes too; only the output may be",
						b.oname(s, oi), b.tname(s, o), b.oname(s, w))
				}
			}
		}
		if !nhwc(&sg.Tensors[o]) {
			return bad("%s writes %s of shape %v; every tensor of a region is rank 4 with batch 1", b.oname(s, oi), b.tname(s, o), sg.Tensors[o].Shape)
		}
		for _, in := range op.Inputs {
			if in == graph.NoTensor || b.constant(s, in) {
				continue
			}
			if in == rec.input {
				readsX = true
			} else if p, ok := producer[in]; !ok || !rg.inR[p] {
				return bad("%s reads %s, which is neither the input nor written by an operator of the region", b.oname(s, oi), b.tname(s, in))
			} else if p >= oi {
				return bad("%s reads %s before %s writes it", b.oname(s, oi), b.tname(s, in), b.oname(s, p))
			}
			if !nhwc(&sg.Tensors[in]) {
				return bad("%s reads %s of shape %v; every tensor of a region is rank 4 with batch 1", b.oname(s, oi), b.tname(s, in), sg.Tensors[in].Shape)
			}
		}
		if last := rec.ops[len(rec.ops)-1]; o == rec.output && oi != last {
			// Each copy of it would be a stripe of Y: the final
			// concatenation would join more than the k stripes.
			return bad("%s writes %s, the output, but only the region's last operator (%s) may", b.oname(s, oi),
				b.tname(s, o), b.oname(s, last))
		}
		g, why := b.geometry(s, op)
		if g == nil {
			return bad("%s is not row-local: %s", b.oname(s, oi), why)
		}
		rg.geoms[oi] = g
	}
	for _, w := range writers[rec.input] {
		if w > rec.ops[0] && w < rec.ops[len(rec.ops)-1] && !rg.inR[w] {
			return bad("%s writes %s, the input, between the region's operators, whose stripes run at the last", b.oname(s, w), b.tname(s, rec.input))
		}
	}
	if !readsX || !writesY {
		return bad("the operators do not read %s and write %s", b.tname(s, rec.input), b.tname(s, rec.output))
	}
	return rg
}

// outSize is TFLM's ComputeOutSize (tensorflow/lite/kernels/padding.h
// @90b983c): a window operator's output size along one dimension.
func outSize(same bool, in, k, stride int64) int64 {
	if stride <= 0 {
		return -1
	}
	if same {
		return (in + stride - 1) / stride
	}
	return (in + stride - k) / stride
}

// tflmPadding is TFLM's padding before the first row or column
// (ComputePaddingWithOffset, tensorflow/lite/kernels/padding.h @90b983c)
// and the total the window reaches past the input.
func tflmPadding(in, k, stride, out int64) (before, total int64) {
	total = max((out-1)*stride+k-in, 0)
	return total / 2, total
}

// geometry returns what op does to rows, or nil and why it is not
// row-local.
func (b *rebuilder) geometry(s graph.SubgraphIndex, op *graph.Op) (*geom, string) {
	sg := &b.orig.Subgraphs[s]
	name := op.Name()
	outT := &sg.Tensors[op.Outputs[0]]
	if (op.Code == graph.Conv2D || op.Code == graph.DepthwiseConv2D || op.Code == graph.AveragePool2D || op.Code == graph.MaxPool2D ||
		op.Code == opPad || op.Code == opPadV2 || op.Code == opMirrorPad) && (len(op.Inputs) == 0 || op.Inputs[0] == graph.NoTensor ||
		b.constant(s, op.Inputs[0]) || !nhwc(&sg.Tensors[op.Inputs[0]])) {
		return nil, "its first input is not a rank-4 tensor of batch 1 computed at run time"
	}
	switch {
	case op.Code == graph.Conv2D || op.Code == graph.DepthwiseConv2D || op.Code == graph.AveragePool2D || op.Code == graph.MaxPool2D:
		w := op.Window
		if w == nil || len(op.Inputs) == 0 || op.Inputs[0] == graph.NoTensor {
			return nil, "it has no window options or no input"
		}
		in := &sg.Tensors[op.Inputs[0]]
		var kh, kw int64
		if op.Code == graph.Conv2D || op.Code == graph.DepthwiseConv2D {
			if len(op.Inputs) < 2 || op.Inputs[1] == graph.NoTensor || !b.constant(s, op.Inputs[1]) || len(sg.Tensors[op.Inputs[1]].Shape) != 4 {
				return nil, "its filter is not a constant rank-4 tensor"
			}
			f := sg.Tensors[op.Inputs[1]].Shape
			kh, kw = int64(f[1]), int64(f[2])
		} else {
			kh, kw = int64(w.FilterH), int64(w.FilterW)
		}
		dh, dw := max(int64(w.DilationH), 1), max(int64(w.DilationW), 1)
		KH, KW := (kh-1)*dh+1, (kw-1)*dw+1
		sh, sw := int64(w.StrideH), int64(w.StrideW)
		same := w.Padding == graph.PaddingSame
		oh, ow := outSize(same, int64(in.Shape[1]), KH, sh), outSize(same, int64(in.Shape[2]), KW, sw)
		if oh != int64(outT.Shape[1]) || ow != int64(outT.Shape[2]) || oh <= 0 || ow <= 0 {
			return nil, fmt.Sprintf("its output is %dx%d, but TFLM computes %dx%d from its input", outT.Shape[1], outT.Shape[2], oh, ow)
		}
		top, totalH := tflmPadding(int64(in.Shape[1]), KH, sh, oh)
		left, totalW := tflmPadding(int64(in.Shape[2]), KW, sw, ow)
		g := &geom{window: true, stride: sh, kh: KH, top: top, left: left, right: max(0, totalW-left)}
		if op.Code == graph.Conv2D || op.Code == graph.DepthwiseConv2D {
			g.convLike = true
		} else if totalH != 0 || totalW != 0 {
			// Not only the leading padding: a SAME pool whose window
			// overhangs the last row (total 1, leading 0) would be
			// padded again by TFLM on a stripe's rows.
			return nil, "a pool whose TFLM padding is not 0 (explicit padding would change its result)"
		}
		return g, ""
	case op.Code == opPad || op.Code == opPadV2 || op.Code == opMirrorPad:
		if len(op.Inputs) < 2 || op.Inputs[1] == graph.NoTensor || !b.constant(s, op.Inputs[1]) {
			return nil, "its paddings are not constant"
		}
		if op.Code == opPadV2 && len(op.Inputs) > 2 && op.Inputs[2] != graph.NoTensor && !b.constant(s, op.Inputs[2]) {
			return nil, "its padding value is not constant"
		}
		p, ok := b.paddings(s, op.Inputs[1])
		if !ok {
			return nil, "its paddings are not a [4,2] INT32 or INT64 tensor"
		}
		if p[0] != 0 || p[1] != 0 {
			return nil, "it pads the batch"
		}
		g := &geom{isPad: true, padTop: p[2], padPaddings: op.Inputs[1], padIn: op.Inputs[0]}
		if op.Code == opMirrorPad {
			// TFLM's offset: 1 only for a MirrorPadOptions table whose mode
			// is REFLECT (0); no table leaves the mode unknown, which its
			// kernel runs as SYMMETRIC (flatbuffer_conversions.cc
			// ParseMirrorPad, kernels/mirror_pad.cc MirrorPadPrepare
			// @90b983c).
			g.mirror = true
			if o := op.Options; o != nil && o.Table == "MirrorPadOptions" {
				g.mirrorOff = 1
				for _, f := range o.Fields {
					if f.Name == "mode" && f.Int != 0 {
						g.mirrorOff = 0
					}
				}
			}
			in := &sg.Tensors[op.Inputs[0]]
			for d := 1; d < 4; d++ {
				if max(p[2*d], p[2*d+1]) > int64(in.Shape[d])-g.mirrorOff {
					return nil, fmt.Sprintf("its paddings %v mirror deeper than dimension %d of its input allows", p, d)
				}
			}
		}
		return g, ""
	case elementwise[name]:
		for _, in := range op.Inputs {
			if in == graph.NoTensor {
				continue
			}
			t := &sg.Tensors[in]
			if b.constant(s, in) {
				if len(t.Shape) >= 3 && t.Shape[len(t.Shape)-3] != 1 {
					return nil, fmt.Sprintf("its constant operand %s varies along the rows", b.tname(s, in))
				}
				continue
			}
			if !slices.Equal(t.Shape, outT.Shape) {
				return nil, fmt.Sprintf("its operand %s has shape %v, not the output's %v", b.tname(s, in), t.Shape, outT.Shape)
			}
		}
		return &geom{}, ""
	}
	return nil, name + " is not an operator a region may hold"
}

// paddings reads a constant [4,2] INT32 or INT64 paddings tensor.
func (b *rebuilder) paddings(s graph.SubgraphIndex, t graph.TensorID) ([]int64, bool) {
	pt := &b.orig.Subgraphs[s].Tensors[t]
	if !slices.Equal(pt.Shape, []int32{4, 2}) {
		return nil, false
	}
	data := b.orig.Buffers[pt.Buffer].Data
	out := make([]int64, 8)
	switch {
	case pt.Type == graph.Int32 && len(data) == 32:
		for i := range out {
			out[i] = int64(int32(binary.LittleEndian.Uint32(data[4*i:])))
		}
	case pt.Type == graph.Int64 && len(data) == 64:
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
		}
	default:
		return nil, false
	}
	return out, true
}

// inRows returns the rows of an input an operator reads to compute the
// output rows p: unclipped, as the window reaches.
func (g *geom) inRows(p rowRange) rowRange {
	switch {
	case g.window:
		return rowRange{p.lo*g.stride - g.top, (p.hi-1)*g.stride - g.top + g.kh}
	case g.isPad:
		return rowRange{p.lo - g.padTop, p.hi - g.padTop}
	}
	return p
}

// operand is what one stripe of an operator reads of one input.
type operand struct {
	u, c rowRange // unclipped and clipped rows
}

// stripeOps builds the operators of every stripe of a region and the
// CONCATENATION into Y (with more than 10 stripes, each group's and then
// the groups': stripegroups.go), appending their new tensors and buffers to the output
// model; nil after reporting when a stripe reads no row of a tensor or the
// MACs differ. A region whose halo is cached is built by cachedOps.
func (b *rebuilder) stripeOps(rg *region) []graph.Op {
	if rg.rec.halo == graph.HaloCache {
		return b.cachedOps(rg)
	}
	rec := rg.rec
	s := rec.subgraph
	sg := &b.out.Subgraphs[s]
	orig := rg.sg
	var ops []graph.Op
	join := b.newJoiner(rg, sg)
	var copyMACs int64
	for j, rows := range rec.rows {
		need := map[graph.TensorID]rowRange{rec.output: {rows[0], rows[1]}}
		reads := map[graph.OpIndex][]operand{}
		for i := len(rec.ops) - 1; i >= 0; i-- {
			oi := rec.ops[i]
			rd, ok := b.operandRows(rg, j, oi, need[orig.Ops[oi].Outputs[0]], need)
			if !ok {
				return nil
			}
			reads[oi] = rd
		}
		have := map[graph.TensorID]graph.TensorID{rec.input: rec.input}
		need[rec.input] = rowRange{0, int64(orig.Tensors[rec.input].Shape[1])}
		for _, oi := range rec.ops {
			o := orig.Ops[oi].Outputs[0]
			p := need[o]
			cp := b.copyOp(rg, j, oi, p, have, need, reads[oi], &ops)
			nt := b.newTensor(sg, stripeName(&orig.Tensors[o], j), &orig.Tensors[o], p.hi-p.lo)
			cp.Outputs = []graph.TensorID{nt}
			have[o] = nt
			ops = append(ops, cp)
			copyMACs += opMACs(sg, &cp, p.hi-p.lo)
			if o == rec.output {
				join.add(nt)
			}
		}
		join.endStripe(j, &ops)
	}
	if !b.checkMACs(rg, copyMACs) {
		return nil
	}
	return append(ops, join.final())
}

// stripeName is the name of stripe j's tensor of t: "<t>/stripe<j>".
func stripeName(t *graph.Tensor, j int) string { return t.Name + "/stripe" + strconv.Itoa(j) }

// operandRows returns what operator oi reads of each of its inputs
// computed at run time (zero for the others) to compute rows p of its
// output in stripe j, and widens need, each tensor's rows in the stripe,
// to cover them (the hull over a tensor's consumers); false after
// reporting a stripe that reads no row of an input (wholly in padding) or
// whose MIRROR_PAD copy would mirror more rows than its slice holds.
func (b *rebuilder) operandRows(rg *region, j int, oi graph.OpIndex, p rowRange, need map[graph.TensorID]rowRange) ([]operand, bool) {
	rec := rg.rec
	s := rec.subgraph
	orig := rg.sg
	rows := rec.rows[j]
	op := &orig.Ops[oi]
	rd := make([]operand, len(op.Inputs))
	for n, in := range op.Inputs {
		if in == graph.NoTensor || b.constant(s, in) {
			continue
		}
		u := rg.geoms[oi].inRows(p)
		c := rowRange{max(u.lo, 0), min(u.hi, int64(orig.Tensors[in].Shape[1]))}
		if c.hi <= c.lo {
			b.r.add(BadStripes, "%s: stripe %d (rows [%d,%d) of %s) reads no row of %s through %s; no stripe may lie wholly in padding",
				rec.path, j, rows[0], rows[1], b.tname(s, rec.output), b.tname(s, in), b.oname(s, oi))
			return nil, false
		}
		if g := rg.geoms[oi]; g.mirror {
			// The stripe's MIRROR_PAD mirrors its slice's own rows:
			// each of its height paddings within slice - offset.
			hin := int64(orig.Tensors[in].Shape[1])
			top, bottom := max(0, min(p.hi, g.padTop)-p.lo), max(0, p.hi-max(p.lo, g.padTop+hin))
			if h := c.hi - c.lo; top > 0 && h < top+g.mirrorOff || bottom > 0 && h < bottom+g.mirrorOff {
				b.r.add(BadStripes, "%s: stripe %d (rows [%d,%d) of %s) mirrors %d+%d rows of %d rows of %s through %s; at most %d",
					rec.path, j, rows[0], rows[1], b.tname(s, rec.output), top, bottom, h, b.tname(s, in), b.oname(s, oi), h-g.mirrorOff)
				return nil, false
			}
		}
		rd[n] = operand{u, c}
		if h, ok := need[in]; ok {
			need[in] = h.hull(c)
		} else {
			need[in] = c
		}
	}
	return rd, true
}

// copyOp returns stripe j's copy of operator oi, computing rows p of its
// output, with its output left to the caller, after appending to ops the
// STRIDED_SLICE and PAD its operands need and to the model their tensors
// (and, for a PAD of the original, its new paddings): have is the
// stripe's tensor of each tensor so far, need the rows it holds, rd what
// the copy reads of each input (operandRows).
func (b *rebuilder) copyOp(rg *region, j int, oi graph.OpIndex, p rowRange, have map[graph.TensorID]graph.TensorID,
	need map[graph.TensorID]rowRange, rd []operand, ops *[]graph.Op) graph.Op {
	s := rg.rec.subgraph
	sg := &b.out.Subgraphs[s]
	orig := rg.sg
	op := &orig.Ops[oi]
	g := rg.geoms[oi]
	cp := *op
	cp.Inputs = slices.Clone(op.Inputs)
	for n, in := range op.Inputs {
		if in == graph.NoTensor || b.constant(s, in) {
			continue
		}
		t, hv, r := have[in], need[in], rd[n]
		if r.c != hv {
			t = b.slice(sg, j, in, t, r.c.lo-hv.lo, r.c.hi-hv.lo, ops)
		}
		if g.convLike {
			top, bottom := r.c.lo-r.u.lo, r.u.hi-r.c.hi
			if top != 0 || bottom != 0 || g.left != 0 || g.right != 0 {
				t = b.pad(sg, j, in, t, [8]int64{0, 0, top, bottom, g.left, g.right, 0, 0}, ops)
			}
		}
		cp.Inputs[n] = t
	}
	if g.window {
		cp.Window = new(graph.Window)
		*cp.Window = *op.Window
		cp.Window.Padding = graph.PaddingValid
		cp.Options = withPadding(op.Options, graph.PaddingValid)
	}
	if g.isPad {
		in := &orig.Tensors[g.padIn]
		full, _ := b.paddings(s, g.padPaddings)
		t := full[2]
		full[2] = max(0, min(p.hi, t)-p.lo)
		full[3] = max(0, p.hi-max(p.lo, t+int64(in.Shape[1])))
		cp.Inputs[1] = b.constTensor(sg, stripeName(&orig.Tensors[op.Outputs[0]], j)+"/paddings", graph.Int32, []int32{4, 2}, full)
	}
	cp.Outputs = nil
	cp.Intermediates = slices.Clone(op.Intermediates)
	return cp
}

// checkMACs checks the record's macs (the region's operators in the
// original) and extra_macs (copyMACs, what the stripe copies compute,
// less macs), reporting a mismatch.
func (b *rebuilder) checkMACs(rg *region, copyMACs int64) bool {
	rec := rg.rec
	orig := rg.sg
	var macs int64
	for _, oi := range rec.ops {
		macs += opMACs(orig, &orig.Ops[oi], int64(orig.Tensors[orig.Ops[oi].Outputs[0]].Shape[1]))
	}
	if macs != rec.macs || copyMACs-macs != rec.extra {
		b.r.add(BadStripes, "%s: macs %d and extra_macs %d, but the region computes %d multiply-accumulates and its stripes %d more",
			rec.path, rec.macs, rec.extra, macs, copyMACs-macs)
		return false
	}
	return true
}

// newOpVersion is the version of an operator the rewrite adds
// (STRIDED_SLICE, PAD, CONCATENATION) over a tensor of type t: 2 for
// INT8, else 1 (docs/stripes.md, "Tensors, buffers, names, versions").
func newOpVersion(t graph.ElementType) int32 {
	if t == graph.Int8 {
		return 2
	}
	return 1
}

// concatOp is a CONCATENATION of ins along the rows (axis 1, no fused
// activation) into out, a tensor of type t.
func concatOp(ins []graph.TensorID, out graph.TensorID, t graph.ElementType) graph.Op {
	return graph.Op{Code: opConcatenation, CodeName: "CONCATENATION", Version: newOpVersion(t), Inputs: ins,
		Outputs: []graph.TensorID{out}, Options: &graph.Options{Table: "ConcatenationOptions", Fields: []graph.OptionField{
			{Name: "axis", Type: "int", Kind: graph.OptionInt, Present: true, Int: 1},
			{Name: "fused_activation_function", Type: "ActivationFunctionType", Kind: graph.OptionInt, Present: true},
		}}}
}

// opMACs is the multiply-accumulates of a CONV_2D or DEPTHWISE_CONV_2D
// whose output has h rows (docs/stripes.md, "MACs"); 0 for any other.
func opMACs(sg *graph.Subgraph, op *graph.Op, h int64) int64 {
	if (op.Code != graph.Conv2D && op.Code != graph.DepthwiseConv2D) || len(op.Inputs) < 2 {
		return 0
	}
	o, f := sg.Tensors[op.Outputs[0]].Shape, sg.Tensors[op.Inputs[1]].Shape
	if len(o) != 4 || len(f) != 4 {
		return 0
	}
	n := h * int64(o[2]) * int64(o[3]) * int64(f[1]) * int64(f[2])
	if op.Code == graph.Conv2D {
		n *= int64(f[3]) // the filter's input channels: Cin / groups
	}
	return n
}

// withPadding returns a copy of an options table with its padding field
// set to p (nil stays nil).
func withPadding(o *graph.Options, p graph.Padding) *graph.Options {
	if o == nil {
		return nil
	}
	c := &graph.Options{Table: o.Table, Fields: slices.Clone(o.Fields)}
	for i := range c.Fields {
		if c.Fields[i].Name == "padding" {
			c.Fields[i].Int, c.Fields[i].Present = int64(p), true
		}
	}
	return c
}

// newTensor appends a tensor like like (type, quantization, width,
// channels) with h rows.
func (b *rebuilder) newTensor(sg *graph.Subgraph, name string, like *graph.Tensor, h int64) graph.TensorID {
	shape := slices.Clone(like.Shape)
	shape[1] = int32(h)
	t := graph.Tensor{Name: name, Type: like.Type, Shape: shape, Quantization: like.Quantization}
	t.Size, _ = graph.ByteSize(t.Type, shape)
	sg.Tensors = append(sg.Tensors, t)
	return graph.TensorID(len(sg.Tensors) - 1)
}

// constTensor appends a constant tensor holding vals, with its own new
// buffer.
func (b *rebuilder) constTensor(sg *graph.Subgraph, name string, typ graph.ElementType, shape []int32, vals []int64) graph.TensorID {
	var data []byte
	for _, v := range vals {
		if typ == graph.Int64 {
			data = binary.LittleEndian.AppendUint64(data, uint64(v))
		} else {
			data = binary.LittleEndian.AppendUint32(data, uint32(int32(v)))
		}
	}
	b.out.Buffers = append(b.out.Buffers, graph.Buffer{Data: data})
	t := graph.Tensor{Name: name, Type: typ, Shape: slices.Clone(shape), Buffer: graph.BufferIndex(len(b.out.Buffers) - 1),
		Size: int64(len(data))}
	sg.Tensors = append(sg.Tensors, t)
	return graph.TensorID(len(sg.Tensors) - 1)
}

// slice appends a STRIDED_SLICE of rows [lo, hi) of t, the stripe's
// tensor of in, and returns its output.
func (b *rebuilder) slice(sg *graph.Subgraph, j int, in, t graph.TensorID, lo, hi int64, ops *[]graph.Op) graph.TensorID {
	return b.sliceRows(sg, sg.Tensors[in].Name+"/stripe"+strconv.Itoa(j)+"/slice", sg.Tensors[in], t, lo, hi, ops)
}

// sliceRows appends a STRIDED_SLICE of rows [lo, hi) of t, a tensor
// standing for like (its type, quantization, width and channels), into a
// new tensor named base, its constants base/begin, base/end and
// base/strides, and returns the new tensor.
func (b *rebuilder) sliceRows(sg *graph.Subgraph, base string, like graph.Tensor, t graph.TensorID, lo, hi int64, ops *[]graph.Op) graph.TensorID {
	w, c := int64(like.Shape[2]), int64(like.Shape[3])
	begin := b.constTensor(sg, base+"/begin", graph.Int32, []int32{4}, []int64{0, lo, 0, 0})
	end := b.constTensor(sg, base+"/end", graph.Int32, []int32{4}, []int64{1, hi, w, c})
	strides := b.constTensor(sg, base+"/strides", graph.Int32, []int32{4}, []int64{1, 1, 1, 1})
	out := b.newTensor(sg, base, &like, hi-lo)
	var fields []graph.OptionField
	for _, f := range []string{"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask", "offset"} {
		fields = append(fields, graph.OptionField{Name: f, Type: "int", Kind: graph.OptionInt})
	}
	*ops = append(*ops, graph.Op{Code: opStridedSlice, CodeName: "STRIDED_SLICE", Version: newOpVersion(like.Type),
		Inputs: []graph.TensorID{t, begin, end, strides}, Outputs: []graph.TensorID{out},
		Options: &graph.Options{Table: "StridedSliceOptions", Fields: fields}})
	return out
}

// pad appends a PAD of t, the stripe's tensor of in, by paddings (in the
// order of a [4,2] paddings tensor) and returns its output. TFLM pads an
// int8 tensor with its output's zero point (tensorflow/lite/micro/kernels/
// pad.cc @90b983c), so the output takes in's type and quantization.
func (b *rebuilder) pad(sg *graph.Subgraph, j int, in, t graph.TensorID, p [8]int64, ops *[]graph.Op) graph.TensorID {
	src := &sg.Tensors[t]
	base := sg.Tensors[in].Name + "/stripe" + strconv.Itoa(j) + "/pad"
	pt := b.constTensor(sg, base+"/paddings", graph.Int32, []int32{4, 2}, p[:])
	shape := slices.Clone(src.Shape)
	for d := range 4 {
		shape[d] += int32(p[2*d] + p[2*d+1])
	}
	like := sg.Tensors[in]
	like.Shape = shape
	out := b.newTensor(sg, base, &like, int64(shape[1]))
	*ops = append(*ops, graph.Op{Code: opPad, CodeName: "PAD", Version: newOpVersion(like.Type), Inputs: []graph.TensorID{t, pt},
		Outputs: []graph.TensorID{out}, Options: &graph.Options{Table: "PadOptions"}})
	return out
}
