package tflite

import (
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/tflite/schema"
)

// Every operator's options reach the graph generically, by the description
// of schema.fbs in fbs.go: readOptions runs after walkModel has checked
// every table, vector and string of the file, so it reads without further
// checks what the walker accepted, and skips what the walker skips (a
// union value of a type the schema does not know, fields past the schema's
// last).

// allOptions fills Options, Options2 and CustomOptions of every operator.
func (l *loader) allOptions() {
	s := tfliteSchema()
	for si := range l.m.Subgraphs {
		var sg schema.SubGraph
		l.fb.Subgraphs(&sg, si)
		ops := l.m.Subgraphs[si].Ops
		for oi := range ops {
			var op schema.Operator
			sg.Operators(&op, oi)
			out := &ops[oi]
			var tab flatbuffers.Table
			if t := int(op.BuiltinOptionsType()); t > 0 && t < len(s.unions["BuiltinOptions"].members) && op.BuiltinOptions(&tab) {
				out.Options = readOptions(s, tab.Bytes, int64(tab.Pos), s.tables[s.unions["BuiltinOptions"].members[t]])
			}
			if t := int(op.BuiltinOptions2Type()); t > 0 && t < len(s.unions["BuiltinOptions2"].members) && op.BuiltinOptions2(&tab) {
				out.Options2 = readOptions(s, tab.Bytes, int64(tab.Pos), s.tables[s.unions["BuiltinOptions2"].members[t]])
			}
			// TFLM reads only the inline vector (micro_interpreter.cc
			// PrepareNodeAndRegistrationDataFromFlatbuffer), and so does
			// heliac: the large_custom_options form is left out.
			if tab := op.Table(); tab.Offset(14) != 0 {
				c := op.CustomOptionsBytes()
				if c == nil {
					c = []byte{}
				}
				out.CustomOptions = c[:len(c):len(c)]
			}
		}
	}
}

// readOptions reads the table of type t at pos of data.
func readOptions(s *fbsSchema, data []byte, pos int64, t *fbsTableDef) *graph.Options {
	tab := flatbuffers.Table{Bytes: data, Pos: flatbuffers.UOffsetT(pos)}
	out := &graph.Options{Table: t.name, Fields: make([]graph.OptionField, 0, len(t.live()))}
	for _, f := range t.live() {
		of := graph.OptionField{Name: f.name, Type: fbsTypeName(f.typ)}
		rel := tab.Offset(f.vt)
		of.Present = rel != 0
		at := tab.Pos + flatbuffers.UOffsetT(rel)
		switch f.typ.kind {
		case fbsScalar:
			if isFloat(f.typ.base) {
				of.Kind = graph.OptionFloat
				if of.Present {
					of.Float = readFloat(data, at, f.typ.base)
				}
			} else {
				of.Kind = graph.OptionInt
				of.Int = f.def
				if of.Present {
					of.Int = readInt(data, at, f.typ.base)
				}
			}
		case fbsString:
			of.Kind = graph.OptionString
			if of.Present {
				of.Str = string(tab.ByteVector(at))
			}
		case fbsTable:
			of.Kind = graph.OptionTable
			if of.Present {
				of.Table = readOptions(s, data, int64(tab.Indirect(at)), s.tables[f.typ.name])
			}
		case fbsVector:
			readVector(s, &tab, at, f.typ.elem, &of)
		default:
			// A union inside an options table: none in the schema (the
			// parser would need a type byte here); left out.
			continue
		}
		out.Fields = append(out.Fields, of)
	}
	return out
}

// readVector reads the vector field stored at at into of.
func readVector(s *fbsSchema, tab *flatbuffers.Table, at flatbuffers.UOffsetT, elem *fbsType, of *graph.OptionField) {
	n, start := 0, flatbuffers.UOffsetT(0)
	if of.Present {
		n, start = tab.VectorLen(at-tab.Pos), tab.Vector(at-tab.Pos)
	}
	data := tab.Bytes
	switch {
	case elem.kind == fbsScalar && isFloat(elem.base):
		of.Kind = graph.OptionFloats
		if of.Present {
			of.Floats = make([]float64, n)
			for i := range of.Floats {
				of.Floats[i] = readFloat(data, start+flatbuffers.UOffsetT(int64(i)*elem.size), elem.base)
			}
		}
	case elem.kind == fbsScalar:
		of.Kind = graph.OptionInts
		if of.Present {
			of.Ints = make([]int64, n)
			for i := range of.Ints {
				of.Ints[i] = readInt(data, start+flatbuffers.UOffsetT(int64(i)*elem.size), elem.base)
			}
		}
	case elem.kind == fbsString:
		of.Kind = graph.OptionStrings
		if of.Present {
			of.Strs = make([]string, n)
			for i := range of.Strs {
				of.Strs[i] = string(tab.ByteVector(start + flatbuffers.UOffsetT(4*i)))
			}
		}
	default:
		of.Kind = graph.OptionTables
		if of.Present {
			of.Tables = make([]*graph.Options, n)
			for i := range of.Tables {
				p := start + flatbuffers.UOffsetT(4*i)
				of.Tables[i] = readOptions(s, data, int64(tab.Indirect(p)), s.tables[elem.name])
			}
		}
	}
}

// fbsTypeName spells a field's type as schema.fbs does.
func fbsTypeName(t fbsType) string {
	switch t.kind {
	case fbsScalar:
		if t.name != "" {
			return t.name
		}
		return t.base
	case fbsString:
		return "string"
	case fbsVector:
		return "[" + fbsTypeName(*t.elem) + "]"
	}
	return t.name
}

func isFloat(base string) bool {
	switch base {
	case "float", "float32", "double", "float64":
		return true
	}
	return false
}

// readInt reads a scalar of the schema type base at pos.
func readInt(data []byte, pos flatbuffers.UOffsetT, base string) int64 {
	b := data[pos:]
	switch base {
	case "bool", "ubyte", "uint8":
		return int64(b[0])
	case "byte", "int8":
		return int64(int8(b[0]))
	case "short", "int16":
		return int64(flatbuffers.GetInt16(b))
	case "ushort", "uint16":
		return int64(flatbuffers.GetUint16(b))
	case "int", "int32":
		return int64(flatbuffers.GetInt32(b))
	case "uint", "uint32":
		return int64(flatbuffers.GetUint32(b))
	case "long", "int64":
		return flatbuffers.GetInt64(b)
	case "ulong", "uint64":
		return int64(flatbuffers.GetUint64(b)) // two's complement past 2^63
	}
	panic(fmt.Sprintf("tflite: readInt: scalar type %q", base))
}

// readFloat reads a float or double at pos.
func readFloat(data []byte, pos flatbuffers.UOffsetT, base string) float64 {
	if base == "double" || base == "float64" {
		return flatbuffers.GetFloat64(data[pos:])
	}
	return float64(flatbuffers.GetFloat32(data[pos:]))
}
