package tflite

import (
	"reflect"
	"strings"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/tflite/schema"
)

// The object API's T structs (schema.ModelT, schema.TensorT, ...) are
// found by reflection, starting from ModelT; a union's member types are
// found by unpacking an empty table of each type, so that no list of
// tables is written out here. unionUnpackers is the one list: a union the
// schema gains fails TestSchemaMatchesObjectAPI until it is added.
var unionUnpackers = map[string]func(typ byte, tab flatbuffers.Table) any{
	"BuiltinOptions": func(typ byte, tab flatbuffers.Table) any {
		return unionValue(schema.BuiltinOptions(typ).UnPack(tab))
	},
	"BuiltinOptions2": func(typ byte, tab flatbuffers.Table) any {
		return unionValue(schema.BuiltinOptions2(typ).UnPack(tab))
	},
	"QuantizationDetails": func(typ byte, tab flatbuffers.Table) any {
		return unionValue(schema.QuantizationDetails(typ).UnPack(tab))
	},
	"SparseIndexVector": func(typ byte, tab flatbuffers.Table) any {
		return unionValue(schema.SparseIndexVector(typ).UnPack(tab))
	},
}

// unionValue returns the Value field of a *XxxT union, or nil.
func unionValue(u any) any {
	v := reflect.ValueOf(u)
	if v.IsNil() {
		return nil
	}
	return v.Elem().FieldByName("Value").Interface()
}

// objectTypes maps each table of the parsed schema to its T struct type
// and each union to its members' T types (index = type; 0 = NONE, nil).
type objectTypes struct {
	tables  map[string]reflect.Type
	members map[string][]reflect.Type
}

func findObjectTypes(t *testing.T) *objectTypes {
	t.Helper()
	s := tfliteSchema()
	// An empty table, for the union unpackers to read defaults from.
	b := flatbuffers.NewBuilder(64)
	b.StartObject(0)
	b.Finish(b.EndObject())
	empty := flatbuffers.Table{Bytes: b.FinishedBytes()}
	empty.Pos = flatbuffers.GetUOffsetT(empty.Bytes)

	ot := &objectTypes{tables: map[string]reflect.Type{}, members: map[string][]reflect.Type{}}
	for name, u := range s.unions {
		unpack := unionUnpackers[name]
		require.NotNil(t, unpack, "union %s has no entry in unionUnpackers", name)
		types := make([]reflect.Type, len(u.members))
		for i := 1; i < len(u.members); i++ {
			v := unpack(byte(i), empty)
			require.NotNil(t, v, "union %s: type %d (%s) unpacks to nil", name, i, u.members[i])
			types[i] = reflect.TypeOf(v).Elem()
			ot.tables[u.members[i]] = types[i]
		}
		ot.members[name] = types
	}
	var visit func(rt reflect.Type)
	visit = func(rt reflect.Type) {
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice {
			rt = rt.Elem()
		}
		if rt.Kind() != reflect.Struct || !strings.HasSuffix(rt.Name(), "T") {
			return
		}
		name := strings.TrimSuffix(rt.Name(), "T")
		if s.unions[name] != nil {
			return // Type and Value, handled through members
		}
		if _, seen := ot.tables[name]; seen && ot.tables[name] != rt {
			t.Fatalf("two types for table %s", name)
		}
		ot.tables[name] = rt
		for i := 0; i < rt.NumField(); i++ {
			visit(rt.Field(i).Type)
		}
	}
	visit(reflect.TypeOf(schema.ModelT{}))
	for _, types := range ot.members {
		for _, rt := range types[1:] {
			visit(rt)
		}
	}
	return ot
}

// liveFields returns the fields of a table that the bindings generate,
// in order: all but the deprecated ones.
func liveFields(td *fbsTableDef) []*fbsField { return td.live() }
