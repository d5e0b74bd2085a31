package tflite

import (
	"reflect"
	"strings"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFBS(t *testing.T) {
	s := tfliteSchema()
	assert.Equal(t, "Model", s.root)
	assert.Len(t, s.tables, 170)
	assert.Len(t, s.unions, 4)

	field := func(table, name string) *fbsField {
		for i, f := range s.tables[table].fields {
			if f.name == name {
				return &s.tables[table].fields[i]
			}
		}
		t.Fatalf("%s.%s not parsed", table, name)
		return nil
	}
	tests := []struct {
		table, field string
		want         fbsField
	}{
		{"Buffer", "data", fbsField{vt: 4, typ: fbsType{kind: fbsVector, elem: &fbsType{kind: fbsScalar, size: 1, base: "ubyte"}}, align: 16}},
		{"Buffer", "size", fbsField{vt: 8, typ: fbsType{kind: fbsScalar, size: 8, base: "ulong"}}},
		{"CustomQuantization", "custom", fbsField{vt: 4, typ: fbsType{kind: fbsVector, elem: &fbsType{kind: fbsScalar, size: 1, base: "ubyte"}}, align: 16}},
		{"Uint16Vector", "values", fbsField{vt: 4, typ: fbsType{kind: fbsVector, elem: &fbsType{kind: fbsScalar, size: 2, base: "ushort"}}, align: 4}},
		// Unions take two slots, the type byte first.
		{"Operator", "builtin_options", fbsField{vt: 12, typeVT: 10, typ: fbsType{kind: fbsUnion, name: "BuiltinOptions"}}},
		{"Operator", "custom_options", fbsField{vt: 14, typ: fbsType{kind: fbsVector, elem: &fbsType{kind: fbsScalar, size: 1, base: "ubyte"}}}},
		{"Operator", "builtin_options_2", fbsField{vt: 28, typeVT: 26, typ: fbsType{kind: fbsUnion, name: "BuiltinOptions2"}}},
		{"Operator", "debug_metadata_index", fbsField{vt: 30, typ: fbsType{kind: fbsScalar, size: 4, base: "int"}, def: -1}},
		{"QuantizationParameters", "details", fbsField{vt: 14, typeVT: 12, typ: fbsType{kind: fbsUnion, name: "QuantizationDetails"}}},
		{"QuantizationParameters", "quantized_dimension", fbsField{vt: 16, typ: fbsType{kind: fbsScalar, size: 4, base: "int"}}},
		// Deprecated fields keep their slot.
		{"SignatureDef", "deprecated_tag", fbsField{vt: 10, typ: fbsType{kind: fbsString}, deprecated: true}},
		{"SignatureDef", "subgraph_index", fbsField{vt: 12, typ: fbsType{kind: fbsScalar, size: 4, base: "uint"}}},
		{"ResizeBilinearOptions", "new_width", fbsField{vt: 6, typ: fbsType{kind: fbsScalar, size: 4, base: "int"}, deprecated: true}},
		// Enum defaults by name; bool defaults.
		{"FullyConnectedOptions", "weights_format", fbsField{vt: 6, typ: fbsType{kind: fbsScalar, size: 1, name: "FullyConnectedOptionsWeightsFormat", base: "byte"}}},
		{"LSTMOptions", "kernel_type", fbsField{vt: 10, typ: fbsType{kind: fbsScalar, size: 1, name: "LSTMKernelType", base: "byte"}}},
		{"BidirectionalSequenceLSTMOptions", "time_major", fbsField{vt: 12, typ: fbsType{kind: fbsScalar, size: 1, base: "bool"}, def: 1}},
		{"Model", "subgraphs", fbsField{vt: 8, typ: fbsType{kind: fbsVector, elem: &fbsType{kind: fbsTable, name: "SubGraph"}}}},
		{"SignatureDef", "inputs", fbsField{vt: 4, typ: fbsType{kind: fbsVector, elem: &fbsType{kind: fbsTable, name: "TensorMap"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.table+"."+tt.field, func(t *testing.T) {
			want := tt.want
			want.name = tt.field
			assert.Equal(t, &want, field(tt.table, tt.field))
		})
	}
	assert.True(t, s.tables["ReduceWindowOptions"].deprecated)
	assert.Equal(t, "ReduceWindowOptions", s.unions["BuiltinOptions2"].members[20])
	assert.Equal(t, int64(1), s.enums["LSTMKernelType"].values["BASIC"])
}

// The loader's hand-written field specs (check.go) agree with the schema.
func TestCheckSpecsMatchSchema(t *testing.T) {
	s := tfliteSchema()
	specs := []struct {
		table string
		specs []fieldSpec
	}{
		{"Model", modelFields}, {"OperatorCode", operatorCodeFields}, {"SubGraph", subgraphFields},
		{"Tensor", tensorFields}, {"QuantizationParameters", quantizationFields}, {"Operator", operatorFields},
		{"Buffer", bufferFields}, {"Metadata", metadataFields}, {"SignatureDef", signatureFields},
		{"TensorMap", tensorMapFields}, {"WhileOptions", twoIndexFields}, {"IfOptions", twoIndexFields},
		{"CallOnceOptions", twoIndexFields[:1]}, {"VarHandleOptions", varHandleFields},
		{"StableHLOCompositeOptions", compositeFields},
	}
	for _, tc := range specs {
		td := s.tables[tc.table]
		require.NotNil(t, td, tc.table)
		for _, spec := range tc.specs {
			slot := int(spec.vt-4) / 2
			require.Less(t, slot, len(td.bySlot), "%s.%s", tc.table, spec.name)
			f := td.bySlot[slot]
			if f == nil { // a union's type byte
				f = td.bySlot[slot+1]
				assert.Equal(t, spec.name, f.name+"_type", "%s slot %d", tc.table, slot)
				assert.Equal(t, fieldSpec{spec.name, f.typeVT, kindScalar, 1}, spec)
				continue
			}
			if !strings.HasSuffix(tc.table, "Options") {
				assert.Equal(t, f.name, spec.name, "%s slot %d", tc.table, slot)
			}
			var want fieldSpec
			switch f.typ.kind {
			case fbsScalar:
				want = fieldSpec{spec.name, f.vt, kindScalar, f.typ.size}
			case fbsString:
				want = fieldSpec{spec.name, f.vt, kindString, 0}
			case fbsTable, fbsUnion:
				want = fieldSpec{spec.name, f.vt, kindOffset, 0}
			case fbsVector:
				want = fieldSpec{spec.name, f.vt, kindVector, f.typ.elem.size}
				if f.typ.elem.kind != fbsScalar {
					want.kind, want.size = kindVectorRef, 0
				}
			}
			assert.Equal(t, want, spec, "%s.%s", tc.table, spec.name)
		}
	}
}

// Every table of the schema has a T struct in the object API whose fields
// are the schema's fields that are not deprecated, in order, with the
// schema's names (json tags) and matching Go types.
func TestSchemaMatchesObjectAPI(t *testing.T) {
	s := tfliteSchema()
	ot := findObjectTypes(t)
	var missing []string
	for _, name := range s.order {
		if ot.tables[name] == nil {
			missing = append(missing, name)
		}
	}
	assert.Empty(t, missing, "tables unreachable from ModelT")
	assert.Len(t, ot.tables, len(s.tables), "T structs that are not schema tables")

	for _, name := range s.order {
		rt := ot.tables[name]
		if rt == nil {
			continue
		}
		live := liveFields(s.tables[name])
		if !assert.Equal(t, len(live), rt.NumField(), "%s: fields", name) {
			continue
		}
		for i, f := range live {
			sf := rt.Field(i)
			assert.Equal(t, f.name, sf.Tag.Get("json"), "%s field %d", name, i)
			assert.True(t, goTypeMatches(s, ot, f.typ, sf.Type), "%s.%s: schema type %+v, Go type %s", name, f.name, f.typ, sf.Type)
		}
	}
}

func goTypeMatches(s *fbsSchema, ot *objectTypes, ft fbsType, rt reflect.Type) bool {
	switch ft.kind {
	case fbsScalar:
		switch rt.Kind() {
		case reflect.Bool, reflect.Int8, reflect.Uint8, reflect.Int16, reflect.Uint16, reflect.Int32,
			reflect.Uint32, reflect.Int64, reflect.Uint64, reflect.Float32, reflect.Float64:
			return int64(rt.Size()) == ft.size
		}
		return false
	case fbsString:
		return rt.Kind() == reflect.String
	case fbsTable:
		return rt.Kind() == reflect.Pointer && rt.Elem() == ot.tables[ft.name]
	case fbsUnion:
		return rt.Kind() == reflect.Pointer && rt.Elem().Name() == ft.name+"T" && rt.Elem().NumField() == 2
	case fbsVector:
		return rt.Kind() == reflect.Slice && goTypeMatches(s, ot, *ft.elem, rt.Elem())
	}
	return false
}

func TestParseFBSRejects(t *testing.T) {
	tests := []struct {
		name, src, wantErr string
	}{
		{"struct", "struct S { a:int; }", `unsupported declaration "struct"`},
		{"include", `include "x.fbs";`, `unsupported declaration "include"`},
		{"unknown type", "table T { a:Foo; } root_type T;", `T.a: unknown type "Foo"`},
		{"explicit id", "table T { a:int (id: 0); }", "explicit field ids are not supported"},
		{"vector of unions", "table A {} union U { A } table T { u:[U]; } root_type T;", "vectors of unions are not supported"},
		{"missing semicolon", "table T { a:int }", `T.a: want ";", got "}"`},
		{"align on a scalar", "table T { a:int (force_align: 16); } root_type T;", "force_align on a field that is not a vector"},
		{"union alias", "table A {} union U { X: A }", "aliases and explicit values are not supported"},
		{"root not a table", "enum E : byte { A } root_type E;", `root type "E" is not a table`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseFBS(tt.src)
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// walkModel refuses, in strict mode only, a field the schema does not know.
func TestWalkUnknownField(t *testing.T) {
	b := flatbuffers.NewBuilder(64)
	b.StartObject(12)
	b.PrependUint32Slot(11, 7, 0) // Model has 10 fields, slots 0-9
	b.FinishWithFileIdentifier(b.EndObject(), []byte(Identifier))
	data := b.FinishedBytes()
	assert.NoError(t, walkModel(data, false))
	assert.EqualError(t, walkModel(data, true), "tflite: model: field 11 is unknown to the schema (revision 3d); rewriting the model would drop it (at byte 34)")
}
