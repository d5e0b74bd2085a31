package verify

import (
	"regexp"
	"strings"
)

// cFile is what C reads of one emitted C file: the lines of the few shapes
// heliac's C module is made of (emit/c_header.go, emit/c_source.go), each
// with its line number. Anything else is skipped: this is not a C parser,
// only a reader of the tables heliac writes.
type cFile struct {
	name     string                 // for messages: "<prefix>.h"
	defines  map[string]cLine       // #define NAME value
	enums    map[string]cLine       // enumerators of the arena enum: NAME = value
	arenaT   string                 // p of "} p_arena_t;", the lower-case prefix
	arrays   map[string]cArray      // byte arrays by symbol
	tables   map[string][]cTableRow // rows of each table definition, by symbol
	cases    []cCase                // the accessors' "case ENUM: return &sym[...]"
	banner   cLine                  // the plan hash the source's opening comment names
	repeated []cLine                // a define, enumerator, array or table given twice
}

// cLine is a value read from a line.
type cLine struct {
	line  int
	value string
}

// cArray is one byte array definition: _Alignas(align) [const] uint8_t
// sym[size].
type cArray struct {
	line     int
	align    string
	constant bool
	size     string
}

// cTableRow is one initializer of a table: {a, b, ...}.
type cTableRow struct {
	line   int
	fields []string
}

// cCase is one accessor case: the arena's enumerator and the array it
// returns bytes of; mutable is set in the accessor of writable bytes.
type cCase struct {
	line      int
	enum, sym string
	mutable   bool
}

var (
	cDefine  = regexp.MustCompile(`^#define (\w+)(?: (.*))?$`)
	cEnum    = regexp.MustCompile(`^(\w+) = (-?\d+),?(?: /\*.*\*/)?$`)
	cEnumEnd = regexp.MustCompile(`^\} (\w+)_arena_t;$`)
	cArrayRe = regexp.MustCompile(`^(?:static )?_Alignas\((\d+)\) (const )?uint8_t (\w+)\[(\w+)\]`)
	cTable   = regexp.MustCompile(`^const \w+ (\w+)\[\w+\] = \{$`)
	cRowRe   = regexp.MustCompile(`^\{([^{}]*)\},(?: /\*.*\*/)?$`)
	cCaseRe  = regexp.MustCompile(`^case (\w+):$`)
	cReturn  = regexp.MustCompile(`^return &(\w+)\[t->offset\];$`)
	cBanner  = regexp.MustCompile(`^/\* Memory plan for model .*; plan hash ([0-9a-f]*)\. \*/$`)
)

// parseC reads the lines of data that C checks.
func parseC(name string, data []byte) *cFile {
	f := &cFile{name: name, defines: map[string]cLine{}, enums: map[string]cLine{}, arrays: map[string]cArray{},
		tables: map[string][]cTableRow{}}
	var inEnum, mutable bool
	table := ""
	pendingCase := cCase{}
	for i, text := range strings.Split(string(data), "\n") {
		n := i + 1
		text = strings.TrimSpace(text)
		switch {
		case table != "":
			if text == "};" {
				table = ""
			} else if m := cRowRe.FindStringSubmatch(text); m != nil {
				f.tables[table] = append(f.tables[table], cTableRow{line: n, fields: splitFields(m[1])})
			}
		case inEnum:
			if m := cEnumEnd.FindStringSubmatch(text); m != nil {
				inEnum, f.arenaT = false, m[1]
			} else if m := cEnum.FindStringSubmatch(text); m != nil {
				f.put(f.enums, m[1], cLine{n, m[2]})
			}
		case text == "typedef enum {":
			inEnum = true
		case strings.HasPrefix(text, "#define "):
			if m := cDefine.FindStringSubmatch(text); m != nil {
				f.put(f.defines, m[1], cLine{n, m[2]})
			}
		case cTable.MatchString(text):
			table = cTable.FindStringSubmatch(text)[1]
			if _, dup := f.tables[table]; dup {
				f.repeated = append(f.repeated, cLine{n, table})
			}
			f.tables[table] = []cTableRow{}
		case cArrayRe.MatchString(text):
			m := cArrayRe.FindStringSubmatch(text)
			if _, dup := f.arrays[m[3]]; dup {
				f.repeated = append(f.repeated, cLine{n, m[3]})
			}
			f.arrays[m[3]] = cArray{line: n, align: m[1], constant: m[2] != "", size: m[4]}
		case strings.Contains(text, "_tensor_mutable_data("):
			mutable = true
		case strings.Contains(text, "_tensor_data("):
			mutable = false
		case cCaseRe.MatchString(text):
			pendingCase = cCase{line: n, enum: cCaseRe.FindStringSubmatch(text)[1], mutable: mutable}
		case pendingCase.enum != "" && cReturn.MatchString(text):
			pendingCase.sym = cReturn.FindStringSubmatch(text)[1]
			f.cases = append(f.cases, pendingCase)
			pendingCase = cCase{}
		case f.banner.line == 0 && cBanner.MatchString(text):
			f.banner = cLine{n, cBanner.FindStringSubmatch(text)[1]}
		}
	}
	return f
}

// put records a define or enumerator, and a repeat of one.
func (f *cFile) put(m map[string]cLine, name string, l cLine) {
	if _, dup := m[name]; dup {
		f.repeated = append(f.repeated, cLine{l.line, name})
		return
	}
	m[name] = l
}

// splitFields splits the inside of a row initializer at its commas.
func splitFields(s string) []string {
	fields := strings.Split(s, ",")
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	return fields
}
