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
