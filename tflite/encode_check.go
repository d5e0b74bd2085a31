package tflite

import (
	"errors"
	"fmt"

	"github.com/heliac/heliac/graph"
)

// validate checks, before Encode writes anything, what Load would check
// on the way back: every index in range, known element types, shapes
// ByteSize accepts, control-flow operators with the subgraphs they call,
// and a call graph without cycles or calls of subgraph 0. Errors name the
// field as Load's do, under "tflite: encode:".
func validate(m *graph.Model) error {
	if m == nil {
		return errors.New("tflite: encode: nil model")
	}
	if len(m.Subgraphs) == 0 {
		return invalid("subgraphs", "model has no subgraphs")
	}
	nb, ns := len(m.Buffers), len(m.Subgraphs)
	for si := range m.Subgraphs {
		if err := validateSubgraph(m, si); err != nil {
			return err
		}
	}
	if err := checkCalls(m); err != nil {
		var ce *CorruptError
		if errors.As(err, &ce) {
			return invalid(ce.Path, "%s", ce.Msg)
		}
		return err
	}
	for i, md := range m.Metadata {
		if md.Buffer < 0 || int(md.Buffer) >= nb {
			return invalid(fmt.Sprintf("metadata[%d].buffer", i), "index %d out of range [0, %d)", md.Buffer, nb)
		}
	}
	for i, sig := range m.Signatures {
		path := fmt.Sprintf("signature_defs[%d]", i)
		if sig.Subgraph < 0 || int(sig.Subgraph) >= ns {
			return invalid(path+".subgraph_index", "index %d out of range [0, %d)", sig.Subgraph, ns)
		}
		nt := len(m.Subgraphs[sig.Subgraph].Tensors)
		for _, l := range []struct {
			name string
			ts   []graph.SignatureTensor
		}{{"inputs", sig.Inputs}, {"outputs", sig.Outputs}} {
			for j, st := range l.ts {
				if st.Tensor < 0 || int(st.Tensor) >= nt {
					return invalid(fmt.Sprintf("%s.%s[%d].tensor_index", path, l.name, j), "index %d out of range [0, %d)", st.Tensor, nt)
				}
			}
		}
	}
	return nil
}

func validateSubgraph(m *graph.Model, si int) error {
	sg := &m.Subgraphs[si]
	path := fmt.Sprintf("subgraphs[%d]", si)
	nt, nb := len(sg.Tensors), len(m.Buffers)
	for i := range sg.Tensors {
		t := &sg.Tensors[i]
		tp := fmt.Sprintf("%s.tensors[%d]", path, i)
		if !t.Type.Valid() {
			return invalid(tp+".type", "unknown tensor type %d", int(t.Type))
		}
		if _, err := graph.ByteSize(t.Type, t.Shape); err != nil {
			return invalid(tp+".shape", "%v", err)
		}
		if t.Buffer < 0 || int(t.Buffer) >= nb {
			return invalid(tp+".buffer", "index %d out of range [0, %d)", t.Buffer, nb)
		}
		if msg := shortData(t, m.Buffers[t.Buffer].Data); msg != "" {
			return invalid(tp, "%s", msg)
		}
	}
	if err := validateIDs(path+".inputs", sg.Inputs, nt, false); err != nil {
		return err
	}
	if err := validateIDs(path+".outputs", sg.Outputs, nt, false); err != nil {
		return err
	}
	for oi := range sg.Ops {
		if err := validateOp(fmt.Sprintf("%s.operators[%d]", path, oi), &sg.Ops[oi], nt, len(m.Subgraphs)); err != nil {
			return err
		}
	}
	return nil
}

// calledCount gives the number of subgraphs each control-flow operator
// calls; every other operator calls none.
var calledCount = map[graph.Opcode]int{
	graph.While:              2,
	graph.If:                 2,
	graph.CallOnce:           1,
	graph.StablehloComposite: 1,
}

func validateOp(path string, op *graph.Op, nt, ns int) error {
	if op.Code < 0 {
		return invalid(path+".opcode", "negative builtin operator code %d", op.Code)
	}
	if err := validateIDs(path+".inputs", op.Inputs, nt, true); err != nil {
		return err
	}
	if err := validateIDs(path+".outputs", op.Outputs, nt, false); err != nil {
		return err
	}
	if err := validateIDs(path+".intermediates", op.Intermediates, nt, false); err != nil {
		return err
	}
	if want := calledCount[op.Code]; len(op.Called) != want {
		return invalid(path+".called", "%s calls %d subgraphs, want %d", op.Name(), len(op.Called), want)
	}
	for i, s := range op.Called {
		if s < 0 || int(s) >= ns {
			return invalid(fmt.Sprintf("%s.called[%d]", path, i), "subgraph %d out of range [0, %d)", s, ns)
		}
	}
	if op.Resource != nil && op.Code != graph.VarHandle {
		return invalid(path+".resource", "%s has a resource name, which only VAR_HANDLE can hold", op.Name())
	}
	if op.Options != nil {
		if err := validateOptions(path+".options", "BuiltinOptions", op.Options); err != nil {
			return err
		}
	}
	if op.Options2 != nil {
		if err := validateOptions(path+".options2", "BuiltinOptions2", op.Options2); err != nil {
			return err
		}
	}
	return nil
}

// validateIDs checks tensor indices against the subgraph's tensor count;
// optional allows graph.NoTensor.
func validateIDs(path string, ids []graph.TensorID, nt int, optional bool) error {
	for i, id := range ids {
		if (id < 0 && !(optional && id == graph.NoTensor)) || int(id) >= nt {
			return invalid(fmt.Sprintf("%s[%d]", path, i), "tensor index %d out of range [0, %d)", id, nt)
		}
	}
	return nil
}

func invalid(path, format string, args ...any) error {
	return fmt.Errorf("tflite: encode: %s: %s", path, fmt.Sprintf(format, args...))
}
