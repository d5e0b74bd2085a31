package emit

import (
	"fmt"
	"math"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
)

// NoTensor is the operand the C tables give for an omitted optional input
// (TFLite's -1) and for a tensor that occupies no memory (zero-size, a
// resource handle, a run-time string): <PREFIX>_NO_TENSOR.
const cNoTensor = math.MaxUint16

// cSchedule is the plan's schedule as the C tables give it: operand lists
// pooled in <prefix>_operands (tensor-table indices), subgraph lists in
// <prefix>_calls, one row per subgraph and one per run of an operator.
type cSchedule struct {
	operands []cList // in pool order
	calls    []cList
	nOperand int64 // entries of <prefix>_operands
	nCall    int64
	subs     []cSubgraph
	runs     []cRun
}

// cList is one list in a pool: its first index, its values and what it
// lists, for the comment beside it.
type cList struct {
	start  int64
	values []int64
	what   string
}

// cSubgraph is one row of <prefix>_subgraphs.
type cSubgraph struct {
	inputs, outputs *cList
	ops             int
}

// cOp is what the table gives of one operator, whichever run of it.
type cOp struct {
	inputs, outputs, intermediates, calls *cList
}

// cRun is one row of <prefix>_operators: a run of an operator and the
// last row of its span.
type cRun struct {
	liveness.Run
	op   *graph.Op
	lst  *cOp
	last int
}

// buildSchedule pools every operand list and builds the subgraph and
// operator rows, from the model and the plan's schedule.
func (g *cgen) buildSchedule() error {
	s := &g.sched
	ops := map[graph.OpRef]*cOp{}
	for si := range g.m.Subgraphs {
		sg := &g.m.Subgraphs[si]
		if si > math.MaxUint16 || len(sg.Ops) > math.MaxUint16 || len(sg.Inputs) > math.MaxUint16 || len(sg.Outputs) > math.MaxUint16 {
			return fmt.Errorf("emit: subgraph %d does not fit the C tables' 16-bit indices and counts", si)
		}
		s.subs = append(s.subs, cSubgraph{
			inputs:  g.operandList(graph.SubgraphIndex(si), sg.Inputs, fmt.Sprintf("subgraph %d inputs", si)),
			outputs: g.operandList(graph.SubgraphIndex(si), sg.Outputs, fmt.Sprintf("subgraph %d outputs", si)),
			ops:     len(sg.Ops),
		})
	}
	runs := g.p.Schedule.Runs
	for i, r := range runs {
		if r.Op.Subgraph < 0 || int(r.Op.Subgraph) >= len(g.m.Subgraphs) || r.Op.Op < 0 || int(r.Op.Op) >= len(g.m.Subgraphs[r.Op.Subgraph].Ops) {
			return fmt.Errorf("emit: the schedule runs operator %v, which is not in the model", r.Op)
		}
		op := &g.m.Subgraphs[r.Op.Subgraph].Ops[r.Op.Op]
		lst, ok := ops[r.Op]
		if !ok {
			if len(op.Inputs) > math.MaxUint16 || len(op.Outputs) > math.MaxUint16 || len(op.Intermediates) > math.MaxUint16 || len(op.Called) > math.MaxUint16 {
				return fmt.Errorf("emit: operator %v has more operands than the C table's 16-bit counts", r.Op)
			}
			what := fmt.Sprintf("%d:%d %s", r.Op.Subgraph, r.Op.Op, commentText(op.Name()))
			lst = &cOp{
				inputs:        g.operandList(r.Op.Subgraph, op.Inputs, what+" inputs"),
				outputs:       g.operandList(r.Op.Subgraph, op.Outputs, what+" outputs"),
				intermediates: g.operandList(r.Op.Subgraph, op.Intermediates, what+" intermediates"),
				calls:         g.callList(op.Called, what+" runs"),
			}
			ops[r.Op] = lst
		}
		// Runs are in step order and nest: the rows inside this run's span
		// follow it, up to the last that starts within it.
		last := i
		for last+1 < len(runs) && runs[last+1].Span.First <= r.Span.Last {
			last++
		}
		s.runs = append(s.runs, cRun{Run: r, op: op, lst: lst, last: last})
	}
	return nil
}

// operandList pools the tensor-table indices of tensors ids of subgraph
// si: cNoTensor for an omitted operand or a tensor without bytes.
func (g *cgen) operandList(si graph.SubgraphIndex, ids []graph.TensorID, what string) *cList {
	l := &cList{start: g.sched.nOperand, what: what}
	for _, id := range ids {
		v := int64(cNoTensor)
		if r, ok := g.row[graph.TensorRef{Subgraph: si, Tensor: id}]; ok && id != graph.NoTensor {
			v = int64(r)
		}
		l.values = append(l.values, v)
	}
	g.sched.nOperand += int64(len(ids))
	if len(ids) > 0 {
		g.sched.operands = append(g.sched.operands, *l)
	}
	return l
}

// callList pools the subgraphs a control-flow operator runs.
func (g *cgen) callList(called []graph.SubgraphIndex, what string) *cList {
	l := &cList{start: g.sched.nCall, what: what}
	for _, c := range called {
		l.values = append(l.values, int64(c))
	}
	g.sched.nCall += int64(len(called))
	if len(called) > 0 {
		g.sched.calls = append(g.sched.calls, *l)
	}
	return l
}

// scheduleDecls writes the types of the subgraph and operator tables.
func (g *cgen) scheduleTypes(w *cwriter) {
	p, P := g.prefix, g.macro
	w.f("/* One subgraph: its inputs and outputs, input_count and output_count\n"+
		" * tensor-table indices from %s_operands[inputs] and [outputs], and how many\n"+
		" * operators one run of it takes. */\n", p)
	w.name(p + "_subgraph_t")
	w.f("typedef struct {\n\tuint32_t inputs;\n\tuint32_t outputs;\n\tuint16_t input_count;\n\tuint16_t output_count;\n"+
		"\tuint16_t operator_count;\n} %s_subgraph_t;\n\n", p)
	w.f("/* One run of an operator, in the order the plan runs them (plan.json's\n"+
		" * schedule): operator `op` of `subgraph`, its TFLite builtin code (%d, CUSTOM,\n"+
		" * for a custom operator, whose name is `custom`), and its operands as\n"+
		" * tensor-table indices in %s_operands (%s_NO_TENSOR for an omitted\n"+
		" * optional operand or a tensor that occupies no memory). A control-flow\n"+
		" * operator runs the call_count subgraphs %s_calls[calls] lists, in that\n"+
		" * order, inside its span: their runs are the rows after it up to `last`\n"+
		" * (its own row when it runs none). Its kernel scratch buffers are the\n"+
		" * scratch_count rows of %s_kernel_scratch from `scratch` (0 when none);\n"+
		" * %s_kernel_scratch_data gives their bytes. */\n", graph.Custom, p, P, p, p, p)
	w.name(p + "_operator_t")
	w.f("typedef struct {\n\tuint16_t subgraph;\n\tuint16_t op;\n\tint32_t builtin;\n\tconst char *custom;\n"+
		"\tuint32_t inputs;\n\tuint32_t outputs;\n\tuint32_t intermediates;\n\tuint32_t calls;\n\tuint32_t last;\n"+
		"\tuint32_t scratch;\n\tuint16_t input_count;\n\tuint16_t output_count;\n\tuint16_t intermediate_count;\n"+
		"\tuint16_t call_count;\n\tuint16_t scratch_count;\n} %s_operator_t;\n\n", p)
}

// scheduleDefs defines the pools and the subgraph and operator tables.
func (g *cgen) scheduleDefs(w *cwriter) {
	p, P := g.prefix, g.macro
	s := &g.sched
	writePool := func(sym, ctype, count string, lists []cList) {
		w.f("\nconst %s %s[%s] = {\n", ctype, sym, count)
		for _, l := range lists {
			w.WriteString("\t")
			for _, v := range l.values {
				w.f("%du, ", v)
			}
			w.f("/* [%d] %s */\n", l.start, l.what)
		}
		w.WriteString("};\n")
	}
	if s.nOperand > 0 {
		writePool(p+"_operands", "uint16_t", P+"_OPERAND_COUNT", s.operands)
	}
	if s.nCall > 0 {
		writePool(p+"_calls", "uint16_t", P+"_CALL_COUNT", s.calls)
	}
	w.f("\nconst %s_subgraph_t %s_subgraphs[%s_SUBGRAPH_COUNT] = {\n", p, p, P)
	w.WriteString("\t/* inputs, outputs, input_count, output_count, operator_count */\n")
	for i, sg := range s.subs {
		w.f("\t{%du, %du, %du, %du, %du}, /* [%d] %s */\n", sg.inputs.start, sg.outputs.start, len(sg.inputs.values),
			len(sg.outputs.values), sg.ops, i, commentText(g.m.Subgraphs[i].Name))
	}
	w.WriteString("};\n")
	if len(s.runs) == 0 {
		return
	}
	scratch := g.scratchRows()
	w.f("\nconst %s_operator_t %s_operators[%s_OPERATOR_COUNT] = {\n", p, p, P)
	w.WriteString("\t/* subgraph, op, builtin, custom, inputs, outputs, intermediates, calls, last, scratch,\n" +
		"\t   input_count, output_count, intermediate_count, call_count, scratch_count */\n")
	for i, r := range s.runs {
		custom := "NULL"
		if r.op.Code == graph.Custom {
			custom = cString(r.op.CustomName)
		}
		l := r.lst
		sc := scratch[r.Op]
		w.f("\t{%du, %du, %d, %s, %du, %du, %du, %du, %du, %du, %du, %du, %du, %du, %du}, /* [%d] %s */\n",
			r.Op.Subgraph, r.Op.Op, int32(r.op.Code), custom, l.inputs.start, l.outputs.start, l.intermediates.start,
			l.calls.start, r.last, sc.first, len(l.inputs.values), len(l.outputs.values), len(l.intermediates.values),
			len(l.calls.values), sc.count, i, commentText(r.op.Name()))
	}
	w.WriteString("};\n")
}

// scratchRows are one operator's rows of <prefix>_kernel_scratch: count
// rows from first.
type scratchRows struct{ first, count int }

// scratchRows gives each operator's kernel scratch rows; plan.Build lists
// an operator's requests together.
func (g *cgen) scratchRows() map[graph.OpRef]scratchRows {
	rows := map[graph.OpRef]scratchRows{}
	for i, k := range g.kernel {
		r, ok := rows[k.Op]
		if !ok {
			r.first = i
		}
		r.count++
		rows[k.Op] = r
	}
	return rows
}
