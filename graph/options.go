package graph

// Options is one options table of an operator (its builtin_options or
// builtin_options_2), read generically from the TFLite schema: the table's
// name and every field the schema declares for it, by its schema.fbs name.
// A field the file leaves out holds the schema's default and is marked not
// Present.
type Options struct {
	Table  string        // the schema's table name, e.g. "Conv2DOptions"
	Fields []OptionField // every field but deprecated ones, in schema order
}

// OptionKind says which member of an OptionField holds its value.
type OptionKind int8

// The kinds of option fields.
const (
	OptionInt     OptionKind = iota + 1 // an integer, enum or bool scalar: Int (a bool is 0 or 1)
	OptionFloat                         // a float or double scalar: Float
	OptionString                        // Str
	OptionInts                          // a vector of integers, enums or bools: Ints
	OptionFloats                        // a vector of floats or doubles: Floats
	OptionStrings                       // a vector of strings: Strs
	OptionTable                         // a nested table: Table
	OptionTables                        // a vector of tables: Tables
)

// OptionField is one field of an options table.
type OptionField struct {
	Name string
	// Type is the field's type as schema.fbs spells it: "int", "float",
	// "Padding", "[int]", "string", ...
	Type    string
	Kind    OptionKind
	Present bool // the file gives the field; otherwise the value is the schema's default
	Int     int64
	Float   float64
	Str     string
	Ints    []int64
	Floats  []float64
	Strs    []string
	Table   *Options
	Tables  []*Options
}

// Field returns the field of the given schema name, or nil when the table
// has none (or o is nil).
func (o *Options) Field(name string) *OptionField {
	if o == nil {
		return nil
	}
	for i := range o.Fields {
		if o.Fields[i].Name == name {
			return &o.Fields[i]
		}
	}
	return nil
}

// Int returns an integer, enum or bool field's value, 0 when there is no
// such field.
func (o *Options) Int(name string) int64 {
	if f := o.Field(name); f != nil {
		return f.Int
	}
	return 0
}

// Bool returns a bool field's value, false when there is no such field.
func (o *Options) Bool(name string) bool { return o.Int(name) != 0 }

// Float returns a float field's value, 0 when there is no such field.
func (o *Options) Float(name string) float64 {
	if f := o.Field(name); f != nil {
		return f.Float
	}
	return 0
}

// Str returns a string field's value, "" when there is no such field.
func (o *Options) Str(name string) string {
	if f := o.Field(name); f != nil {
		return f.Str
	}
	return ""
}

// Ints returns a vector of integers, nil when the field is absent.
func (o *Options) Ints(name string) []int64 {
	if f := o.Field(name); f != nil {
		return f.Ints
	}
	return nil
}

// Resolved returns the operator's builtin_options (Options, or Options2
// for STABLEHLO_COMPOSITE) with the fields that Window, Called and
// Resource describe taken from those: they are what heliac plans by, so
// where a caller changed one of them and not Options, they win. It returns
// the table itself when nothing differs, and a copy otherwise; nil when
// the operator has no such table.
func (op *Op) Resolved() *Options {
	o := op.Options
	if op.Code == StablehloComposite {
		o = op.Options2
	}
	if o == nil {
		return nil
	}
	var ints []struct {
		name string
		v    int64
	}
	add := func(name string, v int64) {
		ints = append(ints, struct {
			name string
			v    int64
		}{name, v})
	}
	if w := op.Window; w != nil {
		switch {
		case op.Code == Conv2D && o.Table == "Conv2DOptions",
			op.Code == DepthwiseConv2D && o.Table == "DepthwiseConv2DOptions":
			add("padding", int64(w.Padding))
			add("stride_w", int64(w.StrideW))
			add("stride_h", int64(w.StrideH))
			add("dilation_w_factor", int64(w.DilationW))
			add("dilation_h_factor", int64(w.DilationH))
			if op.Code == DepthwiseConv2D {
				add("depth_multiplier", int64(w.DepthMultiplier))
			}
		case op.Code == TransposeConv && o.Table == "TransposeConvOptions":
			add("padding", int64(w.Padding))
			add("stride_w", int64(w.StrideW))
			add("stride_h", int64(w.StrideH))
		case (op.Code == AveragePool2D || op.Code == MaxPool2D) && o.Table == "Pool2DOptions":
			add("padding", int64(w.Padding))
			add("stride_w", int64(w.StrideW))
			add("stride_h", int64(w.StrideH))
			add("filter_width", int64(w.FilterW))
			add("filter_height", int64(w.FilterH))
		}
	}
	called := map[Opcode]struct {
		table  string
		fields []string
	}{
		While:              {"WhileOptions", []string{"cond_subgraph_index", "body_subgraph_index"}},
		If:                 {"IfOptions", []string{"then_subgraph_index", "else_subgraph_index"}},
		CallOnce:           {"CallOnceOptions", []string{"init_subgraph_index"}},
		StablehloComposite: {"StableHLOCompositeOptions", []string{"decomposition_subgraph_index"}},
	}
	if c, ok := called[op.Code]; ok && o.Table == c.table && len(op.Called) == len(c.fields) {
		for i, name := range c.fields {
			add(name, int64(op.Called[i]))
		}
	}
	type str struct {
		name    string
		v       string
		present bool
	}
	var strs []str
	if r := op.Resource; r != nil && op.Code == VarHandle && o.Table == "VarHandleOptions" {
		// ResourceName says whether the container is given; an absent
		// shared_name reads as "", as it does in liveness.
		shared := o.Field("shared_name")
		strs = append(strs, str{"container", r.Container, r.HasContainer},
			str{"shared_name", r.SharedName, r.SharedName != "" || shared != nil && shared.Present})
	}
	differs := false
	for _, f := range ints {
		if g := o.Field(f.name); g != nil && g.Kind == OptionInt && g.Int != f.v {
			differs = true
		}
	}
	for _, s := range strs {
		if g := o.Field(s.name); g != nil && g.Kind == OptionString && (g.Str != s.v || g.Present != s.present) {
			differs = true
		}
	}
	if !differs {
		return o
	}
	c := &Options{Table: o.Table, Fields: append([]OptionField(nil), o.Fields...)}
	for _, f := range ints {
		if g := c.Field(f.name); g != nil && g.Kind == OptionInt && g.Int != f.v {
			g.Int, g.Present = f.v, true
		}
	}
	for _, s := range strs {
		if g := c.Field(s.name); g != nil && g.Kind == OptionString {
			g.Str, g.Present = s.v, s.present
		}
	}
	return c
}
