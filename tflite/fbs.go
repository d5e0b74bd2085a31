package tflite

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"

	flatbuffers "github.com/google/flatbuffers/go"
)

// The bindings in tflite/schema give an accessor per field but no list of
// the fields, so the checks that must cover every table of the schema
// (walk.go) take the list from the schema itself: the vendored schema.fbs,
// embedded and parsed here. The parser knows the subset of the flatbuffers
// schema language that schema.fbs uses (tables, enums, unions, vectors,
// attributes, defaults; no structs, includes or explicit ids) and fails on
// anything else. fbs_test.go checks the result against the object API.

//go:embed schema/schema.fbs
var schemaFBS string

// tfliteSchema returns the parsed schema.fbs. A parse error is a heliac
// bug (the file is embedded and tested), so it panics.
var tfliteSchema = sync.OnceValue(func() *fbsSchema {
	s, err := parseFBS(schemaFBS)
	if err != nil {
		panic(fmt.Sprintf("tflite: parsing the embedded schema.fbs: %v", err))
	}
	return s
})

// fbsKind is the kind of a field's type.
type fbsKind int

const (
	fbsScalar fbsKind = iota + 1 // a number, bool or enum, inline in the table
	fbsString
	fbsTable
	fbsUnion  // the value half of a union; its type byte is fbsField.typeVT
	fbsVector // elem says of what
)

// fbsType is the type of a field or of a vector's elements.
type fbsType struct {
	kind fbsKind
	size int64    // scalars: bytes
	name string   // tables and unions: the type's name; enum scalars: the enum
	base string   // scalars: the schema's scalar type ("int", "float", ...; an enum's underlying type)
	elem *fbsType // vectors
}

// fbsField is one field of a table.
type fbsField struct {
	name       string
	vt         flatbuffers.VOffsetT // vtable offset: 4 + 2*id
	typeVT     flatbuffers.VOffsetT // unions: vtable offset of the type byte (vt - 2)
	typ        fbsType
	deprecated bool  // no accessor is generated and readers never see it
	align      int64 // force_align of a vector, 0 when not given
	def        int64 // default of an integer or enum scalar (bools: 0 or 1)
}

// fbsTableDef is a table and its fields in declaration order.
type fbsTableDef struct {
	name       string
	fields     []fbsField
	deprecated bool
	bySlot     []*fbsField // bySlot[(vt-4)/2]: the field stored in that vtable slot, nil for a union's type byte
	liveFields []*fbsField // the fields but the deprecated ones, in order
}

// live returns the fields of the table that the bindings generate, in
// order: all but the deprecated ones, one per field of its T struct.
func (t *fbsTableDef) live() []*fbsField { return t.liveFields }

// fbsUnionDef is a union; members[i] names the table of type i (members[0]
// is NONE).
type fbsUnionDef struct {
	name    string
	members []string
}

type fbsSchema struct {
	tables map[string]*fbsTableDef
	unions map[string]*fbsUnionDef
	enums  map[string]fbsEnum
	order  []string // table names in declaration order
	root   string
}

type fbsEnum struct {
	size   int64
	base   string // the underlying scalar type
	values map[string]int64
}

var fbsScalars = map[string]int64{
	"bool": 1, "byte": 1, "ubyte": 1, "int8": 1, "uint8": 1,
	"short": 2, "ushort": 2, "int16": 2, "uint16": 2,
	"int": 4, "uint": 4, "int32": 4, "uint32": 4, "float": 4, "float32": 4,
	"long": 8, "ulong": 8, "int64": 8, "uint64": 8, "double": 8, "float64": 8,
}

// fbsParser reads schema.fbs token by token.
type fbsParser struct {
	toks []string
	pos  int
	s    *fbsSchema
	// pending holds each field's type name until every declaration is
	// known, since a field may name a type declared further down.
	pending []pendingField
}

type pendingField struct {
	table *fbsTableDef
	index int
	typ   string // "Name" or "[Name]"
	def   string
}

func parseFBS(src string) (*fbsSchema, error) {
	p := &fbsParser{toks: tokenizeFBS(src), s: &fbsSchema{
		tables: map[string]*fbsTableDef{}, unions: map[string]*fbsUnionDef{}, enums: map[string]fbsEnum{},
	}}
	for p.pos < len(p.toks) {
		var err error
		switch kw := p.next(); kw {
		case "namespace", "file_identifier", "file_extension":
			err = p.skipTo(";")
		case "root_type":
			p.s.root = p.next()
			err = p.expect(";")
		case "enum":
			err = p.enum()
		case "union":
			err = p.union()
		case "table":
			err = p.table()
		default:
			err = fmt.Errorf("unsupported declaration %q", kw)
		}
		if err != nil {
			return nil, fmt.Errorf("token %d: %w", p.pos, err)
		}
	}
	for _, f := range p.pending {
		if err := p.resolve(f); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", f.table.name, f.table.fields[f.index].name, err)
		}
	}
	if p.s.tables[p.s.root] == nil {
		return nil, fmt.Errorf("root type %q is not a table", p.s.root)
	}
	return p.s, nil
}

// tokenizeFBS splits the source into identifiers, numbers, quoted strings
// and single punctuation characters, dropping // comments.
func tokenizeFBS(src string) []string {
	var toks []string
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '/' && strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				j++
			}
			toks = append(toks, src[i:min(j+1, len(src))])
			i = j + 1
		case isWordByte(c) || c == '-':
			j := i + 1
			for j < len(src) && (isWordByte(src[j]) || src[j] == '.') {
				j++
			}
			toks = append(toks, src[i:j])
			i = j
		default:
			toks = append(toks, string(c))
			i++
		}
	}
	return toks
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *fbsParser) next() string {
	if p.pos >= len(p.toks) {
		return ""
	}
	p.pos++
	return p.toks[p.pos-1]
}

func (p *fbsParser) peek() string {
	if p.pos >= len(p.toks) {
		return ""
	}
	return p.toks[p.pos]
}

func (p *fbsParser) expect(tok string) error {
	if got := p.next(); got != tok {
		return fmt.Errorf("want %q, got %q", tok, got)
	}
	return nil
}

func (p *fbsParser) skipTo(tok string) error {
	for p.pos < len(p.toks) {
		if p.next() == tok {
			return nil
		}
	}
	return fmt.Errorf("missing %q", tok)
}

// attrs reads an optional parenthesized attribute list.
func (p *fbsParser) attrs() (map[string]string, error) {
	out := map[string]string{}
	if p.peek() != "(" {
		return out, nil
	}
	p.next()
	for {
		name := p.next()
		val := ""
		if p.peek() == ":" {
			p.next()
			val = p.next()
		}
		out[name] = val
		switch sep := p.next(); sep {
		case ")":
			return out, nil
		case ",":
		default:
			return nil, fmt.Errorf("attribute list: want \",\" or \")\", got %q", sep)
		}
	}
}

func (p *fbsParser) enum() error {
	name := p.next()
	if err := p.expect(":"); err != nil {
		return err
	}
	base := p.next()
	size, ok := fbsScalars[base]
	if !ok {
		return fmt.Errorf("enum %s: unknown underlying type", name)
	}
	e := fbsEnum{size: size, base: base, values: map[string]int64{}}
	if _, err := p.attrs(); err != nil {
		return err
	}
	if err := p.expect("{"); err != nil {
		return err
	}
	next := int64(0)
	for p.peek() != "}" {
		v := p.next()
		if p.peek() == "=" {
			p.next()
			n, err := strconv.ParseInt(p.next(), 0, 64)
			if err != nil {
				return fmt.Errorf("enum %s.%s: %w", name, v, err)
			}
			next = n
		}
		e.values[v] = next
		next++
		if _, err := p.attrs(); err != nil {
			return err
		}
		if p.peek() == "," {
			p.next()
		}
	}
	p.next()
	p.s.enums[name] = e
	return nil
}

func (p *fbsParser) union() error {
	u := &fbsUnionDef{name: p.next(), members: []string{"NONE"}}
	if _, err := p.attrs(); err != nil {
		return err
	}
	if err := p.expect("{"); err != nil {
		return err
	}
	for p.peek() != "}" {
		m := p.next()
		if p.peek() == ":" || p.peek() == "=" {
			return fmt.Errorf("union %s: aliases and explicit values are not supported", u.name)
		}
		u.members = append(u.members, m)
		if _, err := p.attrs(); err != nil {
			return err
		}
		if p.peek() == "," {
			p.next()
		}
	}
	p.next()
	p.s.unions[u.name] = u
	return nil
}

func (p *fbsParser) table() error {
	t := &fbsTableDef{name: p.next()}
	a, err := p.attrs()
	if err != nil {
		return err
	}
	_, t.deprecated = a["deprecated"]
	if err := p.expect("{"); err != nil {
		return err
	}
	for p.peek() != "}" {
		f := fbsField{name: p.next()}
		if err := p.expect(":"); err != nil {
			return fmt.Errorf("table %s: %w", t.name, err)
		}
		typ := p.next()
		if typ == "[" {
			typ = "[" + p.next() + "]"
			if err := p.expect("]"); err != nil {
				return err
			}
		}
		def := ""
		if p.peek() == "=" {
			p.next()
			def = p.next()
		}
		a, err := p.attrs()
		if err != nil {
			return err
		}
		if _, ok := a["id"]; ok {
			return fmt.Errorf("table %s: explicit field ids are not supported", t.name)
		}
		_, f.deprecated = a["deprecated"]
		if v, ok := a["force_align"]; ok {
			if f.align, err = strconv.ParseInt(v, 10, 64); err != nil {
				return fmt.Errorf("%s.%s: force_align: %w", t.name, f.name, err)
			}
		}
		if err := p.expect(";"); err != nil {
			return fmt.Errorf("%s.%s: %w", t.name, f.name, err)
		}
		p.pending = append(p.pending, pendingField{table: t, index: len(t.fields), typ: typ, def: def})
		t.fields = append(t.fields, f)
	}
	p.next()
	if p.s.tables[t.name] != nil {
		return fmt.Errorf("table %s declared twice", t.name)
	}
	p.s.tables[t.name] = t
	p.s.order = append(p.s.order, t.name)
	return nil
}

// resolve sets a field's type once every declaration is known, moves a
// union's value to the slot after its type byte, and renumbers the fields
// that follow a union, which takes two slots.
func (p *fbsParser) resolve(pf pendingField) error {
	f := &pf.table.fields[pf.index]
	name, vector := pf.typ, false
	if strings.HasPrefix(name, "[") {
		name, vector = name[1:len(name)-1], true
	}
	typ, err := p.typeOf(name)
	if err != nil {
		return err
	}
	if vector {
		if typ.kind == fbsUnion {
			return fmt.Errorf("vectors of unions are not supported")
		}
		elem := typ
		typ = fbsType{kind: fbsVector, elem: &elem}
	} else if f.align != 0 {
		return fmt.Errorf("force_align on a field that is not a vector")
	}
	f.typ = typ
	if typ.kind == fbsScalar && pf.def != "" {
		if f.def, err = p.defaultValue(typ, pf.def); err != nil {
			return err
		}
	}
	if pf.index == len(pf.table.fields)-1 {
		p.layout(pf.table)
	}
	return nil
}

func (p *fbsParser) typeOf(name string) (fbsType, error) {
	if size, ok := fbsScalars[name]; ok {
		return fbsType{kind: fbsScalar, size: size, base: name}, nil
	}
	if e, ok := p.s.enums[name]; ok {
		return fbsType{kind: fbsScalar, size: e.size, name: name, base: e.base}, nil
	}
	switch {
	case name == "string":
		return fbsType{kind: fbsString}, nil
	case p.s.tables[name] != nil:
		return fbsType{kind: fbsTable, name: name}, nil
	case p.s.unions[name] != nil:
		return fbsType{kind: fbsUnion, name: name}, nil
	}
	return fbsType{}, fmt.Errorf("unknown type %q", name)
}

// defaultValue parses a scalar default: an integer, true/false or an enum
// value's name. schema.fbs gives no floating-point defaults; one would be
// rejected here.
func (p *fbsParser) defaultValue(typ fbsType, s string) (int64, error) {
	switch s {
	case "true":
		return 1, nil
	case "false":
		return 0, nil
	}
	if v, ok := p.s.enums[typ.name].values[s]; ok && typ.name != "" {
		return v, nil
	}
	return strconv.ParseInt(s, 0, 64)
}

// layout assigns vtable offsets in declaration order, a union taking two
// slots (its type byte first), and fills bySlot.
func (p *fbsParser) layout(t *fbsTableDef) {
	slot := 0
	t.bySlot, t.liveFields = nil, nil
	for i := range t.fields {
		f := &t.fields[i]
		if f.typ.kind == fbsUnion {
			f.typeVT = flatbuffers.VOffsetT(4 + 2*slot)
			t.bySlot = append(t.bySlot, nil)
			slot++
		}
		f.vt = flatbuffers.VOffsetT(4 + 2*slot)
		t.bySlot = append(t.bySlot, f)
		slot++
		if !f.deprecated {
			t.liveFields = append(t.liveFields, f)
		}
	}
}
