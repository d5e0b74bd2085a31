package verify

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/heliac/heliac/graph"
)

// Module is the C module heliac writes with a plan: <prefix>.h and
// <prefix>.c and, when its constants are binary files (heliac --constants
// incbin or embed), <prefix>.constants.S (incbin only) and the files by
// name.
type Module struct {
	Header, Source []byte
	Stub           []byte            // nil when there is none
	Blobs          map[string][]byte // by base name
}

// C checks that the C module emitted with a plan describes it and the
// model m: planJSON is the plan.json written with it.
//
// The header's PLAN_HASH and the opening comments must name the plan's
// plan_hash, and every figure the macros and tables give must be the
// plan's or the model's: counts and ALIGNMENT; each bank's placement macro
// (its section); each arena's enumerator (numbered in plan order, arenas
// of 0 bytes left out), SIZE, ALIGNMENT and EXTERNAL macros, row of
// <prefix>_arenas, storage (an array in its bank's placement, none for an
// external arena) and state (writable base, read-only image, hydration);
// each row of the tensor table (arena, offset, size, element type, shape);
// the schedule's tables (every run of plan.json's schedule, with the
// model's operator codes, operands and called subgraphs); each resource
// variable's and kernel scratch buffer's; the input and output macros,
// which must repeat the row they index and the model's type and
// quantization; and the bytes of every constant arena, which must be the
// model's constants at the plan's offsets and zeros between. Every
// <PREFIX>_ macro the header defines must be one of these.
//
// C reads the tables heliac writes with a purpose-built line reader, not a
// C parser; a module written another way is reported, not understood. C
// checks plan.json only as far as it must to read it: check the plan with
// Plan as well. It returns nil when the module describes the plan.
func C(m *graph.Model, planJSON []byte, mod Module) []Violation {
	doc, bad := decode(planJSON)
	if doc == nil {
		return bad
	}
	if m, bad = rebuildModel(m, doc); m == nil {
		return bad
	}
	return checkC(m, doc, mod)
}

// checkC runs C's checks on a decoded plan.
func checkC(m *graph.Model, doc *planDoc, mod Module) []Violation {
	return checkParsedC(m, doc, mod, parseModule(mod))
}

// parsedModule is a Module's two files, parsed.
type parsedModule struct{ h, c *cFile }

// parseModule parses a Module's files; it needs no plan, so PlanAndC
// parses them while it decodes the plan.
func parseModule(mod Module) parsedModule {
	return parsedModule{parseC("header", mod.Header), parseC("source", mod.Source)}
}

// checkParsedC is checkC on files parseModule parsed.
func checkParsedC(m *graph.Model, doc *planDoc, mod Module, pm parsedModule) []Violation {
	var r report
	cm := newCModule(m, doc, pm.h, pm.c, &r)
	if cm == nil {
		return r
	}
	cm.mod = mod
	for _, check := range []func(){cm.checkHash, cm.checkCounts, cm.checkSupport, cm.checkPlacement, cm.checkEnums,
		cm.checkArenas, cm.checkState, cm.checkTensors, cm.checkSchedule, cm.checkVariables, cm.checkKernelScratch,
		cm.checkIO, cm.checkConstants, cm.checkRest} {
		check()
	}
	if len(r) == 0 {
		return nil
	}
	return r
}

// cModule holds one run of C: the model, the plan, both files, and the C
// names of the plan's arenas and banks.
type cModule struct {
	m      *graph.Model
	doc    *planDoc
	mod    Module
	h, c   *cFile
	r      *report
	P, p   string            // the macro and symbol prefixes
	arenas []arenaRec        // the arenas C defines: those of a positive size, in plan order
	enumOf map[int64]string  // arena id -> its enumerator
	symOf  map[int64]string  // arena id -> its array
	put    map[string]string // bank name -> its placement macro
	init   map[string]string // bank name -> its _INIT placement macro, for writable boot_init banks
	rowOf  map[graph.TensorRef]int
	used   map[string]bool // header defines a check has read
}

// newCModule finds the prefixes (from <PREFIX>_PLAN_HASH and
// <prefix>_arena_t) and names the plan's arenas and banks as emit/c.go
// does.
func newCModule(m *graph.Model, doc *planDoc, h, c *cFile, r *report) *cModule {
	var hashes []string
	for name := range h.defines {
		if strings.HasSuffix(name, "_PLAN_HASH") {
			hashes = append(hashes, name)
		}
	}
	var arenaT []string
	for name := range h.enums {
		if strings.HasSuffix(name, "_arena") {
			arenaT = append(arenaT, strings.TrimSuffix(name, "_arena"))
		}
	}
	switch {
	case len(hashes) != 1:
		slices.Sort(hashes)
		r.add(CMismatch, "header: want one #define <PREFIX>_PLAN_HASH, found %d (%s)", len(hashes), strings.Join(hashes, ", "))
		return nil
	case len(arenaT) != 1:
		r.add(CMismatch, "header: want one arena enum (typedef enum { ... } <prefix>_arena_t;), found %d", len(arenaT))
		return nil
	}
	cm := &cModule{m: m, doc: doc, h: h, c: c, r: r, P: strings.TrimSuffix(hashes[0], "_PLAN_HASH"), p: arenaT[0],
		enumOf: map[int64]string{}, symOf: map[int64]string{}, put: map[string]string{}, init: map[string]string{},
		rowOf: map[graph.TensorRef]int{}, used: map[string]bool{}}
	h.name, c.name = cm.p+".h", cm.p+".c"
	if strings.ToUpper(cm.p) != cm.P {
		r.add(CMismatch, "%s: macros start with %s, but the arena enum is %s_arena_t", h.name, cm.P, cm.p)
		return nil
	}
	for _, a := range doc.arenas {
		if a.size > 0 {
			cm.arenas = append(cm.arenas, a)
			cm.enumOf[a.id] = cm.P + "_ARENA_" + strings.ToUpper(a.name)
			cm.symOf[a.id] = cm.p + "_" + a.name
		}
	}
	for _, b := range doc.platform.banks {
		cm.put[b.name] = cm.P + "_PUT_IN_" + strings.ToUpper(cIdent(b.name))
		if b.writable && b.bootInit {
			cm.init[b.name] = cm.put[b.name] + "_INIT"
		}
	}
	for i, a := range doc.allocs {
		cm.rowOf[a.ref] = i
	}
	for _, f := range []*cFile{h, c} {
		for _, l := range f.repeated {
			r.add(CMismatch, "%s:%d: %s is given twice", f.name, l.line, l.value)
		}
	}
	return cm
}

// cIdent makes a bank name a part of a C identifier as emit does:
// lower-cased, every run of bytes outside [a-z0-9] one '_', none at either
// end. It restates plan.CIdent on purpose: the verifier imports nothing of
// the planner, so a slip in one is caught by the other.
func cIdent(s string) string {
	var b strings.Builder
	under := true
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		default:
			if !under {
				b.WriteByte('_')
			}
			under = true
			continue
		}
		b.WriteRune(r)
		under = false
	}
	return strings.TrimSuffix(b.String(), "_")
}

// define returns the value of header macro <PREFIX>_<suffix>, or reports
// that it is missing.
func (cm *cModule) define(suffix string) (cLine, bool) {
	name := cm.P + "_" + suffix
	cm.used[name] = true
	l, ok := cm.h.defines[name]
	if !ok {
		cm.r.add(CMismatch, "%s: no #define %s", cm.h.name, name)
	}
	return l, ok
}

// expect reports a header macro whose value is not want, which the plan's
// what gives.
func (cm *cModule) expect(suffix, want, what string) {
	if l, ok := cm.define(suffix); ok && l.value != want {
		cm.r.add(CMismatch, "%s:%d: %s_%s is %s, but %s is %s", cm.h.name, l.line, cm.P, suffix, l.value, what, want)
	}
}

func cUint(n int64) string { return strconv.FormatInt(n, 10) + "u" }

func (cm *cModule) checkHash() {
	cm.expect("PLAN_HASH", `"`+cm.doc.planHash+`"`, "plan.json's plan_hash")
	if cm.doc.tflmArenas != nil {
		cm.checkTFLMArenas()
	} else if n := cm.doc.tflmArena; n != nil {
		// Checked, and so used, only when plan.json gives it.
		cm.expect("TFLM_ARENA_SIZE", cUint(*n), "plan.json's tflm_arena_bytes")
	}
	switch b := cm.c.banner; {
	case b.line == 0:
		cm.r.add(CMismatch, "%s: no opening comment naming the plan hash", cm.c.name)
	case b.value != cm.doc.planHash:
		cm.r.add(CMismatch, "%s:%d: made for plan hash %s, but plan.json's plan_hash is %s", cm.c.name, b.line, b.value, cm.doc.planHash)
	}
}

// checkTFLMArenas checks the TFLM arena macros against plan.json's
// tflm_arenas: in the branch of each entry's pointer size
// (#if UINTPTR_MAX == ...), <P>_TFLM_ARENA_SIZE is its bytes, or is not
// defined where it gives an error; tflm_arena_bytes is the entry of
// tflm_target; <P>_TFLM_RESOURCE_VARIABLES is the model's number of
// VAR_HANDLE operators, as tflm_resource_variables.
func (cm *cModule) checkTFLMArenas() {
	name := cm.P + "_TFLM_ARENA_SIZE"
	primary := false
	for _, a := range cm.doc.tflmArenas {
		key := fmt.Sprintf("%s@%d", name, 8*a.pointerSize)
		cm.used[key] = true
		l, ok := cm.h.defines[key]
		switch {
		case a.bytes > 0 && !ok:
			cm.r.add(CMismatch, "%s: no #define %s for %d-bit pointers, but plan.json's tflm_arenas gives %s %d B",
				cm.h.name, name, 8*a.pointerSize, a.target, a.bytes)
		case a.bytes > 0 && l.value != cUint(a.bytes):
			cm.r.add(CMismatch, "%s:%d: %s is %s for %d-bit pointers, but plan.json's tflm_arenas gives %s %d B",
				cm.h.name, l.line, name, l.value, 8*a.pointerSize, a.target, a.bytes)
		case a.bytes == 0 && ok:
			cm.r.add(CMismatch, "%s:%d: %s is %s for %d-bit pointers, but plan.json's tflm_arenas gives %s none (%s)",
				cm.h.name, l.line, name, l.value, 8*a.pointerSize, a.target, a.err)
		}
		if n := cm.doc.tflmArena; n != nil && a.target == cm.doc.tflmTarget {
			primary = true
			if a.bytes != *n {
				cm.r.add(CMismatch, "plan.json: tflm_arena_bytes is %d, but tflm_arenas gives %s %d B", *n, a.target, a.bytes)
			}
		}
	}
	if cm.doc.tflmArena != nil && !primary {
		cm.r.add(CMismatch, "plan.json: tflm_arenas has no entry for tflm_target %q", cm.doc.tflmTarget)
	}
	vars := 0
	for _, sg := range cm.m.Subgraphs {
		for _, op := range sg.Ops {
			if op.Code == graph.VarHandle {
				vars++
			}
		}
	}
	if n := cm.doc.tflmResourceVariables; n != nil && *n != int64(vars) {
		cm.r.add(CMismatch, "plan.json: tflm_resource_variables is %d, but the model has %d VAR_HANDLE operator(s)", *n, vars)
	}
	cm.expect("TFLM_RESOURCE_VARIABLES", strconv.Itoa(vars), "the model's number of VAR_HANDLE operators")
}

// checkCounts checks the macros that count the tables' entries.
func (cm *cModule) checkCounts() {
	cm.expect("ALIGNMENT", cUint(cm.doc.alignment), "plan.json's alignment")
	cm.expect("TENSOR_COUNT", cUint(int64(len(cm.doc.allocs))), "the number of tensor_allocs entries")
	cm.expect("SUBGRAPH_COUNT", cUint(int64(len(cm.m.Subgraphs))), "the model's number of subgraphs")
	cm.expect("OPERATOR_COUNT", cUint(int64(len(cm.doc.schedule))), "the number of schedule entries")
	cm.expect("NO_TENSOR", "65535u", "the operand that names no tensor")
	cm.expect("DIM_COUNT", cUint(cm.dimCount()), "the tensors' dimensions together")
}

// checkSupport checks the one object-like compiler-support macro.
func (cm *cModule) checkSupport() {
	cm.expect("WEAK", cm.P+"_GNU_ATTR((weak))", "the weak attribute")
}

// checkPlacement checks each bank's placement macros against its sections.
func (cm *cModule) checkPlacement() {
	section := func(s string) string {
		if s == "" {
			return ""
		}
		return fmt.Sprintf(`%s_SECTION("%s")`, cm.P, s)
	}
	for _, b := range cm.doc.platform.banks {
		cm.expect(strings.TrimPrefix(cm.put[b.name], cm.P+"_"), section(b.section), b.path+".section")
		if in, ok := cm.init[b.name]; ok {
			cm.expect(strings.TrimPrefix(in, cm.P+"_"), section(b.initSection), b.path+".init_section")
		}
	}
}

// cRoles and cStatuses are the enumerators of the role and status enums,
// in order: roles from 1, statuses from 0.
var (
	cRoles    = []string{roleScratch, rolePersistent, roleConstant}
	cStatuses = []string{"OK", "ERR_UNKNOWN_ARENA", "ERR_INTERNAL_ARENA", "ERR_NULL", "ERR_TOO_SMALL", "ERR_MISALIGNED", "ERR_UNBOUND"}
	// runtimeStatuses follow cStatuses in the header of a module with the
	// TFLM runtime (<prefix>.tflm.cc).
	runtimeStatuses = []string{"ERR_KERNEL", "ERR_KERNEL_STATE", "ERR_SCRATCH", "ERR_NOT_INITIALIZED"}
)

// checkEnums checks the arena, role, status and element type enums, and
// that the header has no other.
func (cm *cModule) checkEnums() {
	want := map[string]map[string]string{"arena": {cm.P + "_ARENA_COUNT": strconv.Itoa(len(cm.arenas))}, "role": {}, "status": {}, "type": {}}
	for k, a := range cm.arenas {
		want["arena"][cm.enumOf[a.id]] = strconv.Itoa(k)
	}
	for i, r := range cRoles {
		want["role"][cm.P+"_ROLE_"+strings.ToUpper(r)] = strconv.Itoa(i + 1)
	}
	statuses := cStatuses
	if _, ok := cm.h.enums[cm.p+"_status"][cm.P+"_"+runtimeStatuses[0]]; ok {
		statuses = append(slices.Clone(statuses), runtimeStatuses...)
	}
	for i, s := range statuses {
		want["status"][cm.P+"_"+s] = strconv.Itoa(i)
	}
	for t := graph.ElementType(0); t.Valid(); t++ {
		want["type"][cm.P+"_TYPE_"+t.String()] = strconv.Itoa(int(t))
	}
	for _, name := range sortedKeys(cm.h.enums) {
		if _, ok := want[strings.TrimPrefix(name, cm.p+"_")]; !ok || !strings.HasPrefix(name, cm.p+"_") {
			cm.r.add(CMismatch, "%s: enum %s_t is none of the module's", cm.h.name, name)
		}
	}
	for _, kind := range sortedKeys(want) {
		got := cm.h.enums[cm.p+"_"+kind]
		for _, e := range sortedKeys(want[kind]) {
			switch l, ok := got[e]; {
			case !ok:
				cm.r.add(CMismatch, "%s: no enumerator %s in %s_%s_t", cm.h.name, e, cm.p, kind)
			case l.value != want[kind][e]:
				cm.r.add(CMismatch, "%s:%d: %s is %s, want %s", cm.h.name, l.line, e, l.value, want[kind][e])
			}
		}
		for _, e := range sortedKeys(got) {
			if _, ok := want[kind][e]; !ok {
				cm.r.add(CMismatch, "%s:%d: enumerator %s of %s_%s_t names nothing of the plan", cm.h.name, got[e].line, e, cm.p, kind)
			}
		}
	}
}

// external reports whether the application binds arena a.
func external(a arenaRec) bool { return a.provider == "bound" || a.provider == "shared" }

// cold reports whether arena a holds constants read where they lie.
func cold(a arenaRec) bool { return a.role == roleConstant && !a.staged() }

// checkArenas checks each arena's macros, its row of <prefix>_arenas and
// its storage: an array in its bank's placement, or none when the
// application binds it.
func (cm *cModule) checkArenas() {
	rows := cm.table(cm.p+"_arenas", len(cm.arenas), "arenas of a positive size")
	for k, a := range cm.arenas {
		upper := strings.ToUpper(a.name)
		cm.expect(upper+"_SIZE", cUint(a.size), a.path+".size")
		cm.expect(upper+"_ALIGNMENT", cUint(a.alignment), a.path+".alignment")
		if external(a) {
			cm.expect(upper+"_EXTERNAL", "1", a.path+".provider "+a.provider)
		}
		if k < len(rows) {
			cm.row(cm.p+"_arenas", k, rows[k], []string{cm.P + "_" + upper + "_SIZE", cUint(a.alignment),
				cm.P + "_ROLE_" + strings.ToUpper(a.role), cUint(map[bool]int64{true: 1}[external(a)])}, a.path)
		}
		sym, put := cm.symOf[a.id], cm.put[a.memory]
		if in, ok := cm.init[a.memory]; ok && cold(a) {
			put = in
		}
		switch {
		case external(a):
			if d, ok := cm.c.arrays[sym]; ok {
				cm.r.add(CMismatch, "%s:%d: %s is defined, but %s is bound by the application", cm.c.name, d.line, sym, a.path)
			}
		case cold(a):
			cm.checkImage(sym, a, upper+"_ATTR", put)
		default:
			cm.checkArray(sym, a, false, upper+"_ATTR", put)
		}
		if a.staged() {
			cm.checkImage(sym+"_source", a, upper+"_SOURCE_ATTR", cm.put[*a.source])
		}
	}
}

// checkImage checks a constant image's definition: an array in the source
// (or, with incbin, in the stub).
func (cm *cModule) checkImage(sym string, a arenaRec, attr, put string) {
	if cm.mod.Stub != nil {
		if d, ok := cm.c.arrays[sym]; ok {
			cm.r.add(CMismatch, "%s:%d: %s is defined here and in the assembler stub", cm.c.name, d.line, sym)
		}
		return // checkConstants checks the stub's
	}
	cm.checkArray(sym, a, true, attr, put)
}

// checkArray checks the definition of an arena's array (or of a constant
// image) and that its placement macro defaults to its bank's.
func (cm *cModule) checkArray(sym string, a arenaRec, constant bool, attr, put string) {
	d, ok := cm.c.arrays[sym]
	size := cm.P + "_" + strings.ToUpper(a.name) + "_SIZE"
	attr = cm.P + "_" + attr
	switch {
	case !ok:
		cm.r.add(CMismatch, "%s: %s (%s) is not defined", cm.c.name, sym, a.path)
		return
	case d.align != strconv.FormatInt(a.alignment, 10):
		cm.r.add(CMismatch, "%s:%d: %s is aligned to %s, but %s.alignment is %d", cm.c.name, d.line, sym, d.align, a.path, a.alignment)
	case d.size != size:
		cm.r.add(CMismatch, "%s:%d: %s has %s bytes, want %s", cm.c.name, d.line, sym, d.size, size)
	case d.constant != constant:
		cm.r.add(CMismatch, "%s:%d: %s is const=%t, but %s is a %s arena (const=%t)", cm.c.name, d.line, sym, d.constant, a.path, a.role, constant)
	case d.attr != attr:
		cm.r.add(CMismatch, "%s:%d: %s is placed by %s, want %s", cm.c.name, d.line, sym, d.attr, attr)
	}
	switch l, ok := cm.c.defines[attr]; {
	case !ok:
		cm.r.add(CMismatch, "%s: no default #define %s", cm.c.name, attr)
	case l.value != put:
		cm.r.add(CMismatch, "%s:%d: %s is %s, but %s is in memory %s, placed by %s", cm.c.name, l.line, attr, l.value, a.path, a.memory, put)
	}
}

// checkState checks what the functions start from: the writable base of
// each arena (its array, or NULL for read-only and external arenas), the
// read-only image of each cold constant arena, and the hydration of each
// staged arena.
func (cm *cModule) checkState() {
	base := cm.flat(cm.p+"_arena_base", len(cm.arenas), "arenas of a positive size")
	image := cm.flat(cm.p+"_arena_image", len(cm.arenas), "arenas of a positive size")
	var hydrate []string
	for k, a := range cm.arenas {
		sym := cm.symOf[a.id]
		wantBase, wantImage := sym, "NULL"
		if external(a) || cold(a) {
			wantBase = "NULL"
		}
		if cold(a) {
			wantImage = sym
		}
		if k < len(base) && base[k] != wantBase {
			cm.r.add(CMismatch, "%s: %s_arena_base[%d] is %s, but %s wants %s", cm.c.name, cm.p, k, base[k], a.path, wantBase)
		}
		if k < len(image) && image[k] != wantImage {
			cm.r.add(CMismatch, "%s: %s_arena_image[%d] is %s, but %s wants %s", cm.c.name, cm.p, k, image[k], a.path, wantImage)
		}
		if a.staged() {
			e := cm.enumOf[a.id]
			hydrate = append(hydrate, strings.Join([]string{e, e, sym + "_source", cm.P + "_" + strings.ToUpper(a.name) + "_SIZE"}, " "))
		}
	}
	var got []string
	for _, l := range cm.c.hydrates {
		got = append(got, l.value)
	}
	if !slices.Equal(got, hydrate) {
		cm.r.add(CMismatch, "%s: init hydrates {%s}, but the plan's staged arenas want {%s}", cm.c.name,
			strings.Join(got, "; "), strings.Join(hydrate, "; "))
	}
}

// flat returns the values of a flat table, which must have n of them (and
// none when n is 0).
func (cm *cModule) flat(sym string, n int, what string) []string {
	t, ok := cm.c.tables[sym]
	switch {
	case !ok && n > 0:
		cm.r.add(CMismatch, "%s: no table %s for the %d %s", cm.c.name, sym, n, what)
		return nil
	case !ok:
		return nil
	case len(t.flat) != n || len(t.rows) > 0:
		cm.r.add(CMismatch, "%s:%d: table %s has %d value(s), but there are %d %s", cm.c.name, t.line, sym, len(t.flat), n, what)
	}
	return t.flat
}

// row compares one table row with the fields the plan gives it.
func (cm *cModule) row(table string, i int, got cTableRow, want []string, what string) {
	if !slices.Equal(got.fields, want) {
		cm.r.add(CMismatch, "%s:%d: %s[%d] is {%s}, but %s gives {%s}", cm.c.name, got.line, table, i,
			strings.Join(got.fields, ", "), what, strings.Join(want, ", "))
	}
}

// table checks that a table of rows has one row per entry, and returns
// its rows (nil when the count is 0 and the table is rightly absent).
func (cm *cModule) table(sym string, n int, what string) []cTableRow {
	t, ok := cm.c.tables[sym]
	switch {
	case !ok && n > 0:
		cm.r.add(CMismatch, "%s: no table %s for the %d %s entries", cm.c.name, sym, n, what)
		return nil
	case !ok:
		return nil
	case len(t.rows) != n || len(t.flat) > 0:
		cm.r.add(CMismatch, "%s: table %s has %d row(s), but %s has %d entries", cm.c.name, sym, len(t.rows), what, n)
	}
	return t.rows
}

// enum is the enumerator of arena id as C numbers it, or a note that C
// defines no such arena.
func (cm *cModule) enum(id int64) string {
	if e, ok := cm.enumOf[id]; ok {
		return e
	}
	return fmt.Sprintf("(arena %d, which C does not define)", id)
}

// arena returns the arena record of id.
func (cm *cModule) arena(id int64) (arenaRec, bool) {
	for _, a := range cm.arenas {
		if a.id == id {
			return a, true
		}
	}
	return arenaRec{}, false
}

// place checks the ARENA, OFFSET, SIZE and DATA macros of one allocation.
func (cm *cModule) place(name string, arena, offset, size int64, what string) {
	cm.expect(name+"_ARENA", cm.enum(arena), what+"'s arena")
	cm.expect(name+"_OFFSET", cUint(offset), what+"'s offset")
	cm.expect(name+"_SIZE", cUint(size), what+"'s size")
	data := fmt.Sprintf("(&%s[%s_%s_OFFSET])", cm.symOf[arena], cm.P, name)
	if a, ok := cm.arena(arena); ok && external(a) {
		data = fmt.Sprintf("(%s_arena_data(%s_%s_ARENA) + %s_%s_OFFSET)", cm.p, cm.P, name, cm.P, name)
	}
	cm.expect(name+"_DATA", data, what+"'s bytes")
}

// checkVariables compares each resource variable's macros with its
// resource_variables entry.
func (cm *cModule) checkVariables() {
	cm.expect("VARIABLE_COUNT", cUint(int64(len(cm.doc.variables))), "the number of resource_variables entries")
	for i, v := range cm.doc.variables {
		cm.place(fmt.Sprintf("VARIABLE_%d", i), v.arena, v.offset, v.size, v.path)
	}
}

// checkKernelScratch compares the kernel scratch table with kernel_scratch.
func (cm *cModule) checkKernelScratch() {
	sym := cm.p + "_kernel_scratch"
	cm.expect("KERNEL_SCRATCH_COUNT", cUint(int64(len(cm.doc.kernel))), "the number of kernel_scratch entries")
	rows := cm.table(sym, len(cm.doc.kernel), "kernel_scratch")
	for i, row := range rows {
		if i >= len(cm.doc.kernel) {
			break
		}
		k := cm.doc.kernel[i]
		cm.row(sym, i, row, []string{cUint(int64(k.op.Subgraph)), cUint(int64(k.op.Op)), cUint(k.index), cm.enum(k.arena),
			cUint(k.offset), cUint(k.size)}, k.path)
	}
}

// checkRest reports every <PREFIX>_ macro of the header that no check
// read: a macro that describes nothing of the plan.
func (cm *cModule) checkRest() {
	cm.used[cm.P+"_H"] = true
	for _, name := range sortedKeys(cm.h.defines) {
		if strings.HasPrefix(name, cm.P+"_") && !cm.used[name] {
			cm.r.add(CMismatch, "%s:%d: %s describes nothing of the plan", cm.h.name, cm.h.defines[name].line, name)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
