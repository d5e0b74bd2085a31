package tflite

import (
	"fmt"
	"reflect"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/heliac/heliac/tflite/schema"
)

// The object API of the bindings (flatc --gen-object-api, tflite/schema)
// loses two things the rewrite must keep, so its generated Pack is not
// used; packModel writes the T structs by the description of schema.fbs
// (fbs.go) instead, every table with one function:
//
//   - Absent and empty differ. UnPack reads an absent string as "" and an
//     absent vector as an empty one, and Pack writes both back present.
//     Readers tell them apart: TFLM reads VarHandleOptions without a
//     container as "a variable of that shared_name in any container", and
//     with container "" as the container named "" (ParseVarHandle in
//     tensorflow/lite/core/api/flatbuffer_conversions.cc and FindId in
//     tensorflow/lite/micro/micro_resource_variable.cc, TFLM 90b983c), and
//     a kernel given custom_options of length 0 is not one given none.
//     unpack records every string the input leaves out (objectModel.absent)
//     and sets every absent vector to nil; packModel writes neither. A
//     value the rewrite adds (a metadata entry, a buffer) is present.
//   - force_align: the generated Pack writes byte vectors 4-byte aligned;
//     the schema asks for 16 on Buffer.data and CustomQuantization.custom
//     (the TFLite converter writes them so, and kernels may rely on it).
//     packModel aligns every vector as the schema says (fbsField.align).
//
// A scalar equal to its default is left out, as the generated Pack does.
// pack_test.go fills every field of every table, and leaves every optional
// one out, and checks that both come back as they were.

// fieldRef names a field of one object-API value: table is the *XxxT,
// field the index of the field among the table's live fields (the order of
// the T struct's fields).
type fieldRef struct {
	table any
	field int
}

// packer writes T structs as flatbuffer tables.
type packer struct {
	b      *flatbuffers.Builder
	s      *fbsSchema
	absent map[fieldRef]bool // strings to leave out
}

// packModel writes m, leaving out the strings absent names, and returns
// the root table's offset.
func packModel(m *schema.ModelT, b *flatbuffers.Builder, absent map[fieldRef]bool) flatbuffers.UOffsetT {
	s := tfliteSchema()
	p := &packer{b: b, s: s, absent: absent}
	return p.table(reflect.ValueOf(m), s.tables[s.root])
}

// table writes v, a *XxxT of the table td, and returns its offset; a nil
// v is left out (offset 0).
func (p *packer) table(v reflect.Value, td *fbsTableDef) flatbuffers.UOffsetT {
	if v.IsNil() {
		return 0
	}
	st := v.Elem()
	fields := td.live()
	offs := make([]flatbuffers.UOffsetT, len(fields))
	for i, f := range fields {
		fv := st.Field(i)
		switch f.typ.kind {
		case fbsString:
			if !p.absent[fieldRef{v.Interface(), i}] {
				offs[i] = p.b.CreateString(fv.String())
			}
		case fbsTable:
			offs[i] = p.table(fv, p.s.tables[f.typ.name])
		case fbsUnion:
			if typ, val := unionOf(fv); val.IsValid() {
				offs[i] = p.table(val, p.s.tables[p.s.unions[f.typ.name].members[typ]])
			}
		case fbsVector:
			offs[i] = p.vector(fv, f)
		}
	}
	p.b.StartObject(len(td.bySlot))
	for i, f := range fields {
		fv := st.Field(i)
		switch f.typ.kind {
		case fbsScalar:
			p.scalar(slotOf(f.vt), fv, f.def)
		case fbsUnion:
			if typ, val := unionOf(fv); val.IsValid() {
				p.b.PrependByteSlot(slotOf(f.typeVT), byte(typ), 0)
			}
			p.b.PrependUOffsetTSlot(slotOf(f.vt), offs[i], 0)
		default:
			p.b.PrependUOffsetTSlot(slotOf(f.vt), offs[i], 0)
		}
	}
	return p.b.EndObject()
}

func slotOf(vt flatbuffers.VOffsetT) int { return int(vt-4) / 2 }

// unionOf returns the type and value of a union field (a *XxxT with Type
// and Value), or an invalid value when it has none.
func unionOf(fv reflect.Value) (int, reflect.Value) {
	if fv.IsNil() {
		return 0, reflect.Value{}
	}
	typ, val := int(fv.Elem().Field(0).Uint()), fv.Elem().Field(1)
	if typ == 0 || val.IsNil() {
		return 0, reflect.Value{}
	}
	return typ, val.Elem()
}

// scalar writes a scalar field, unless it holds its default.
func (p *packer) scalar(slot int, v reflect.Value, def int64) {
	b := p.b
	switch v.Kind() {
	case reflect.Bool:
		b.PrependBoolSlot(slot, v.Bool(), def != 0)
	case reflect.Int8:
		b.PrependInt8Slot(slot, int8(v.Int()), int8(def))
	case reflect.Int16:
		b.PrependInt16Slot(slot, int16(v.Int()), int16(def))
	case reflect.Int32:
		b.PrependInt32Slot(slot, int32(v.Int()), int32(def))
	case reflect.Int64:
		b.PrependInt64Slot(slot, v.Int(), def)
	case reflect.Uint8:
		b.PrependUint8Slot(slot, uint8(v.Uint()), uint8(def))
	case reflect.Uint16:
		b.PrependUint16Slot(slot, uint16(v.Uint()), uint16(def))
	case reflect.Uint32:
		b.PrependUint32Slot(slot, uint32(v.Uint()), uint32(def))
	case reflect.Uint64:
		b.PrependUint64Slot(slot, v.Uint(), uint64(def))
	case reflect.Float32:
		b.PrependFloat32Slot(slot, float32(v.Float()), float32(def))
	case reflect.Float64:
		b.PrependFloat64Slot(slot, v.Float(), float64(def))
	default:
		panic(fmt.Sprintf("tflite: pack: %s is not a scalar", v.Type()))
	}
}

// vector writes a vector field; a nil slice is left out (offset 0). Its
// contents start aligned to their element size, or to the field's
// force_align when larger, from the end of the buffer; Finish pads the
// whole flatbuffer to a multiple of the largest alignment, so they are
// aligned from its start too.
func (p *packer) vector(v reflect.Value, f *fbsField) flatbuffers.UOffsetT {
	if v.IsNil() {
		return 0
	}
	b, n, el := p.b, v.Len(), f.typ.elem
	if el.kind != fbsScalar {
		offs := make([]flatbuffers.UOffsetT, n)
		for j := range offs {
			if el.kind == fbsString {
				offs[j] = b.CreateString(v.Index(j).String())
			} else {
				offs[j] = p.table(v.Index(j), p.s.tables[el.name])
			}
		}
		b.StartVector(4, n, 4)
		for j := n - 1; j >= 0; j-- {
			b.PrependUOffsetT(offs[j])
		}
		return b.EndVector(n)
	}
	align := int(max(el.size, f.align))
	if v.Type().Elem().Kind() == reflect.Uint8 {
		b.Prep(align, n)
		return b.CreateByteVector(v.Bytes())
	}
	b.StartVector(int(el.size), n, align)
	for j := n - 1; j >= 0; j-- {
		switch e := v.Index(j); e.Kind() {
		case reflect.Bool:
			b.PrependBool(e.Bool())
		case reflect.Int8:
			b.PrependInt8(int8(e.Int()))
		case reflect.Int16:
			b.PrependInt16(int16(e.Int()))
		case reflect.Int32:
			b.PrependInt32(int32(e.Int()))
		case reflect.Int64:
			b.PrependInt64(e.Int())
		case reflect.Uint16:
			b.PrependUint16(uint16(e.Uint()))
		case reflect.Uint32:
			b.PrependUint32(uint32(e.Uint()))
		case reflect.Uint64:
			b.PrependUint64(e.Uint())
		case reflect.Float32:
			b.PrependFloat32(float32(e.Float()))
		case reflect.Float64:
			b.PrependFloat64(e.Float())
		default:
			panic(fmt.Sprintf("tflite: pack: %s is not a scalar", e.Type()))
		}
	}
	return b.EndVector(n)
}

// markAbsent records in absent every string field of the tree under v (a
// *XxxT of table td, unpacked from tab) that tab's flatbuffer leaves out,
// and sets every vector it leaves out to nil.
func markAbsent(tab flatbuffers.Table, td *fbsTableDef, v reflect.Value, absent map[fieldRef]bool) {
	s := tfliteSchema()
	st := v.Elem()
	for i, f := range td.live() {
		fv := st.Field(i)
		off := flatbuffers.UOffsetT(tab.Offset(f.vt))
		sub := flatbuffers.Table{Bytes: tab.Bytes}
		switch f.typ.kind {
		case fbsString:
			if off == 0 {
				absent[fieldRef{v.Interface(), i}] = true
			}
		case fbsVector:
			if off == 0 {
				fv.Set(reflect.Zero(fv.Type()))
				continue
			}
			if f.typ.elem.kind != fbsTable {
				continue
			}
			start := tab.Vector(off)
			for j := 0; j < fv.Len(); j++ {
				sub.Pos = tab.Indirect(start + flatbuffers.UOffsetT(4*j))
				markAbsent(sub, s.tables[f.typ.elem.name], fv.Index(j), absent)
			}
		case fbsTable:
			if off != 0 && !fv.IsNil() {
				sub.Pos = tab.Indirect(off + tab.Pos)
				markAbsent(sub, s.tables[f.typ.name], fv, absent)
			}
		case fbsUnion:
			if typ, val := unionOf(fv); off != 0 && val.IsValid() {
				sub.Pos = tab.Indirect(off + tab.Pos)
				markAbsent(sub, s.tables[s.unions[f.typ.name].members[typ]], val, absent)
			}
		}
	}
}
