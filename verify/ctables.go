package verify

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/heliac/heliac/graph"
)

// modelTensor returns tensor ref of the model, or nil when the model has
// none: the plan may name tensors the model lacks (Plan reports that).
func (cm *cModule) modelTensor(ref graph.TensorRef) *graph.Tensor {
	if ref.Subgraph < 0 || int(ref.Subgraph) >= len(cm.m.Subgraphs) {
		return nil
	}
	sg := &cm.m.Subgraphs[ref.Subgraph]
	if ref.Tensor < 0 || int(ref.Tensor) >= len(sg.Tensors) {
		return nil
	}
	return &sg.Tensors[ref.Tensor]
}

// dimCount is the number of dimensions of the model's tensors in
// tensor_allocs together.
func (cm *cModule) dimCount() int64 {
	var n int64
	for _, a := range cm.doc.allocs {
		if t := cm.modelTensor(a.ref); t != nil {
			n += int64(len(t.Shape))
		}
	}
	return n
}

// checkTensors compares the tensor table, a row per tensor_allocs entry by
// (subgraph, tensor), with tensor_allocs and the model's types and shapes,
// and <prefix>_dims with the shapes.
func (cm *cModule) checkTensors() {
	sym := cm.p + "_tensors"
	rows := cm.table(sym, len(cm.doc.allocs), "tensor_allocs")
	dims := cm.flat(cm.p+"_dims", int(cm.dimCount()), "dimensions of the tensors")
	var at int64
	for i, a := range cm.doc.allocs {
		t := cm.modelTensor(a.ref)
		if t == nil {
			continue
		}
		if i < len(rows) {
			cm.row(sym, i, rows[i], []string{cUint(int64(a.ref.Subgraph)), cUint(int64(a.ref.Tensor)), cm.enum(a.arena),
				cm.P + "_TYPE_" + t.Type.String(), cUint(int64(len(t.Shape))), cUint(a.offset), cUint(a.size), cUint(at)}, a.path)
		}
		for k, d := range t.Shape {
			j := at + int64(k)
			if j < int64(len(dims)) && dims[j] != cInt(int64(d)) {
				cm.r.add(CMismatch, "%s: %s_dims[%d] is %s, but dimension %d of tensor %v (%s) is %d", cm.c.name, cm.p, j, dims[j],
					k, a.ref, a.path, d)
			}
		}
		at += int64(len(t.Shape))
	}
}

// cInt is how C writes a dimension.
func cInt(d int64) string {
	if d == math.MinInt32 {
		return "(-2147483647 - 1)"
	}
	return strconv.FormatInt(d, 10)
}

// operand is the tensor-table index C gives tensor id of subgraph s as an
// operand: its row, or 65535 for an omitted operand or a tensor without
// bytes.
func (cm *cModule) operand(s graph.SubgraphIndex, id graph.TensorID) string {
	if r, ok := cm.rowOf[graph.TensorRef{Subgraph: s, Tensor: id}]; ok && id != graph.NoTensor {
		return cUint(int64(r))
	}
	return "65535u"
}

// pool holds a flat table the schedule's rows index: its values, and how
// many entries the macro counting them says it has.
type pool struct {
	name   string
	values []string
}

// list checks that pool entries [start, start+count) are want, and
// reports what.
func (cm *cModule) list(p pool, start, count string, want []string, what string) {
	s, err1 := strconv.ParseInt(strings.TrimSuffix(start, "u"), 10, 64)
	n, err2 := strconv.ParseInt(strings.TrimSuffix(count, "u"), 10, 64)
	switch {
	case err1 != nil || err2 != nil || s < 0 || n < 0 || s+n > int64(len(p.values)):
		cm.r.add(CMismatch, "%s: %s are %s entries from %s[%s], outside its %d entries", cm.c.name, what, count,
			p.name, start, len(p.values))
	case int(n) != len(want):
		cm.r.add(CMismatch, "%s: %s: %s entries, but the model gives %d", cm.c.name, what, count, len(want))
	default:
		got := p.values[s : s+n]
		for i := range want {
			if got[i] != want[i] {
				cm.r.add(CMismatch, "%s: %s are {%s}, but the model gives {%s}", cm.c.name, what, strings.Join(got, ", "),
					strings.Join(want, ", "))
				return
			}
		}
	}
}

// checkSchedule compares the subgraph and operator tables with the model
// and plan.json's schedule: every run in order, with its operator's code,
// custom name, operands (tensor-table indices) and called subgraphs, and
// the last row inside its span.
func (cm *cModule) checkSchedule() {
	var nOperand, nCall int64
	for _, sg := range cm.m.Subgraphs {
		nOperand += int64(len(sg.Inputs) + len(sg.Outputs))
	}
	seen := map[graph.OpRef]bool{}
	for _, r := range cm.doc.schedule {
		if op := cm.modelOp(r.op); op != nil && !seen[r.op] {
			seen[r.op] = true
			nOperand += int64(len(op.Inputs) + len(op.Outputs) + len(op.Intermediates))
			nCall += int64(len(op.Called))
		}
	}
	cm.expect("OPERAND_COUNT", cUint(nOperand), "the operands of the model's subgraphs and scheduled operators")
	cm.expect("CALL_COUNT", cUint(nCall), "the subgraphs the scheduled operators run")
	operands := pool{cm.p + "_operands", cm.flat(cm.p+"_operands", int(nOperand), "operands")}
	calls := pool{cm.p + "_calls", cm.flat(cm.p+"_calls", int(nCall), "called subgraphs")}
	operandsOf := func(s graph.SubgraphIndex, ids []graph.TensorID) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = cm.operand(s, id)
		}
		return out
	}

	subs := cm.table(cm.p+"_subgraphs", len(cm.m.Subgraphs), "the model's subgraphs")
	for i, row := range subs {
		if i >= len(cm.m.Subgraphs) || len(row.fields) != 5 {
			cm.r.add(CMismatch, "%s:%d: %s_subgraphs[%d] has %d fields, want 5", cm.c.name, row.line, cm.p, i, len(row.fields))
			continue
		}
		sg := &cm.m.Subgraphs[i]
		s := graph.SubgraphIndex(i)
		what := fmt.Sprintf("%s_subgraphs[%d]", cm.p, i)
		cm.list(operands, row.fields[0], row.fields[2], operandsOf(s, sg.Inputs), what+" inputs")
		cm.list(operands, row.fields[1], row.fields[3], operandsOf(s, sg.Outputs), what+" outputs")
		if row.fields[4] != cUint(int64(len(sg.Ops))) {
			cm.r.add(CMismatch, "%s:%d: %s operator_count is %s, but subgraph %d has %d operators", cm.c.name, row.line, what,
				row.fields[4], i, len(sg.Ops))
		}
	}

	// Each operator's kernel_scratch entries: the first and how many,
	// which must be listed together.
	type rows struct{ first, count int }
	scratch := map[graph.OpRef]rows{}
	for i, k := range cm.doc.kernel {
		r, ok := scratch[k.op]
		switch {
		case !ok:
			r.first = i
		case r.first+r.count != i:
			cm.r.add(CMismatch, "%s: the kernel_scratch entries of operator %v are not listed together, so no operator row can give them",
				k.path, k.op)
		}
		r.count++
		scratch[k.op] = r
	}
	ops := cm.table(cm.p+"_operators", len(cm.doc.schedule), "schedule")
	for i, row := range ops {
		if i >= len(cm.doc.schedule) {
			break
		}
		r := cm.doc.schedule[i]
		op := cm.modelOp(r.op)
		if op == nil || len(row.fields) != 15 {
			cm.r.add(CMismatch, "%s:%d: %s_operators[%d] has %d fields for %s, want 15 for an operator of the model",
				cm.c.name, row.line, cm.p, i, len(row.fields), r.path)
			continue
		}
		last := i
		for last+1 < len(cm.doc.schedule) && cm.doc.schedule[last+1].start <= r.end {
			last++
		}
		custom := "NULL"
		if op.Code == graph.Custom {
			custom = cStringOf(op.CustomName)
		}
		f := row.fields
		sc := scratch[r.op]
		cm.row(cm.p+"_operators", i, cTableRow{line: row.line, fields: []string{f[0], f[1], f[2], f[3], f[8], f[9], f[14]}},
			[]string{cUint(int64(r.op.Subgraph)), cUint(int64(r.op.Op)), strconv.FormatInt(int64(op.Code), 10), custom,
				cUint(int64(last)), cUint(int64(sc.first)), cUint(int64(sc.count))},
			r.path+" (subgraph, op, builtin, custom, last, scratch, scratch_count)")
		what := fmt.Sprintf("%s_operators[%d]", cm.p, i)
		s := r.op.Subgraph
		cm.list(operands, f[4], f[10], operandsOf(s, op.Inputs), what+" inputs")
		cm.list(operands, f[5], f[11], operandsOf(s, op.Outputs), what+" outputs")
		cm.list(operands, f[6], f[12], operandsOf(s, op.Intermediates), what+" intermediates")
		called := make([]string, len(op.Called))
		for k, c := range op.Called {
			called[k] = cUint(int64(c))
		}
		cm.list(calls, f[7], f[13], called, what+" called subgraphs")
	}
}

// modelOp returns operator ref of the model, or nil.
func (cm *cModule) modelOp(ref graph.OpRef) *graph.Op {
	if ref.Subgraph < 0 || int(ref.Subgraph) >= len(cm.m.Subgraphs) {
		return nil
	}
	sg := &cm.m.Subgraphs[ref.Subgraph]
	if ref.Op < 0 || int(ref.Op) >= len(sg.Ops) {
		return nil
	}
	return &sg.Ops[ref.Op]
}

// cStringOf writes s as C writes a custom operator's name: a string
// literal with letters, digits and " _.:/+-" as they are and every other
// byte a three-digit octal escape.
func cStringOf(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(" _.:/+-", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\%03o", c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// checkIO checks that each input and output macro set repeats the tensor
// table row it indexes, and that the model gives that tensor as the input
// or output, with the type and quantization the macros give.
func (cm *cModule) checkIO() {
	if len(cm.m.Subgraphs) == 0 {
		return
	}
	sg := &cm.m.Subgraphs[0]
	for _, io := range []struct {
		role string
		ids  []graph.TensorID
	}{{"INPUT", sg.Inputs}, {"OUTPUT", sg.Outputs}} {
		cm.expect(io.role+"_COUNT", cUint(int64(len(io.ids))), "the number of subgraph 0's "+strings.ToLower(io.role)+"s")
		for i, id := range io.ids {
			cm.checkIOTensor(fmt.Sprintf("%s_%d", io.role, i), graph.TensorRef{Tensor: id})
		}
	}
}

// checkIOTensor checks the macros of one input or output: none when it
// occupies no memory, else those of its table row.
func (cm *cModule) checkIOTensor(name string, ref graph.TensorRef) {
	r, ok := cm.rowOf[ref]
	t := cm.modelTensor(ref)
	if !ok || t == nil {
		return // occupies no memory; checkRest reports any macro of it
	}
	a := cm.doc.allocs[r]
	cm.expect(name+"_INDEX", cUint(int64(r)), fmt.Sprintf("the row of tensor %v, %s", ref, a.path))
	cm.place(name, a.arena, a.offset, a.size, a.path)
	cm.expect(name+"_TYPE", cm.P+"_TYPE_"+t.Type.String(), fmt.Sprintf("tensor %v's type", ref))
	q := t.Quantization
	if q == nil || len(q.Scale) != 1 || len(q.ZeroPoint) != 1 || q.HasCustomQuant ||
		math.IsNaN(float64(q.Scale[0])) || math.IsInf(float64(q.Scale[0]), 0) ||
		q.ZeroPoint[0] <= math.MinInt32 || q.ZeroPoint[0] > math.MaxInt32 {
		return
	}
	if l, ok := cm.define(name + "_SCALE"); ok {
		v, err := strconv.ParseFloat(strings.TrimSuffix(l.value, "f"), 32)
		if err != nil || !strings.HasSuffix(l.value, "f") || float32(v) != q.Scale[0] {
			cm.r.add(CMismatch, "%s:%d: %s_%s_SCALE is %s, but tensor %v's scale is %v", cm.h.name, l.line, cm.P, name, l.value, ref, q.Scale[0])
		}
	}
	zero := strconv.FormatInt(q.ZeroPoint[0], 10)
	if q.ZeroPoint[0] < 0 {
		zero = "(" + zero + ")"
	}
	cm.expect(name+"_ZERO_POINT", zero, fmt.Sprintf("tensor %v's zero point", ref))
}
