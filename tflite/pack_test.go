package tflite

import (
	"fmt"
	"reflect"
	"sort"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/tflite/schema"
)

// TestPackEveryField fills every field of every table with a value other
// than its default, using each member of each union in turn, and checks
// that packModel (generated Pack below the tables pack.go writes) writes
// them all: the strict walk accepts the result and sees every field the
// bindings know, and UnPack gives back exactly what was packed. A field
// the schema gains and pack.go forgets fails here.
func TestPackEveryField(t *testing.T) {
	s := tfliteSchema()
	ot := findObjectTypes(t)
	rounds := 0
	for _, u := range s.unions {
		rounds = max(rounds, len(u.members)-1)
	}
	seen := map[string]bool{}
	for choice := 0; choice < rounds; choice++ {
		f := &filler{s: s, ot: ot, choice: choice}
		want := f.table("Model").Interface().(*schema.ModelT)

		b := flatbuffers.NewBuilder(0)
		b.FinishWithFileIdentifier(packModel(want, b, nil), []byte(Identifier))
		data := b.FinishedBytes()

		w := &walker{c: newChecker(data), s: s, strict: true}
		w.visit = func(td *fbsTableDef, fd *fbsField) { seen[td.name+"."+fd.name] = true }
		require.NoError(t, w.table(int64(flatbuffers.GetUOffsetT(data)), rootPath, s.tables["Model"]), "choice %d", choice)

		got := schema.GetRootAsModel(data, 0).UnPack()
		if !assert.Equal(t, want, got, "choice %d", choice) {
			return
		}
	}
	var missed []string
	for _, name := range s.order {
		for _, fd := range liveFields(s.tables[name]) {
			if !seen[name+"."+fd.name] {
				missed = append(missed, name+"."+fd.name)
			}
		}
	}
	sort.Strings(missed)
	assert.Empty(t, missed, "fields never written")
}

// TestPackKeepsAbsent packs models in which every string and vector of
// every table (each member of each union in turn) is left out, or given
// empty, and checks that absent stays absent and empty stays present: the
// walk sees none of them in the first case and all of them in the second,
// and markAbsent, reading the result, records exactly the absent ones.
// TFLM reads a VAR_HANDLE without a container differently from one with
// container "" (pack.go); a string or vector the schema gains is covered
// here without a change.
func TestPackKeepsAbsent(t *testing.T) {
	s := tfliteSchema()
	ot := findObjectTypes(t)
	rounds := 0
	for _, u := range s.unions {
		rounds = max(rounds, len(u.members)-1)
	}
	for _, mode := range []fillMode{fillAbsent, fillEmpty} {
		seen := map[string]bool{}
		var optional func(fd *fbsField) bool
		// The last round leaves the model's vectors of tables empty or
		// out too, so nothing below them is written.
		for choice := 0; choice <= rounds; choice++ {
			f := &filler{s: s, ot: ot, choice: choice, optional: mode, tableVectors: choice == rounds, absent: map[fieldRef]bool{}}
			optional = f.isOptional
			want := f.table("Model").Interface().(*schema.ModelT)
			b := flatbuffers.NewBuilder(0)
			b.FinishWithFileIdentifier(packModel(want, b, f.absent), []byte(Identifier))
			data := b.FinishedBytes()

			w := &walker{c: newChecker(data), s: s, strict: true}
			w.visit = func(td *fbsTableDef, fd *fbsField) {
				if optional(fd) {
					seen[td.name+"."+fd.name] = true
				}
			}
			require.NoError(t, w.table(int64(flatbuffers.GetUOffsetT(data)), rootPath, s.tables["Model"]), "choice %d", choice)

			fb := schema.GetRootAsModel(data, 0)
			got, absent := fb.UnPack(), map[fieldRef]bool{}
			markAbsent(fb.Table(), s.tables["Model"], reflect.ValueOf(got), absent)
			assert.Equal(t, len(f.absent), len(absent), "choice %d: strings read back absent", choice)
			assert.Equal(t, want, got, "choice %d", choice)
		}
		var optionals []string
		for _, name := range s.order {
			for _, fd := range liveFields(s.tables[name]) {
				if optional(fd) && (fd.typ.kind != fbsVector || fd.typ.elem.kind != fbsTable || name == "Model") {
					optionals = append(optionals, name+"."+fd.name)
				}
			}
		}
		if mode == fillAbsent {
			assert.Empty(t, seen, "absent fields written")
			continue
		}
		var missed []string
		for _, name := range optionals {
			if !seen[name] {
				missed = append(missed, name)
			}
		}
		assert.Empty(t, missed, "empty fields left out")
		assert.Contains(t, optionals, "VarHandleOptions.container")
	}
}

// The generated Pack ignores force_align; pack.go's own tables do not.
func TestPackAlignment(t *testing.T) {
	s := tfliteSchema()
	ot := findObjectTypes(t)
	m := (&filler{s: s, ot: ot}).table("Model").Interface().(*schema.ModelT)
	// Odd lengths everywhere, so that nothing is aligned by chance.
	for i, b := range m.Buffers {
		b.Data = make([]byte, 3+2*i)
	}
	for _, sg := range m.Subgraphs {
		for i, tn := range sg.Tensors {
			tn.Name = fmt.Sprint("t", i)
			tn.Quantization.Details = &schema.QuantizationDetailsT{
				Type:  schema.QuantizationDetailsCustomQuantization,
				Value: &schema.CustomQuantizationT{Custom: make([]byte, 5+i)},
			}
		}
	}
	b := flatbuffers.NewBuilder(0)
	b.FinishWithFileIdentifier(packModel(m, b, nil), []byte(Identifier))
	data := b.FinishedBytes()
	checked := checkAlignment(t, data)
	assert.Equal(t, len(m.Buffers)+len(m.Subgraphs)*len(m.Subgraphs[0].Tensors), checked)

	// The generated Pack, for comparison, leaves some of them misaligned.
	b = flatbuffers.NewBuilder(0)
	b.FinishWithFileIdentifier(m.Pack(b), []byte(Identifier))
	misaligned := 0
	root := schema.GetRootAsModel(b.FinishedBytes(), 0)
	var buf schema.Buffer
	for i := 0; i < root.BuffersLength(); i++ {
		root.Buffers(&buf, i)
		if vectorStart(buf.Table(), 4)%16 != 0 {
			misaligned++
		}
	}
	assert.NotZero(t, misaligned, "generated Pack aligned every buffer (force_align honoured?)")
}

// checkAlignment checks that in data, a model this package wrote, every
// Buffer.data and CustomQuantization.custom starts at a multiple of 16 from
// the start of the file, every external buffer's offset is one too, and
// every sparse index vector is 4-byte aligned. It returns how many 16-byte
// aligned vectors it checked.
func checkAlignment(t *testing.T, data []byte) int {
	t.Helper()
	root := schema.GetRootAsModel(data, 0)
	n := 0
	var buf schema.Buffer
	for i := 0; i < root.BuffersLength(); i++ {
		require.True(t, root.Buffers(&buf, i))
		if buf.Offset() > 1 {
			assert.Zero(t, buf.Offset()%16, "buffers[%d]: external data at %d", i, buf.Offset())
		}
		if start := vectorStart(buf.Table(), 4); start >= 0 {
			assert.Zero(t, start%16, "buffers[%d]: data at %d", i, start)
			n++
		}
	}
	var sg schema.SubGraph
	var tn schema.Tensor
	for s := 0; s < root.SubgraphsLength(); s++ {
		require.True(t, root.Subgraphs(&sg, s))
		for i := 0; i < sg.TensorsLength(); i++ {
			require.True(t, sg.Tensors(&tn, i))
			path := fmt.Sprintf("subgraphs[%d].tensors[%d]", s, i)
			if q := tn.Quantization(nil); q != nil && q.DetailsType() == schema.QuantizationDetailsCustomQuantization {
				var tab flatbuffers.Table
				require.True(t, q.Details(&tab))
				if start := vectorStart(tab, 4); start >= 0 {
					assert.Zero(t, start%16, "%s: custom quantization at %d", path, start)
					n++
				}
			}
			if sp := tn.Sparsity(nil); sp != nil {
				var dm schema.DimensionMetadata
				for d := 0; d < sp.DimMetadataLength(); d++ {
					require.True(t, sp.DimMetadata(&dm, d))
					for _, u := range []func(*flatbuffers.Table) bool{dm.ArraySegments, dm.ArrayIndices} {
						var tab flatbuffers.Table
						if u(&tab) {
							if start := vectorStart(tab, 4); start >= 0 {
								assert.Zero(t, start%4, "%s.sparsity.dim_metadata[%d]: index vector at %d", path, d, start)
							}
						}
					}
				}
			}
		}
	}
	return n
}

// vectorStart returns the position in the file of the contents of the
// vector in field vt of tab, or -1 when the field is absent.
func vectorStart(tab flatbuffers.Table, vt flatbuffers.VOffsetT) int {
	o := tab.Offset(vt)
	if o == 0 {
		return -1
	}
	return int(tab.Vector(flatbuffers.UOffsetT(o)))
}

// filler builds T values with every field set to something other than its
// default, so that Pack writes every field. Union fields take member
// number choice (wrapping around), so that calling it with every choice
// covers every member.
type filler struct {
	s      *fbsSchema
	ot     *objectTypes
	choice int
	// optional, when not fillAll, leaves every string and vector of
	// scalars or strings empty (fillEmpty) or out (fillAbsent: vectors
	// nil, strings recorded in absent); tables and unions are still
	// filled, and vectors of tables too unless tableVectors.
	optional     fillMode
	tableVectors bool
	absent       map[fieldRef]bool
}

// optional reports whether the filler leaves fd empty or out.
func (f *filler) isOptional(fd *fbsField) bool {
	return fd.typ.kind == fbsString || fd.typ.kind == fbsVector && (f.tableVectors || fd.typ.elem.kind != fbsTable)
}

type fillMode int

const (
	fillAll fillMode = iota
	fillEmpty
	fillAbsent
)

// table returns a *XxxT for the table name, filled.
func (f *filler) table(name string) reflect.Value {
	td := f.s.tables[name]
	rt := f.ot.tables[name]
	v := reflect.New(rt)
	for i, fd := range liveFields(td) {
		switch {
		case f.optional == fillAll || !f.isOptional(fd):
			f.field(v.Elem().Field(i), fd, name)
		case f.optional == fillEmpty && fd.typ.kind == fbsVector:
			v.Elem().Field(i).Set(reflect.MakeSlice(v.Elem().Field(i).Type(), 0, 0))
		case f.optional == fillAbsent && fd.typ.kind == fbsString:
			f.absent[fieldRef{v.Interface(), i}] = true
		}
	}
	return v
}

func (f *filler) field(v reflect.Value, fd *fbsField, table string) {
	switch fd.typ.kind {
	case fbsScalar:
		f.scalar(v, fd.def)
	case fbsString:
		v.SetString(table + "." + fd.name)
	case fbsTable:
		v.Set(f.table(fd.typ.name))
	case fbsUnion:
		members := f.ot.members[fd.typ.name]
		typ := 1 + f.choice%(len(members)-1)
		u := reflect.New(v.Type().Elem())
		u.Elem().Field(0).SetUint(uint64(typ))
		u.Elem().Field(1).Set(f.table(f.s.unions[fd.typ.name].members[typ]))
		v.Set(u)
	case fbsVector:
		n := 2
		s := reflect.MakeSlice(v.Type(), n, n)
		for j := 0; j < n; j++ {
			switch el := fd.typ.elem; el.kind {
			case fbsScalar:
				f.scalar(s.Index(j), int64(j+7))
			case fbsString:
				s.Index(j).SetString(fmt.Sprintf("%s.%s[%d]", table, fd.name, j))
			case fbsTable:
				s.Index(j).Set(f.table(el.name))
			}
		}
		v.Set(s)
	}
}

// scalar sets v to a value other than def.
func (f *filler) scalar(v reflect.Value, def int64) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(def == 0)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(def + 1)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(def + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(def) + 1.5)
	default:
		panic(fmt.Sprintf("not a scalar: %s", v.Type()))
	}
}
