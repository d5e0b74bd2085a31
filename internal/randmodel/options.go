package randmodel

import "github.com/heliac/heliac/graph"

// withOptions gives every operator that calls subgraphs or names a
// resource variable the Options that tflite.Load reads from what
// tflite.Encode writes for it: the options table of its Called or
// Resource, every field of the schema's table (schema.fbs WhileOptions,
// IfOptions, CallOnceOptions, VarHandleOptions), a field Present when
// Encode writes it (a value other than the default, a container when
// HasContainer says so).
func withOptions(m *graph.Model) {
	index := func(name string, s graph.SubgraphIndex) graph.OptionField {
		return graph.OptionField{Name: name, Type: "int", Kind: graph.OptionInt, Int: int64(s), Present: s != 0}
	}
	for si := range m.Subgraphs {
		ops := m.Subgraphs[si].Ops
		for oi := range ops {
			op := &ops[oi]
			switch op.Code {
			case graph.While:
				op.Options = &graph.Options{Table: "WhileOptions", Fields: []graph.OptionField{
					index("cond_subgraph_index", op.Called[0]), index("body_subgraph_index", op.Called[1])}}
			case graph.If:
				op.Options = &graph.Options{Table: "IfOptions", Fields: []graph.OptionField{
					index("then_subgraph_index", op.Called[0]), index("else_subgraph_index", op.Called[1])}}
			case graph.CallOnce:
				op.Options = &graph.Options{Table: "CallOnceOptions", Fields: []graph.OptionField{
					index("init_subgraph_index", op.Called[0])}}
			case graph.Conv2D, graph.DepthwiseConv2D, graph.AveragePool2D, graph.MaxPool2D, graph.TransposeConv:
				if op.Window != nil {
					op.Options = windowOptions(op.Code, op.Window)
				}
			case graph.VarHandle:
				r := op.Resource
				op.Options = &graph.Options{Table: "VarHandleOptions", Fields: []graph.OptionField{
					{Name: "container", Type: "string", Kind: graph.OptionString, Str: r.Container, Present: r.HasContainer},
					{Name: "shared_name", Type: "string", Kind: graph.OptionString, Str: r.SharedName, Present: r.SharedName != ""}}}
			}
		}
	}
}

// windowOptions is the options table of a sliding-window operator as
// tflite.Encode writes its Window (schema.fbs Conv2DOptions,
// DepthwiseConv2DOptions, Pool2DOptions, TransposeConvOptions).
func windowOptions(code graph.Opcode, w *graph.Window) *graph.Options {
	f := func(name, typ string, v, def int32) graph.OptionField {
		return graph.OptionField{Name: name, Type: typ, Kind: graph.OptionInt, Int: int64(v), Present: v != def}
	}
	padding, sw, sh := f("padding", "Padding", int32(w.Padding), 0), f("stride_w", "int", w.StrideW, 0), f("stride_h", "int", w.StrideH, 0)
	act := f("fused_activation_function", "ActivationFunctionType", 0, 0)
	bias := f("quantized_bias_type", "TensorType", 0, 0)
	dw, dh := f("dilation_w_factor", "int", w.DilationW, 1), f("dilation_h_factor", "int", w.DilationH, 1)
	switch code {
	case graph.Conv2D:
		return &graph.Options{Table: "Conv2DOptions", Fields: []graph.OptionField{padding, sw, sh, act, dw, dh, bias}}
	case graph.DepthwiseConv2D:
		return &graph.Options{Table: "DepthwiseConv2DOptions", Fields: []graph.OptionField{padding, sw, sh,
			f("depth_multiplier", "int", w.DepthMultiplier, 0), act, dw, dh}}
	case graph.TransposeConv:
		return &graph.Options{Table: "TransposeConvOptions", Fields: []graph.OptionField{padding, sw, sh, act, bias}}
	}
	return &graph.Options{Table: "Pool2DOptions", Fields: []graph.OptionField{padding, sw, sh,
		f("filter_width", "int", w.FilterW, 0), f("filter_height", "int", w.FilterH, 0), act}}
}
