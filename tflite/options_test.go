package tflite

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/tflite/schema"
)

// TestOptionsMatchObjectAPI checks, on the bundled models and the corpus,
// that every operator's Options, Options2 and CustomOptions hold what the
// flatc object API (UnPack) reads: the table of the union's type and,
// field by field (matched by the T struct's json tag, the schema name),
// the same values, defaults included.
func TestOptionsMatchObjectAPI(t *testing.T) {
	files := testModels(t)
	if testing.Short() {
		files = files[:min(len(files), 4)]
	}
	if corpus.SharedDir() != "" {
		for _, e := range corpus.Manifest(t) {
			data, err := os.ReadFile(e.Path)
			require.NoError(t, err)
			files = append(files, namedFile{name: e.File, data: data})
			if testing.Short() {
				break
			}
		}
	}
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			m, err := Load(f.data)
			require.NoError(t, err)
			obj := schema.GetRootAsModel(f.data, 0).UnPack()
			withOptions := 0
			for si, sg := range obj.Subgraphs {
				for oi, op := range sg.Operators {
					got := &m.Subgraphs[si].Ops[oi]
					where := fmt.Sprintf("op %d:%d %s", si, oi, got.Name())
					compareUnion(t, where, op.BuiltinOptions != nil && op.BuiltinOptions.Type != 0,
						func() (string, any) {
							return schema.EnumNamesBuiltinOptions[op.BuiltinOptions.Type], op.BuiltinOptions.Value
						}, got.Options)
					compareUnion(t, where, op.BuiltinOptions2 != nil && op.BuiltinOptions2.Type != 0,
						func() (string, any) {
							return schema.EnumNamesBuiltinOptions2[op.BuiltinOptions2.Type], op.BuiltinOptions2.Value
						}, got.Options2)
					if got.Options != nil {
						withOptions++
					}
					assert.Equal(t, op.CustomOptions == nil, got.CustomOptions == nil, "%s: custom_options present", where)
					assert.True(t, bytes.Equal(op.CustomOptions, got.CustomOptions), "%s: custom_options", where)
				}
			}
			t.Logf("%d operators with builtin options", withOptions)
		})
	}
}

// compareUnion compares one options union of the object API with o.
func compareUnion(t *testing.T, where string, present bool, value func() (string, any), o *graph.Options) {
	t.Helper()
	if !present {
		assert.Nil(t, o, "%s: options where the file has none", where)
		return
	}
	name, v := value()
	if !assert.NotNil(t, o, "%s: no options; the file has %s", where, name) {
		return
	}
	assert.Equal(t, name, o.Table, where)
	compareTable(t, where+" "+name, reflect.ValueOf(v), o)
}

// compareTable compares a *XxxT of the object API with o, field by field.
func compareTable(t *testing.T, where string, pv reflect.Value, o *graph.Options) {
	t.Helper()
	rv := pv.Elem()
	rt := rv.Type()
	require.Equal(t, rt.NumField(), len(o.Fields), "%s: fields", where)
	for i := 0; i < rt.NumField(); i++ {
		name := rt.Field(i).Tag.Get("json")
		f := o.Field(name)
		if !assert.NotNil(t, f, "%s: no field %s", where, name) {
			continue
		}
		fw := where + "." + name
		fv := rv.Field(i)
		switch fv.Kind() {
		case reflect.Bool:
			assert.Equal(t, fv.Bool(), f.Int != 0, fw)
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			assert.Equal(t, fv.Int(), f.Int, fw)
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			assert.Equal(t, int64(fv.Uint()), f.Int, fw)
		case reflect.Float32, reflect.Float64:
			assert.Equal(t, fv.Float(), f.Float, fw)
		case reflect.String:
			assert.Equal(t, fv.String(), f.Str, fw)
		case reflect.Slice:
			if fv.IsNil() {
				assert.False(t, f.Present, "%s: present where the object API has none", fw)
				continue
			}
			var want []any
			var got []any
			for j := 0; j < fv.Len(); j++ {
				e := fv.Index(j)
				switch e.Kind() {
				case reflect.Bool:
					want = append(want, map[bool]int64{false: 0, true: 1}[e.Bool()])
				case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
					want = append(want, e.Int())
				case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
					want = append(want, int64(e.Uint()))
				case reflect.Float32, reflect.Float64:
					want = append(want, e.Float())
				default:
					t.Fatalf("%s: element kind %s", fw, e.Kind())
				}
			}
			for _, v := range f.Ints {
				got = append(got, v)
			}
			for _, v := range f.Floats {
				got = append(got, v)
			}
			assert.Equal(t, want, got, fw)
		case reflect.Pointer:
			if fv.IsNil() {
				assert.Nil(t, f.Table, fw)
				continue
			}
			compareTable(t, fw, fv, f.Table)
		default:
			t.Fatalf("%s: kind %s", fw, fv.Kind())
		}
	}
}

// TestOptionsRoundTrip encodes operators with Options of every kind the
// schema's options tables use and custom options, and reads them back.
func TestOptionsRoundTrip(t *testing.T) {
	m := handModel()
	ops := m.Subgraphs[0].Ops
	ops[0].Options = &graph.Options{Table: "FullyConnectedOptions", Fields: []graph.OptionField{
		{Name: "fused_activation_function", Type: "ActivationFunctionType", Kind: graph.OptionInt, Int: 1, Present: true},
		{Name: "weights_format", Type: "FullyConnectedOptionsWeightsFormat", Kind: graph.OptionInt, Int: 0, Present: true},
		{Name: "keep_num_dims", Type: "bool", Kind: graph.OptionInt, Int: 1, Present: true},
		{Name: "asymmetric_quantize_inputs", Type: "bool", Kind: graph.OptionInt},
		{Name: "quantized_bias_type", Type: "TensorType", Kind: graph.OptionInt},
	}}
	ops[1].CustomOptions = []byte{1, 2, 3}
	ops[9].Options = &graph.Options{Table: "BucketizeOptions", Fields: []graph.OptionField{
		{Name: "boundaries", Type: "[float]", Kind: graph.OptionFloats, Floats: []float64{0.5, -2, 1e9}, Present: true},
	}}
	ops[10].Options = &graph.Options{Table: "ReshapeOptions", Fields: []graph.OptionField{
		{Name: "new_shape", Type: "[int]", Kind: graph.OptionInts, Ints: []int64{}, Present: true},
	}}
	ops[11].CustomOptions = []byte{}
	roundTrip(t, m, EncodeOptions{})

	data, err := Encode(m, EncodeOptions{})
	require.NoError(t, err)
	obj := schema.GetRootAsModel(data, 0).UnPack()
	fc := obj.Subgraphs[0].Operators[0].BuiltinOptions.Value.(*schema.FullyConnectedOptionsT)
	assert.Equal(t, schema.ActivationFunctionTypeRELU, fc.FusedActivationFunction)
	assert.True(t, fc.KeepNumDims)
	assert.Equal(t, []byte{1, 2, 3}, obj.Subgraphs[0].Operators[1].CustomOptions)
	assert.Equal(t, []float32{0.5, -2, 1e9}, obj.Subgraphs[0].Operators[9].BuiltinOptions.Value.(*schema.BucketizeOptionsT).Boundaries)
	assert.NotNil(t, obj.Subgraphs[0].Operators[10].BuiltinOptions.Value.(*schema.ReshapeOptionsT).NewShape)
}

func TestEncodeRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		o    *graph.Options
		want string
	}{
		{"unknown table", &graph.Options{Table: "NoSuchOptions"}, `"NoSuchOptions" is not a table of the schema's BuiltinOptions`},
		{"unknown field", &graph.Options{Table: "AddOptions", Fields: []graph.OptionField{{Name: "beta", Kind: graph.OptionFloat}}}, `AddOptions has no field "beta"`},
		{"wrong kind", &graph.Options{Table: "SoftmaxOptions", Fields: []graph.OptionField{{Name: "beta", Kind: graph.OptionInt, Present: true}}}, "kind 1 where the schema's float wants 2"},
		{"out of range", &graph.Options{Table: "AddOptions", Fields: []graph.OptionField{{Name: "fused_activation_function", Kind: graph.OptionInt, Int: 300, Present: true}}}, "300 does not fit the schema's ActivationFunctionType"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := handModel()
			m.Subgraphs[0].Ops[8].Options = tt.o
			_, err := Encode(m, EncodeOptions{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
