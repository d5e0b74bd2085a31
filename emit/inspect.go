package emit

import (
	"bytes"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/heliac/heliac/graph"
)

// Inspect renders the model's subgraphs, tensors and operators as aligned
// text tables.
func Inspect(m *graph.Model) []byte {
	var buf bytes.Buffer
	tensors, ops := 0, 0
	for _, sg := range m.Subgraphs {
		tensors += len(sg.Tensors)
		ops += len(sg.Ops)
	}
	fmt.Fprintf(&buf, "model: version %d, %d subgraph(s), %d tensor(s), %d operator(s), %d buffer(s)\n",
		m.Version, len(m.Subgraphs), tensors, ops, len(m.Buffers))
	if m.Description != "" {
		fmt.Fprintf(&buf, "description: %s\n", escapeName(m.Description))
	}
	for _, s := range m.Signatures {
		fmt.Fprintf(&buf, "signature %s: subgraph %d, %d input(s), %d output(s)\n", quoted(s.Key), s.Subgraph, len(s.Inputs), len(s.Outputs))
	}
	if op := offlinePlanOf(m); op != nil {
		if op.Err != "" {
			fmt.Fprintf(&buf, "offline memory plan (%s): unreadable: %s\n", graph.OfflinePlanName, op.Err)
		} else {
			fmt.Fprintf(&buf, "offline memory plan (%s, version %d): %d of %d tensor(s) placed offline, ending at %d bytes\n",
				graph.OfflinePlanName, op.Version, op.Planned, op.Tensors, op.End)
		}
	}
	if i, err := ReadPlanInfo(m); err != nil {
		fmt.Fprintf(&buf, "heliac plan (%s): unreadable: %s\n", graph.PlanInfoName, escapeName(err.Error()))
	} else if i != nil {
		fmt.Fprintf(&buf, "heliac plan (%s): %s\n", graph.PlanInfoName, escapeName(i.Text()))
	}
	for si, sg := range m.Subgraphs {
		fmt.Fprintf(&buf, "\nsubgraph %d %s: %d tensor(s), %d operator(s), inputs %v, outputs %v\n",
			si, quoted(sg.Name), len(sg.Tensors), len(sg.Ops), sg.Inputs, sg.Outputs)
		w := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
		fmt.Fprintf(w, "  tensor\ttype\tshape\tbytes\tbuffer\tflags\tname\n")
		for ti := range sg.Tensors {
			t := &sg.Tensors[ti]
			var flags []string
			if m.HasData(t) {
				flags = append(flags, "const")
			}
			if t.IsVariable {
				flags = append(flags, "variable")
			}
			if t.IsDynamic() {
				flags = append(flags, "dynamic")
			}
			if t.Quantization != nil {
				flags = append(flags, "quant")
			}
			fmt.Fprintf(w, "  %d\t%s\t%s\t%d\t%d\t%s\t%s\n", ti, t.Type, shapeString(t.Shape), t.Size, t.Buffer,
				strings.Join(flags, ","), escapeName(t.Name))
		}
		w.Flush()
		w = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
		fmt.Fprintf(w, "  op\tname\tinputs\toutputs\tcalls\n")
		for oi := range sg.Ops {
			op := &sg.Ops[oi]
			calls := ""
			if len(op.Called) > 0 {
				calls = fmt.Sprint(op.Called)
			}
			fmt.Fprintf(w, "  %d\t%s\t%v\t%v\t%s\n", oi, escapeName(op.Name()), op.Inputs, op.Outputs, calls)
		}
		w.Flush()
	}
	return buf.Bytes()
}

func shapeString(s []int32) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

type inspectModel struct {
	Version     uint32             `json:"version"`
	Description string             `json:"description"`
	Subgraphs   []inspectSubgraph  `json:"subgraphs"`
	Signatures  []inspectSignature `json:"signatures"`
	Buffers     int                `json:"buffers"`
	OfflinePlan *inspectOffline    `json:"offline_plan,omitempty"`
	// PlanInfo is what a model heliac wrote records about its plan
	// (graph.PlanInfoName).
	PlanInfo *inspectPlanInfo `json:"heliac_plan,omitempty"`
}

// inspectPlanInfo is a model's PlanInfo, or why it cannot be read.
type inspectPlanInfo struct {
	Generator   string   `json:"generator,omitempty"`
	PlanHash    string   `json:"plan_hash,omitempty"`
	Kernels     string   `json:"kernels,omitempty"`
	KernelsPath string   `json:"kernels_path,omitempty"`
	Builds      []string `json:"kernel_builds,omitempty"`
	TFLMTarget  string   `json:"tflm_target,omitempty"`
	Err         string   `json:"error,omitempty"`
}

// planInfoOf reads a model's PlanInfo for inspect, or returns nil when it
// has none.
func planInfoOf(m *graph.Model) *inspectPlanInfo {
	i, err := ReadPlanInfo(m)
	switch {
	case err != nil:
		return &inspectPlanInfo{Err: err.Error()}
	case i == nil:
		return nil
	}
	return &inspectPlanInfo{Generator: escapeName(i.Generator), PlanHash: escapeName(i.PlanHash), Kernels: escapeName(i.Kernels),
		KernelsPath: escapeName(i.KernelsPath), Builds: i.Builds, TFLMTarget: escapeName(i.TFLMTarget)}
}

// inspectOffline summarises a model's OfflineMemoryAllocation metadata.
type inspectOffline struct {
	Version int    `json:"version"`         // the format's version word (TFLM ignores it)
	Tensors int    `json:"tensors"`         // offsets the plan holds
	Planned int    `json:"planned"`         // offsets other than -1
	End     int64  `json:"end"`             // the highest offset plus its tensor's bytes
	Err     string `json:"error,omitempty"` // why the metadata is not a plan TFLM reads
}

// offlinePlanOf reads the model's offline memory plan, or returns nil when
// it has none.
func offlinePlanOf(m *graph.Model) *inspectOffline {
	for _, md := range m.Metadata {
		if md.Name != graph.OfflinePlanName {
			continue
		}
		if md.Buffer < 0 || int(md.Buffer) >= len(m.Buffers) {
			return &inspectOffline{Err: fmt.Sprintf("buffer %d does not exist", md.Buffer)}
		}
		version, _, offsets, err := graph.ReadOfflinePlan(m.Buffers[md.Buffer].Data)
		if err != nil {
			return &inspectOffline{Err: err.Error()}
		}
		out := &inspectOffline{Version: version, Tensors: len(offsets)}
		var sizes []int64
		for _, sg := range m.Subgraphs {
			for _, t := range sg.Tensors {
				sizes = append(sizes, t.Size)
			}
		}
		for i, off := range offsets {
			if off < 0 {
				continue
			}
			out.Planned++
			if i < len(sizes) {
				out.End = max(out.End, int64(off)+sizes[i])
			}
		}
		return out
	}
	return nil
}

type inspectSubgraph struct {
	Name      string            `json:"name"`
	Inputs    []graph.TensorID  `json:"inputs"`
	Outputs   []graph.TensorID  `json:"outputs"`
	Tensors   []inspectTensor   `json:"tensors"`
	Operators []inspectOperator `json:"operators"`
}

type inspectTensor struct {
	Name           string  `json:"name"`
	Type           string  `json:"type"`
	Shape          []int32 `json:"shape"`
	ShapeSignature []int32 `json:"shape_signature,omitempty"`
	Bytes          int64   `json:"bytes"`
	Buffer         int     `json:"buffer"`
	Constant       bool    `json:"constant"`
	IsVariable     bool    `json:"is_variable"`
}

type inspectOperator struct {
	Name          string                `json:"name"`
	Inputs        []graph.TensorID      `json:"inputs"`
	Outputs       []graph.TensorID      `json:"outputs"`
	Intermediates []graph.TensorID      `json:"intermediates,omitempty"`
	Calls         []graph.SubgraphIndex `json:"calls,omitempty"`
}

type inspectSignature struct {
	Key      string `json:"key"`
	Subgraph int    `json:"subgraph"`
}

// InspectJSON renders the same information as Inspect as JSON.
func InspectJSON(m *graph.Model) ([]byte, error) {
	out := inspectModel{Version: m.Version, Description: escapeName(m.Description), Buffers: len(m.Buffers),
		Subgraphs: []inspectSubgraph{}, Signatures: []inspectSignature{}, OfflinePlan: offlinePlanOf(m), PlanInfo: planInfoOf(m)}
	for _, s := range m.Signatures {
		out.Signatures = append(out.Signatures, inspectSignature{Key: escapeName(s.Key), Subgraph: int(s.Subgraph)})
	}
	for _, sg := range m.Subgraphs {
		is := inspectSubgraph{Name: escapeName(sg.Name), Inputs: nonNil(sg.Inputs), Outputs: nonNil(sg.Outputs),
			Tensors: []inspectTensor{}, Operators: []inspectOperator{}}
		for ti := range sg.Tensors {
			t := &sg.Tensors[ti]
			shape := t.Shape
			if shape == nil {
				shape = []int32{}
			}
			is.Tensors = append(is.Tensors, inspectTensor{Name: escapeName(t.Name), Type: t.Type.String(), Shape: shape,
				ShapeSignature: t.ShapeSignature, Bytes: t.Size, Buffer: int(t.Buffer), Constant: m.HasData(t),
				IsVariable: t.IsVariable})
		}
		for oi := range sg.Ops {
			op := &sg.Ops[oi]
			is.Operators = append(is.Operators, inspectOperator{Name: escapeName(op.Name()), Inputs: nonNil(op.Inputs),
				Outputs: nonNil(op.Outputs), Intermediates: op.Intermediates, Calls: op.Called})
		}
		out.Subgraphs = append(out.Subgraphs, is)
	}
	return encodeJSON(out)
}

func nonNil(ids []graph.TensorID) []graph.TensorID {
	if ids == nil {
		return []graph.TensorID{}
	}
	return ids
}
