package tflite

import (
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/heliac/heliac/graph"
)

// Encode writes graph.Op.Options and Options2 generically, by the
// description of schema.fbs in fbs.go, as readOptions reads them: every
// Present field, in declaration order, a scalar even when it equals its
// default, so that Load gives back the same Present flags.

// optionsTable writes o as a member of the union ("BuiltinOptions" or
// "BuiltinOptions2") and returns its type byte and offset. o has been
// validated (validateOptions).
func (e *encoder) optionsTable(union string, o *graph.Options) (byte, flatbuffers.UOffsetT) {
	s := tfliteSchema()
	typ := 0
	for i, m := range s.unions[union].members {
		if m == o.Table && i > 0 {
			typ = i
		}
	}
	return byte(typ), e.optionsBody(s, s.tables[o.Table], o)
}

func (e *encoder) optionsBody(s *fbsSchema, t *fbsTableDef, o *graph.Options) flatbuffers.UOffsetT {
	b := e.b
	live := t.live()
	offs := make([]flatbuffers.UOffsetT, len(live))
	for i, f := range live {
		of := o.Field(f.name)
		if of == nil || !of.Present || f.typ.kind == fbsScalar {
			continue
		}
		switch of.Kind {
		case graph.OptionString:
			offs[i] = b.CreateString(of.Str)
		case graph.OptionTable:
			offs[i] = e.optionsBody(s, s.tables[f.typ.name], of.Table)
		case graph.OptionStrings:
			strs := make([]flatbuffers.UOffsetT, len(of.Strs))
			for j, v := range of.Strs {
				strs[j] = b.CreateString(v)
			}
			offs[i] = e.offsetVector(strs)
		case graph.OptionTables:
			tabs := make([]flatbuffers.UOffsetT, len(of.Tables))
			for j, v := range of.Tables {
				tabs[j] = e.optionsBody(s, s.tables[f.typ.elem.name], v)
			}
			offs[i] = e.offsetVector(tabs)
		case graph.OptionInts, graph.OptionFloats:
			el := f.typ.elem
			n := len(of.Ints) + len(of.Floats)
			align := max(el.size, f.align)
			b.StartVector(int(el.size), n, int(align))
			for j := n - 1; j >= 0; j-- {
				if of.Kind == graph.OptionFloats {
					prependFloat(b, el.base, of.Floats[j])
				} else {
					prependInt(b, el.base, of.Ints[j])
				}
			}
			offs[i] = b.EndVector(n)
		}
	}
	b.StartObject(len(t.bySlot))
	for i, f := range live {
		of := o.Field(f.name)
		if of == nil || !of.Present {
			continue
		}
		slot := int(f.vt-4) / 2
		if f.typ.kind != fbsScalar {
			b.PrependUOffsetTSlot(slot, offs[i], 0)
			continue
		}
		if of.Kind == graph.OptionFloat {
			prependFloat(b, f.typ.base, of.Float)
		} else {
			prependInt(b, f.typ.base, of.Int)
		}
		b.Slot(slot)
	}
	return b.EndObject()
}

func (e *encoder) offsetVector(offs []flatbuffers.UOffsetT) flatbuffers.UOffsetT {
	b := e.b
	b.StartVector(4, len(offs), 4)
	for j := len(offs) - 1; j >= 0; j-- {
		b.PrependUOffsetT(offs[j])
	}
	return b.EndVector(len(offs))
}

func prependInt(b *flatbuffers.Builder, base string, v int64) {
	switch base {
	case "bool":
		b.PrependBool(v != 0)
	case "byte", "int8":
		b.PrependInt8(int8(v))
	case "ubyte", "uint8":
		b.PrependUint8(uint8(v))
	case "short", "int16":
		b.PrependInt16(int16(v))
	case "ushort", "uint16":
		b.PrependUint16(uint16(v))
	case "int", "int32":
		b.PrependInt32(int32(v))
	case "uint", "uint32":
		b.PrependUint32(uint32(v))
	case "long", "int64":
		b.PrependInt64(v)
	default:
		b.PrependUint64(uint64(v))
	}
}

func prependFloat(b *flatbuffers.Builder, base string, v float64) {
	if base == "double" || base == "float64" {
		b.PrependFloat64(v)
		return
	}
	b.PrependFloat32(float32(v))
}

// validateOptions checks that o is a table of the union and that every
// field names a field of it, with the kind and range its schema type has.
func validateOptions(path, union string, o *graph.Options) error {
	s := tfliteSchema()
	found := false
	for i, m := range s.unions[union].members {
		found = found || (i > 0 && m == o.Table)
	}
	if !found {
		return invalid(path, "%q is not a table of the schema's %s", o.Table, union)
	}
	return validateTable(s, path, s.tables[o.Table], o)
}

func validateTable(s *fbsSchema, path string, t *fbsTableDef, o *graph.Options) error {
	if o == nil {
		return invalid(path, "nil options table")
	}
	if o.Table != t.name {
		return invalid(path, "table %q where the schema has %s", o.Table, t.name)
	}
	seen := map[string]bool{}
	for i := range o.Fields {
		of := &o.Fields[i]
		fp := fmt.Sprintf("%s.%s", path, of.Name)
		var f *fbsField
		for _, lf := range t.live() {
			if lf.name == of.Name {
				f = lf
			}
		}
		if f == nil {
			return invalid(fp, "%s has no field %q", t.name, of.Name)
		}
		if seen[of.Name] {
			return invalid(fp, "field given twice")
		}
		seen[of.Name] = true
		want := optionKind(f.typ)
		if of.Kind != want {
			return invalid(fp, "kind %d where the schema's %s wants %d", of.Kind, fbsTypeName(f.typ), want)
		}
		if !of.Present {
			continue
		}
		switch of.Kind {
		case graph.OptionInt:
			if !fitsScalar(f.typ.base, of.Int) {
				return invalid(fp, "%d does not fit the schema's %s", of.Int, fbsTypeName(f.typ))
			}
		case graph.OptionInts:
			for j, v := range of.Ints {
				if !fitsScalar(f.typ.elem.base, v) {
					return invalid(fmt.Sprintf("%s[%d]", fp, j), "%d does not fit the schema's %s", v, f.typ.elem.base)
				}
			}
		case graph.OptionTable:
			if err := validateTable(s, fp, s.tables[f.typ.name], of.Table); err != nil {
				return err
			}
		case graph.OptionTables:
			for j, v := range of.Tables {
				if err := validateTable(s, fmt.Sprintf("%s[%d]", fp, j), s.tables[f.typ.elem.name], v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// optionKind is the OptionKind of a field of type t.
func optionKind(t fbsType) graph.OptionKind {
	switch t.kind {
	case fbsScalar:
		if isFloat(t.base) {
			return graph.OptionFloat
		}
		return graph.OptionInt
	case fbsString:
		return graph.OptionString
	case fbsTable:
		return graph.OptionTable
	case fbsVector:
		switch {
		case t.elem.kind == fbsScalar && isFloat(t.elem.base):
			return graph.OptionFloats
		case t.elem.kind == fbsScalar:
			return graph.OptionInts
		case t.elem.kind == fbsString:
			return graph.OptionStrings
		}
		return graph.OptionTables
	}
	return 0
}

// fitsScalar reports whether v is a value of the schema's scalar type base.
func fitsScalar(base string, v int64) bool {
	lo, hi := int64(0), int64(0)
	switch base {
	case "bool":
		lo, hi = 0, 1
	case "byte", "int8":
		lo, hi = -1<<7, 1<<7-1
	case "ubyte", "uint8":
		lo, hi = 0, 1<<8-1
	case "short", "int16":
		lo, hi = -1<<15, 1<<15-1
	case "ushort", "uint16":
		lo, hi = 0, 1<<16-1
	case "int", "int32":
		lo, hi = -1<<31, 1<<31-1
	case "uint", "uint32":
		lo, hi = 0, 1<<32-1
	default: // long, ulong (stored as its two's complement)
		return true
	}
	return v >= lo && v <= hi
}
