package verify

import (
	"regexp"
	"strconv"
	"strings"
)

// cFile is what C reads of one emitted C file: the lines of the few shapes
// heliac's C module is made of (emit/c_header.go, c_source.go,
// c_schedule.go, c_runtime.go, c_blob.go), each with its line number.
// Anything else is skipped: this is not a C parser, only a reader of the
// tables heliac writes.
type cFile struct {
	name     string                      // for messages: "<prefix>.h"
	defines  map[string]cLine            // object-like #define NAME value
	enums    map[string]map[string]cLine // enumerators by the enum's type name (without _t): NAME = value
	arrays   map[string]cArray           // byte arrays by symbol
	tables   map[string]*cTable          // table definitions by symbol
	hydrates []cLine                     // <p>_hydrate(ENUM, ...) calls, value "ENUM base image SIZE"
	banner   cLine                       // the plan hash the source's opening comment names
	repeated []cLine                     // a define, enumerator, array or table given twice
}

// cLine is a value read from a line.
type cLine struct {
	line  int
	value string
}

// cArray is one byte array definition: <P>_ALIGNAS(align) [const] uint8_t
// sym[size] attr, with its initializer's bytes or the file #embed names.
type cArray struct {
	line     int
	align    string
	constant bool
	size     string
	attr     string
	init     bool   // it has an initializer
	data     []byte // the initializer's bytes
	embed    string // the file of an #embed initializer
	bad      cLine  // the first initializer line that is not bytes
}

// cTable is one table definition: rows of braced initializers, or the
// values of a flat list.
type cTable struct {
	line int
	rows []cTableRow
	flat []string
}

// cTableRow is one initializer of a table: {a, b, ...}.
type cTableRow struct {
	line   int
	fields []string
}

var (
	cDefine  = regexp.MustCompile(`^#define (\w+)(?: (.*))?$`)
	cEnum    = regexp.MustCompile(`^(\w+) = (-?\d+),?(?: /\*.*\*/)?$`)
	cEnumEnd = regexp.MustCompile(`^\} (\w+)_t;$`)
	cArrayRe = regexp.MustCompile(`^(?:static )?\w+_ALIGNAS\((\d+)\) (const )?uint8_t (\w+)\[(\w+)\](?: (\w+))?( = \{|;)$`)
	cTableRe = regexp.MustCompile(`^(?:static )?(?:const )?\w+ \*?(?:const )?(\w+)\[\w+\] = \{$`)
	cRowRe   = regexp.MustCompile(`^\{([^{}]*)\},(?: /\*.*\*/)?$`)
	cFlatRe  = regexp.MustCompile(`^((?:[^,/{}]+, )+)/\*.*\*/$`)
	cHydrate = regexp.MustCompile(`^\w+_hydrate\((\w+), \w+_arena_base\[(\w+)\], (\w+), (\w+)\);$`)
	cEmbed   = regexp.MustCompile(`^#embed "([^"]*)"$`)
	cComment = regexp.MustCompile(`^/\*.*\*/$`)
	cBanner  = regexp.MustCompile(`^/\* Memory plan for model .*; plan hash ([0-9a-f]*)\. \*/$`)
	// cPointerIf opens a branch for one pointer size, as the TFLM arena
	// macros pick their figure: #if / #elif UINTPTR_MAX == max.
	cPointerIf = regexp.MustCompile(`^#(if|elif) UINTPTR_MAX == (0x[0-9A-Fa-f]+)u$`)
)

// pointerBranch is the suffix parseC gives a define inside an
// #if UINTPTR_MAX == max branch: "@32", "@64", "@other" for #else.
func pointerBranch(max string) string {
	switch strings.ToUpper(max) {
	case "0XFFFFFFFF":
		return "@32"
	case "0XFFFFFFFFFFFFFFFF":
		return "@64"
	}
	return "@" + max
}

// parseC reads the lines of data that C checks.
func parseC(name string, data []byte) *cFile {
	f := &cFile{name: name, defines: map[string]cLine{}, enums: map[string]map[string]cLine{}, arrays: map[string]cArray{},
		tables: map[string]*cTable{}}
	var enum map[string]cLine
	var table *cTable
	array := ""
	// branch is the pointer-size branch the line is in (pointerBranch),
	// depth the conditionals nested in it.
	branch, depth := "", 0
	for i, text := range strings.Split(string(data), "\n") {
		n := i + 1
		text = strings.TrimSpace(text)
		if array == "" && strings.HasPrefix(text, "#") {
			m := cPointerIf.FindStringSubmatch(text)
			switch {
			case m != nil && depth == 0 && (m[1] == "if") == (branch == ""):
				branch = pointerBranch(m[2])
			case branch == "":
			case strings.HasPrefix(text, "#if"):
				depth++
			case text == "#endif" && depth > 0:
				depth--
			case text == "#endif":
				branch = ""
			case text == "#else" && depth == 0:
				branch = "@other"
			}
		}
		switch {
		case array != "":
			if text == "};" {
				array = ""
			} else {
				f.arrayLine(array, n, text)
			}
		case table != nil:
			if text == "};" {
				table = nil
			} else if body, ok := tableRow(text); ok {
				table.rows = append(table.rows, cTableRow{line: n, fields: splitFields(body)})
			} else if m := cFlatRe.FindStringSubmatch(text); m != nil {
				table.flat = append(table.flat, splitFields(strings.TrimSuffix(m[1], ", "))...)
			}
		case enum != nil:
			if m := cEnumEnd.FindStringSubmatch(text); m != nil {
				if _, dup := f.enums[m[1]]; dup {
					f.repeated = append(f.repeated, cLine{n, m[1] + "_t"})
				}
				f.enums[m[1]], enum = enum, nil
			} else if m := cEnum.FindStringSubmatch(text); m != nil {
				f.put(enum, m[1], cLine{n, m[2]})
			}
		case text == "typedef enum {":
			enum = map[string]cLine{}
		case strings.HasPrefix(text, "#define "):
			if m := cDefine.FindStringSubmatch(text); m != nil {
				f.put(f.defines, m[1]+branch, cLine{n, m[2]})
			}
		case cArrayRe.MatchString(text):
			m := cArrayRe.FindStringSubmatch(text)
			if _, dup := f.arrays[m[3]]; dup {
				f.repeated = append(f.repeated, cLine{n, m[3]})
			}
			f.arrays[m[3]] = cArray{line: n, align: m[1], constant: m[2] != "", size: m[4], attr: m[5], init: m[6] != ";"}
			if m[6] != ";" {
				array = m[3]
			}
		case cTableRe.MatchString(text):
			sym := cTableRe.FindStringSubmatch(text)[1]
			if _, dup := f.tables[sym]; dup {
				f.repeated = append(f.repeated, cLine{n, sym})
			}
			table = &cTable{line: n}
			f.tables[sym] = table
		case cHydrate.MatchString(text):
			m := cHydrate.FindStringSubmatch(text)
			f.hydrates = append(f.hydrates, cLine{n, strings.Join(m[1:], " ")})
		case f.banner.line == 0 && cBanner.MatchString(text):
			f.banner = cLine{n, cBanner.FindStringSubmatch(text)[1]}
		}
	}
	return f
}

// tableRow matches cRowRe, the most frequent line of a module, without the
// regexp: "{" fields "}," and perhaps " /* comment */"; it returns the
// fields.
func tableRow(text string) (string, bool) {
	if !strings.HasPrefix(text, "{") || len(text) < 3 {
		return "", false
	}
	end := strings.IndexAny(text[1:], "{}") + 1
	if end < 1 || text[end] != '}' || end+1 >= len(text) || text[end+1] != ',' {
		return "", false
	}
	rest := text[end+2:]
	if rest != "" && !(len(rest) >= 5 && strings.HasPrefix(rest, " /*") && strings.HasSuffix(rest, "*/")) {
		return "", false
	}
	return text[1:end], true
}

// arrayLine reads one line of a byte array's initializer: a comment, an
// #embed, or byte values 0xNN, each followed by a comma.
func (f *cFile) arrayLine(sym string, n int, text string) {
	a := f.arrays[sym]
	defer func() { f.arrays[sym] = a }()
	if text == "" || cComment.MatchString(text) {
		return
	}
	if m := cEmbed.FindStringSubmatch(text); m != nil && a.embed == "" && a.data == nil {
		a.embed = m[1]
		return
	}
	for len(text) > 0 {
		if len(text) < 5 || text[0] != '0' || text[1] != 'x' || text[4] != ',' {
			if a.bad.line == 0 {
				a.bad = cLine{n, text}
			}
			return
		}
		v, err := strconv.ParseUint(text[2:4], 16, 8)
		if err != nil {
			if a.bad.line == 0 {
				a.bad = cLine{n, text}
			}
			return
		}
		a.data = append(a.data, byte(v))
		text = text[5:]
	}
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

// stubEntry is what the assembler stub of a module whose constants are
// binary files says of one array.
type stubEntry struct {
	line    int
	section string // the default section, from the #else branch
	align   string
	file    string // .incbin
	size    string // .size
}

var (
	stubSection = regexp.MustCompile(`^\.section "([^"]*)", "a?w?"$`)
	stubAlign   = regexp.MustCompile(`^\.balign (\d+)$`)
	stubGlobal  = regexp.MustCompile(`^\.global (\w+)$`)
	stubIncbin  = regexp.MustCompile(`^\.incbin "([^"]*)"$`)
	stubSize    = regexp.MustCompile(`^\.size (\w+), (\d+)$`)
)

// parseStub reads an assembler stub: each array it defines, by symbol, and
// the plan hash its opening comment names.
func parseStub(data []byte) (map[string]stubEntry, cLine) {
	out := map[string]stubEntry{}
	var banner cLine
	var cur stubEntry
	sym := ""
	for i, text := range strings.Split(string(data), "\n") {
		n := i + 1
		text = strings.TrimSpace(text)
		switch m := (func(re *regexp.Regexp) []string { return re.FindStringSubmatch(text) }); {
		case banner.line == 0 && cBanner.MatchString(text):
			banner = cLine{n, cBanner.FindStringSubmatch(text)[1]}
		case m(stubSection) != nil:
			cur = stubEntry{section: m(stubSection)[1]}
		case m(stubAlign) != nil:
			cur.align = m(stubAlign)[1]
		case m(stubGlobal) != nil:
			sym, cur.line = m(stubGlobal)[1], n
		case m(stubIncbin) != nil:
			cur.file = m(stubIncbin)[1]
		case m(stubSize) != nil && m(stubSize)[1] == sym:
			cur.size = m(stubSize)[2]
			out[sym] = cur
			sym = ""
		}
	}
	return out, banner
}
