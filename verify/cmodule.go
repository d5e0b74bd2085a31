package verify

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// C checks that the C module emitted with a plan describes it: header and
// source are <prefix>.h and <prefix>.c, planJSON the plan.json written
// with them. The header's PLAN_HASH and the source's opening comment must
// name the plan's plan_hash, and every figure the tables and macros give
// must be the plan's: ALIGNMENT; each arena's enumerator (numbered in plan
// order, arenas of 0 bytes left out), SIZE macro, and alignment, size and
// constness as defined; each row of the tensor and kernel scratch tables;
// each resource variable's macros; the input and output macros, which
// must repeat the row they index; and the accessors' arrays. Every
// <PREFIX>_ macro the header defines must be one of these.
//
// C reads the tables heliac writes with a purpose-built line reader, not a
// C parser; a module written another way is reported, not understood. C
// checks plan.json only as far as it must to read it: check the plan with
// Plan as well. It returns nil when the module describes the plan.
func C(planJSON, header, source []byte) []Violation {
	doc, bad := decode(planJSON)
	if doc == nil {
		return bad
	}
	var r report
	m := newCModule(doc, parseC("header", header), parseC("source", source), &r)
	if m == nil {
		return r
	}
	for _, check := range []func(){m.checkHash, m.checkArenas, m.checkTensors, m.checkVariables,
		m.checkKernelScratch, m.checkIO, m.checkAccessors, m.checkRest} {
		check()
	}
	if len(r) == 0 {
		return nil
	}
	return r
}

// cModule holds one run of C: the plan, both files, and the C names of the
// plan's arenas.
type cModule struct {
	doc    *planDoc
	h, c   *cFile
	r      *report
	P, p   string           // the macro and symbol prefixes
	arenas []arenaRec       // the arenas C defines: those of a positive size, in plan order
	enumOf map[int64]string // arena id -> its enumerator
	symOf  map[int64]string // arena id -> its array
	used   map[string]bool  // header defines a check has read
}

// newCModule finds the prefixes (from <PREFIX>_PLAN_HASH and
// <prefix>_arena_t) and names the plan's arenas as emit/c.go does.
func newCModule(doc *planDoc, h, c *cFile, r *report) *cModule {
	var hashes []string
	for name := range h.defines {
		if strings.HasSuffix(name, "_PLAN_HASH") {
			hashes = append(hashes, name)
		}
	}
	switch {
	case len(hashes) != 1:
		slices.Sort(hashes)
		r.add(CMismatch, "header: want one #define <PREFIX>_PLAN_HASH, found %d (%s)", len(hashes), strings.Join(hashes, ", "))
		return nil
	case h.arenaT == "":
		r.add(CMismatch, "header: no arena enum (typedef enum { ... } <prefix>_arena_t;)")
		return nil
	}
	m := &cModule{doc: doc, h: h, c: c, r: r, P: strings.TrimSuffix(hashes[0], "_PLAN_HASH"), p: h.arenaT,
		enumOf: map[int64]string{}, symOf: map[int64]string{}, used: map[string]bool{}}
	h.name, c.name = m.p+".h", m.p+".c"
	if strings.ToUpper(m.p) != m.P {
		r.add(CMismatch, "%s: macros start with %s, but the arena enum is %s_arena_t", h.name, m.P, m.p)
		return nil
	}
	for _, a := range doc.arenas {
		if a.size > 0 {
			m.arenas = append(m.arenas, a)
			m.enumOf[a.id] = m.P + "_ARENA_" + strings.ToUpper(a.name)
			m.symOf[a.id] = m.p + "_" + a.name
		}
	}
	for _, l := range h.repeated {
		r.add(CMismatch, "%s:%d: %s is given twice", h.name, l.line, l.value)
	}
	for _, l := range c.repeated {
		r.add(CMismatch, "%s:%d: %s is given twice", c.name, l.line, l.value)
	}
	return m
}

// define returns the value of header macro <PREFIX>_<suffix>, or reports
// that it is missing.
func (m *cModule) define(suffix string) (cLine, bool) {
	name := m.P + "_" + suffix
	m.used[name] = true
	l, ok := m.h.defines[name]
	if !ok {
		m.r.add(CMismatch, "%s: no #define %s", m.h.name, name)
	}
	return l, ok
}

// expect reports a header macro whose value is not want, which the plan's
// what gives.
func (m *cModule) expect(suffix, want, what string) {
	if l, ok := m.define(suffix); ok && l.value != want {
		m.r.add(CMismatch, "%s:%d: %s_%s is %s, but %s is %s", m.h.name, l.line, m.P, suffix, l.value, what, want)
	}
}

func cUint(n int64) string { return strconv.FormatInt(n, 10) + "u" }

func (m *cModule) checkHash() {
	m.expect("PLAN_HASH", `"`+m.doc.planHash+`"`, "plan.json's plan_hash")
	switch b := m.c.banner; {
	case b.line == 0:
		m.r.add(CMismatch, "%s: no opening comment naming the plan hash", m.c.name)
	case b.value != m.doc.planHash:
		m.r.add(CMismatch, "%s:%d: made for plan hash %s, but plan.json's plan_hash is %s", m.c.name, b.line, b.value, m.doc.planHash)
	}
	m.expect("ALIGNMENT", cUint(m.doc.alignment), "plan.json's alignment")
}

// checkArenas checks each arena's enumerator, SIZE macro and array (and,
// for a staged arena, the array of its image), and that the enum has no
// other enumerators.
func (m *cModule) checkArenas() {
	known := map[string]bool{m.P + "_ARENA_COUNT": true}
	for k, a := range m.arenas {
		enum, upper := m.enumOf[a.id], strings.ToUpper(a.name)
		known[enum] = true
		switch l, ok := m.h.enums[enum]; {
		case !ok:
			m.r.add(CMismatch, "%s: no enumerator %s for %s", m.h.name, enum, a.path)
		case l.value != strconv.Itoa(k):
			m.r.add(CMismatch, "%s:%d: %s is %s, but %s is arena %d of those C defines", m.h.name, l.line, enum, l.value, a.path, k)
		}
		m.expect(upper+"_SIZE", cUint(a.size), a.path+".size")
		cold := a.role == roleConstant && a.source == nil
		m.checkArray(m.symOf[a.id], a, cold)
		if a.role == roleConstant && a.source != nil {
			m.checkArray(m.symOf[a.id]+"_source", a, true)
		}
	}
	switch l, ok := m.h.enums[m.P+"_ARENA_COUNT"]; {
	case !ok:
		m.r.add(CMismatch, "%s: no enumerator %s_ARENA_COUNT", m.h.name, m.P)
	case l.value != strconv.Itoa(len(m.arenas)):
		m.r.add(CMismatch, "%s:%d: %s_ARENA_COUNT is %s, but the plan has %d arena(s) of a positive size",
			m.h.name, l.line, m.P, l.value, len(m.arenas))
	}
	for _, name := range sortedKeys(m.h.enums) {
		if !known[name] {
			m.r.add(CMismatch, "%s:%d: enumerator %s names no arena of the plan", m.h.name, m.h.enums[name].line, name)
		}
	}
}

// checkArray checks the definition of an arena's array (or of a staged
// arena's image).
func (m *cModule) checkArray(sym string, a arenaRec, constant bool) {
	d, ok := m.c.arrays[sym]
	size := m.P + "_" + strings.ToUpper(a.name) + "_SIZE"
	switch {
	case !ok:
		m.r.add(CMismatch, "%s: %s (%s) is not defined", m.c.name, sym, a.path)
	case d.align != strconv.FormatInt(a.alignment, 10):
		m.r.add(CMismatch, "%s:%d: %s is aligned to %s, but %s.alignment is %d", m.c.name, d.line, sym, d.align, a.path, a.alignment)
	case d.size != size:
		m.r.add(CMismatch, "%s:%d: %s has %s bytes, want %s", m.c.name, d.line, sym, d.size, size)
	case d.constant != constant:
		m.r.add(CMismatch, "%s:%d: %s is const=%t, but %s is a %s arena (const=%t)", m.c.name, d.line, sym, d.constant, a.path, a.role, constant)
	}
}

// row compares one table row with the fields the plan gives it.
func (m *cModule) row(table string, i int, got cTableRow, want []string, what string) {
	if !slices.Equal(got.fields, want) {
		m.r.add(CMismatch, "%s:%d: %s[%d] is {%s}, but %s gives {%s}", m.c.name, got.line, table, i,
			strings.Join(got.fields, ", "), what, strings.Join(want, ", "))
	}
}

// table checks that a table has one row per entry, and returns its rows
// (nil when the count is 0 and the table is rightly absent).
func (m *cModule) table(sym, count string, n int, what string) []cTableRow {
	m.expect(count, cUint(int64(n)), fmt.Sprintf("the number of %s entries", what))
	rows, ok := m.c.tables[sym]
	switch {
	case !ok && n > 0:
		m.r.add(CMismatch, "%s: no table %s for the %d %s entries", m.c.name, sym, n, what)
	case len(rows) != n:
		m.r.add(CMismatch, "%s: table %s has %d row(s), but %s has %d entries", m.c.name, sym, len(rows), what, n)
	}
	return rows
}

// checkTensors compares the tensor table with tensor_allocs.
func (m *cModule) checkTensors() {
	sym := m.p + "_tensors"
	rows := m.table(sym, "TENSOR_COUNT", len(m.doc.allocs), "tensor_allocs")
	for i, row := range rows {
		if i >= len(m.doc.allocs) {
			break
		}
		a := m.doc.allocs[i]
		m.row(sym, i, row, []string{cUint(int64(a.ref.Subgraph)), cUint(int64(a.ref.Tensor)), m.enum(a.arena),
			cUint(a.offset), cUint(a.size)}, a.path)
	}
}

// checkKernelScratch compares the kernel scratch table with kernel_scratch.
func (m *cModule) checkKernelScratch() {
	sym := m.p + "_kernel_scratch"
	rows := m.table(sym, "KERNEL_SCRATCH_COUNT", len(m.doc.kernel), "kernel_scratch")
	for i, row := range rows {
		if i >= len(m.doc.kernel) {
			break
		}
		k := m.doc.kernel[i]
		m.row(sym, i, row, []string{cUint(int64(k.op.Subgraph)), cUint(int64(k.op.Op)), cUint(k.index), m.enum(k.arena),
			cUint(k.offset), cUint(k.size)}, k.path)
	}
}

// checkVariables compares each resource variable's macros with its
// resource_variables entry.
func (m *cModule) checkVariables() {
	m.expect("VARIABLE_COUNT", cUint(int64(len(m.doc.variables))), "the number of resource_variables entries")
	for i, v := range m.doc.variables {
		m.place(fmt.Sprintf("VARIABLE_%d", i), v.arena, v.offset, v.size, v.path)
	}
}

// place checks the ARENA, OFFSET, SIZE and DATA macros of one allocation.
func (m *cModule) place(name string, arena, offset, size int64, what string) {
	m.expect(name+"_ARENA", m.enum(arena), what+"'s arena")
	m.expect(name+"_OFFSET", cUint(offset), what+"'s offset")
	m.expect(name+"_SIZE", cUint(size), what+"'s size")
	m.expect(name+"_DATA", fmt.Sprintf("(&%s[%s_%s_OFFSET])", m.symOf[arena], m.P, name), what+"'s bytes")
}

// enum is the enumerator of arena id as C numbers it, or a note that C
// defines no such arena.
func (m *cModule) enum(id int64) string {
	if e, ok := m.enumOf[id]; ok {
		return e
	}
	return fmt.Sprintf("(arena %d, which C does not define)", id)
}

// checkIO checks that each input and output macro set repeats the tensor
// table row it indexes. Which tensor each is, only the model says.
func (m *cModule) checkIO() {
	for _, role := range []string{"INPUT", "OUTPUT"} {
		l, ok := m.define(role + "_COUNT")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(l.value, "u"))
		if err != nil || n < 0 || n > len(m.h.defines) {
			m.r.add(CMismatch, "%s:%d: %s_%s_COUNT is %s, not a count", m.h.name, l.line, m.P, role, l.value)
			continue
		}
		for i := range n {
			m.checkIOTensor(fmt.Sprintf("%s_%d", role, i))
		}
	}
}

// checkIOTensor checks the macros of one input or output: none when it
// occupies no memory, else those of the table row its INDEX names.
func (m *cModule) checkIOTensor(name string) {
	idx, ok := m.h.defines[m.P+"_"+name+"_INDEX"]
	if !ok {
		return // occupies no memory; checkRest reports any other macro of it
	}
	m.used[m.P+"_"+name+"_INDEX"] = true
	r, err := strconv.Atoi(strings.TrimSuffix(idx.value, "u"))
	if err != nil || r < 0 || r >= len(m.doc.allocs) {
		m.r.add(CMismatch, "%s:%d: %s_%s_INDEX is %s, not a row of the %d-row tensor table", m.h.name, idx.line, m.P, name, idx.value, len(m.doc.allocs))
		for _, part := range []string{"ARENA", "OFFSET", "SIZE", "DATA"} {
			m.used[m.P+"_"+name+"_"+part] = true // described by the row it names
		}
		return
	}
	a := m.doc.allocs[r]
	m.place(name, a.arena, a.offset, a.size, a.path)
}

// checkAccessors checks that each case of the accessors returns the bytes
// of its own arena, and that the accessor of writable bytes returns none
// of a cold constant arena.
func (m *cModule) checkAccessors() {
	byEnum := map[string]arenaRec{}
	for _, a := range m.arenas {
		byEnum[m.enumOf[a.id]] = a
	}
	for _, c := range m.h.cases {
		a, ok := byEnum[c.enum]
		switch {
		case !ok:
			m.r.add(CMismatch, "%s:%d: case %s names no arena of the plan", m.h.name, c.line, c.enum)
		case c.sym != m.symOf[a.id]:
			m.r.add(CMismatch, "%s:%d: case %s returns bytes of %s, not of %s (%s)", m.h.name, c.line, c.enum, c.sym, m.symOf[a.id], a.path)
		case c.mutable && a.role == roleConstant && a.source == nil:
			m.r.add(CMismatch, "%s:%d: the writable accessor returns bytes of cold constant arena %s", m.h.name, c.line, m.symOf[a.id])
		}
	}
}

// checkRest reports every <PREFIX>_ macro of the header that no check
// read: a macro that describes nothing of the plan.
func (m *cModule) checkRest() {
	m.used[m.P+"_H"] = true
	for _, name := range sortedKeys(m.h.defines) {
		if strings.HasPrefix(name, m.P+"_") && !m.used[name] {
			m.r.add(CMismatch, "%s:%d: %s describes nothing of the plan", m.h.name, m.h.defines[name].line, name)
		}
	}
}

func sortedKeys(m map[string]cLine) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
