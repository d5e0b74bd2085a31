package stripe

import "github.com/heliac/heliac/graph"

// The options tables of the operators the rewrite adds, built as the
// loader reads them (graph.Options: every field of the schema's table in
// schema order, Present when the file gives it) so that tflite.Encode
// writes them and Load reads the same back.

func intField(name, typ string, v int64, present bool) graph.OptionField {
	return graph.OptionField{Name: name, Type: typ, Kind: graph.OptionInt, Present: present, Int: v}
}

// stridedSliceOptions: StridedSliceOptions with every mask 0 and offset
// false, none of them written.
func stridedSliceOptions() *graph.Options {
	return &graph.Options{Table: "StridedSliceOptions", Fields: []graph.OptionField{
		intField("begin_mask", "int", 0, false),
		intField("end_mask", "int", 0, false),
		intField("ellipsis_mask", "int", 0, false),
		intField("new_axis_mask", "int", 0, false),
		intField("shrink_axis_mask", "int", 0, false),
		intField("offset", "bool", 0, false),
	}}
}

// padOptions: PadOptions, a table without fields.
func padOptions() *graph.Options {
	return &graph.Options{Table: "PadOptions", Fields: []graph.OptionField{}}
}

// concatenationOptions: axis written, fused activation NONE (not written).
func concatenationOptions(axis int64) *graph.Options {
	return &graph.Options{Table: "ConcatenationOptions", Fields: []graph.OptionField{
		intField("axis", "int", axis, true),
		intField("fused_activation_function", "ActivationFunctionType", 0, false),
	}}
}

// withPadding returns a copy of a Conv2DOptions or DepthwiseConv2DOptions
// table with its padding field set (and written); nil stays nil.
func withPadding(o *graph.Options, p graph.Padding) *graph.Options {
	if o == nil {
		return nil
	}
	c := &graph.Options{Table: o.Table, Fields: append([]graph.OptionField(nil), o.Fields...)}
	if f := c.Field("padding"); f != nil {
		f.Int, f.Present = int64(p), true
	}
	return c
}
