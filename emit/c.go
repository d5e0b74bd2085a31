package emit

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// COptions controls C.
type COptions struct {
	// Prefix starts every generated file name and C symbol ("<prefix>.h",
	// "<prefix>_tensors"; upper-cased for macros). Empty means
	// CPrefix(Meta.ModelName). An explicit prefix must be a C identifier
	// that starts with a letter and yields no "__".
	Prefix string
	Meta   Meta
	// Constants says how the bytes of constant arenas are written; the zero
	// value is ConstantsC.
	Constants Constants
	// Runtime RuntimeTFLM also writes <prefix>.tflm.cc, which runs the model
	// with TFLM's kernels on the plan; "" is RuntimeNone.
	Runtime Runtime
}

// File is one generated file: a base name and its contents.
type File struct {
	Name string
	Data []byte
}

// Files is the output of C, header first.
type Files []File

// C renders the plan as a C module for firmware (docs/c-module.md; the
// README's "The C module"): "<prefix>.h" declares the module's API and
// "<prefix>.c" defines it.
//
//   - Arenas: every arena heliac owns is an array placed in its bank's
//     linker section (<PREFIX>_PUT_IN_<BANK>, from plan.Bank.Section); an
//     arena the plan says the application binds (plan.Bound) has no
//     storage, and <prefix>_bind_arena takes a buffer for it, returning a
//     status. <prefix>_init checks that every such arena is bound, zeroes
//     persistent arenas, hydrates staged constant arenas (one call of the
//     weak <prefix>_hydrate each) and resolves every tensor's pointer.
//   - Tables: <prefix>_arenas, <prefix>_tensors (arena, offset, size,
//     element type, shape), <prefix>_subgraphs and <prefix>_operators, every
//     run of an operator in the plan's schedule with its operands as
//     tensor-table indices and the subgraphs it runs.
//   - Macros: the plan hash, sizes, and subgraph 0's inputs and outputs
//     with their type, scale and zero point.
//
// With Runtime RuntimeTFLM, "<prefix>.tflm.cc" follows the source: C++
// that runs the model with TFLM's kernels on the plan (tflmSource), which
// <prefix>_init starts and <prefix>_invoke runs.
//
// With Constants other than ConstantsC, the bytes of constant arenas go to
// binary files "<prefix>.<arena>.bin" beside the sources, included by an
// assembler stub "<prefix>.constants.S" or by #embed; Files lists them
// after the source (and the runtime). There is no main(). The output compiles without
// warnings under -std=c99 and -std=c11 with -Wall -Wextra -Wconversion
// -pedantic (GNU C under C99: alignment and sections are attributes), and
// the header also under C++11. Offsets and sizes must fit in 32 bits.
func C(m *graph.Model, p *plan.Plan, opts COptions) (Files, error) {
	g, err := newCGen(m, p, opts)
	if err != nil {
		return nil, err
	}
	h, err := g.header()
	if err != nil {
		return nil, err
	}
	src, err := g.source()
	if err != nil {
		return nil, err
	}
	files := Files{{Name: g.prefix + ".h", Data: h}, {Name: g.prefix + ".c", Data: src}}
	if g.rt.on() {
		cc, err := g.tflmSource()
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: g.prefix + TFLMSuffix, Data: cc})
	}
	blobs, err := g.blobFiles()
	if err != nil {
		return nil, err
	}
	return append(files, blobs...), nil
}

// cgen holds what both files need: names and the tables.
type cgen struct {
	m      *graph.Model
	p      *plan.Plan
	meta   Meta
	mode   Constants
	rt     Runtime
	hash   string
	prefix string // lower-case symbols: <prefix>_tensors
	macro  string // upper-case macros: <PREFIX>_TENSOR_COUNT
	arenas []cArena
	byID   map[plan.ArenaID]int // arena ID -> index into arenas, for arenas that hold bytes
	banks  []cBank
	table  []cRow // tensors, in (subgraph, tensor) order
	row    map[graph.TensorRef]int
	vars   []cRow // resource variables, in plan order
	kernel []cRow // kernel scratch, in plan order
	sched  cSchedule
}

// cArena is one arena that C defines or binds.
type cArena struct {
	*plan.Arena
	sym   string // <prefix>_<name>
	macro string // <PREFIX>_<NAME>
	enum  string // <PREFIX>_ARENA_<NAME>
	bank  *cBank // the bank it lives in
	src   *cBank // for a staged arena, the bank its image is copied from
}

func (a *cArena) sizeMacro() string  { return a.macro + "_SIZE" }
func (a *cArena) alignMacro() string { return a.macro + "_ALIGNMENT" }
func (a *cArena) attrMacro() string  { return a.macro + "_ATTR" }
func (a *cArena) imageSym() string   { return a.sym + "_source" }

// writable reports whether the arena's bytes may change at run time:
// scratch and persistent arenas, and staged constants' copies.
func (a *cArena) writable() bool { return a.Role != liveness.Constant || a.Staged() }

// cold reports whether the arena is constants read where they lie.
func (a *cArena) cold() bool { return a.Role == liveness.Constant && !a.Staged() }

// external reports whether the application binds the arena's buffer.
func (a *cArena) external() bool { return a.Provider == plan.Bound || a.Provider == plan.Shared }

// cBank is one bank of the platform and the macros that place arenas in
// it.
type cBank struct {
	plan.Bank
	put  string // <PREFIX>_PUT_IN_<BANK>
	init string // <PREFIX>_PUT_IN_<BANK>_INIT, for writable banks with BootInit; "" otherwise
}

// cRow is one allocation in a C table.
type cRow struct {
	*plan.Alloc
	arena int   // index into cgen.arenas
	dims  int64 // for a tensor, the index of its first dimension in <prefix>_dims
}

func newCGen(m *graph.Model, p *plan.Plan, opts COptions) (*cgen, error) {
	prefix := Prefix(opts.Prefix, opts.Meta.ModelName)
	if opts.Prefix != "" {
		if err := checkPrefix(prefix); err != nil {
			return nil, err
		}
	}
	if err := opts.Constants.check(); err != nil {
		return nil, err
	}
	if err := opts.Runtime.check(); err != nil {
		return nil, err
	}
	g := &cgen{m: m, p: p, meta: opts.Meta, mode: opts.Constants, rt: opts.Runtime, hash: p.Hash(), prefix: prefix,
		macro: strings.ToUpper(prefix), row: map[graph.TensorRef]int{}}
	if err := g.nameBanks(); err != nil {
		return nil, err
	}
	if err := g.nameArenas(); err != nil {
		return nil, err
	}
	if err := g.buildTables(); err != nil {
		return nil, err
	}
	if err := g.checkPadding(); err != nil {
		return nil, err
	}
	if err := g.buildSchedule(); err != nil {
		return nil, err
	}
	return g, nil
}

// maxPadding is the most zero bytes beyond its data (and beyond as many
// again as its data) a constant arena's initializer may spell out. A large
// alignment pads every constant, and C compilers hold every element of an
// initializer in memory (clang runs out of it on a few hundred MB of
// zeros), so such an arena is refused before any C is written.
const maxPadding = 1 << 20

// checkPadding refuses a constant arena mostly made of alignment padding.
func (g *cgen) checkPadding() error {
	data := make([]int64, len(g.arenas))
	type at struct{ arena, offset int64 }
	seen := map[at]bool{}
	for _, r := range g.table {
		if k := (at{int64(r.arena), r.Offset}); g.arenas[r.arena].Role == liveness.Constant && !seen[k] {
			seen[k] = true
			data[r.arena] += r.Size
		}
	}
	for i, a := range g.arenas {
		if pad := a.Size - data[i]; a.Role == liveness.Constant && pad > max(data[i], maxPadding) {
			return fmt.Errorf("emit: constant arena %s is %d bytes for %d bytes of data: its alignment %d pads every constant "+
				"and the C initializer would spell out the zeros; lower the alignment of bank %s", a.Name, a.Size, data[i], a.Alignment, a.Memory)
		}
	}
	return nil
}

// nameBanks gives every bank of the platform its placement macros, from
// the bank's name made a C identifier.
func (g *cgen) nameBanks() error {
	for _, b := range g.p.Platform.Banks {
		up := strings.ToUpper(plan.CIdent(b.Name))
		if up == "" {
			return fmt.Errorf("emit: bank %q gives no C name (it has no letter or digit); rename it in the platform file", b.Name)
		}
		cb := cBank{Bank: b, put: g.macro + "_PUT_IN_" + up}
		if b.Writable && b.BootInit {
			cb.init = cb.put + "_INIT"
		}
		g.banks = append(g.banks, cb)
	}
	return nil
}

// bank returns the bank named name, or nil.
func (g *cgen) bank(name string) *cBank {
	for i := range g.banks {
		if g.banks[i].Name == name {
			return &g.banks[i]
		}
	}
	return nil
}

// nameArenas gives every arena that holds bytes its C names, from the
// arena's own name.
func (g *cgen) nameArenas() error {
	ids := map[plan.ArenaID]bool{}
	named := map[string]plan.ArenaID{}
	g.byID = map[plan.ArenaID]int{}
	for i := range g.p.Arenas {
		a := &g.p.Arenas[i]
		if ids[a.ID] {
			return fmt.Errorf("emit: two arenas have id %d", a.ID)
		}
		ids[a.ID] = true
		if a.Size == 0 {
			continue // C forbids zero-length arrays; nothing can be in it
		}
		switch {
		case a.Size > math.MaxInt32:
			return fmt.Errorf("emit: arena %s is %d bytes, more than %d, the largest array a 32-bit target's C compiler accepts", a.Name, a.Size, math.MaxInt32)
		case a.Name == "" || plan.CIdent(a.Name) != a.Name:
			return fmt.Errorf("emit: arena %d: name %q is not lower-case letters, digits and single inner '_'", a.ID, a.Name)
		case a.Alignment < 1 || a.Alignment&(a.Alignment-1) != 0:
			return fmt.Errorf("emit: arena %s: alignment %d is not a positive power of two", a.Name, a.Alignment)
		case a.Alignment > plan.MaxAlignment:
			return fmt.Errorf("emit: arena %s: alignment %d is more than %d, the most C compilers accept in _Alignas", a.Name, a.Alignment, plan.MaxAlignment)
		case a.Provider == plan.Shared && a.Role != liveness.Scratch:
			return fmt.Errorf("emit: arena %s is shared between models, but only scratch arenas can be", a.Name)
		case a.Provider == plan.Shared && a.SharedSize < a.Size:
			return fmt.Errorf("emit: arena %s is shared as %d bytes, fewer than its own %d", a.Name, a.SharedSize, a.Size)
		case a.Provider != plan.Owned && a.Provider != plan.Bound && a.Provider != plan.Shared:
			return fmt.Errorf("emit: arena %s has provider %v", a.Name, a.Provider)
		case a.Provider == plan.Bound && a.Role == liveness.Constant && !a.Staged():
			return fmt.Errorf("emit: arena %s holds constants read where they lie; the application cannot bind it", a.Name)
		}
		if j, dup := named[a.Name]; dup {
			return fmt.Errorf("emit: arenas %d and %d are both named %s", j, a.ID, a.Name)
		}
		named[a.Name] = a.ID
		bank := g.bank(a.Memory)
		if bank == nil {
			return fmt.Errorf("emit: arena %s is in memory %s, which is not a bank of platform %q", a.Name, a.Memory, g.p.Platform.Name)
		}
		var src *cBank
		if a.Staged() {
			if src = g.bank(a.Source); src == nil {
				return fmt.Errorf("emit: arena %s is staged from memory %s, which is not a bank of platform %q", a.Name, a.Source, g.p.Platform.Name)
			}
		}
		up := strings.ToUpper(a.Name)
		g.byID[a.ID] = len(g.arenas)
		g.arenas = append(g.arenas, cArena{Arena: a, sym: g.prefix + "_" + a.Name, macro: g.macro + "_" + up,
			enum: g.macro + "_ARENA_" + up, bank: bank, src: src})
	}
	if len(g.arenas) > math.MaxUint8+1 {
		return fmt.Errorf("emit: %d arenas; the C tables number at most %d", len(g.arenas), math.MaxUint8+1)
	}
	return nil
}

// maxTableRows is the most rows the tensor table may have: operands are
// 16-bit indices into it, and NoTensor, 0xffff, is none.
const maxTableRows = math.MaxUint16

// buildTables sorts every allocation into its table (tensors in (subgraph,
// tensor) order) and checks that it fits the table's field widths and its
// arena.
func (g *cgen) buildTables() error {
	for i := range g.p.Allocs {
		a := &g.p.Allocs[i]
		ai, ok := g.byID[a.Arena]
		if !ok {
			return fmt.Errorf("emit: %v %s is in arena %d, which holds no bytes", a.Key, quoted(a.Name), a.Arena)
		}
		if size := g.arenas[ai].Size; a.Offset < 0 || a.Size < 0 || a.Offset+a.Size > size {
			return fmt.Errorf("emit: %v %s at [%d, %d) lies outside its %d-byte arena",
				a.Key, quoted(a.Name), a.Offset, a.Offset+a.Size, size)
		}
		r := cRow{Alloc: a, arena: ai}
		switch a.Kind {
		case plan.TensorAlloc:
			switch {
			case a.Ref.Subgraph < 0 || a.Ref.Subgraph > math.MaxUint16 || int(a.Ref.Subgraph) >= len(g.m.Subgraphs):
				return fmt.Errorf("emit: tensor %v: subgraph index does not fit the C table's 16 bits or the model", a.Ref)
			case a.Ref.Tensor < 0 || a.Ref.Tensor > math.MaxUint16 || int(a.Ref.Tensor) >= len(g.m.Subgraphs[a.Ref.Subgraph].Tensors):
				return fmt.Errorf("emit: tensor %v: tensor index does not fit the C table's 16 bits or the model", a.Ref)
			}
			g.table = append(g.table, r)
		case plan.VariableAlloc:
			g.vars = append(g.vars, r)
		case plan.KernelScratchAlloc:
			switch {
			case a.Op.Subgraph < 0 || a.Op.Subgraph > math.MaxUint16 || a.Op.Op < 0 || a.Op.Op > math.MaxUint16:
				return fmt.Errorf("emit: %v: operator index does not fit the C table's 16 bits", a.Key)
			case a.Index < 0 || a.Index > math.MaxUint8:
				return fmt.Errorf("emit: %v: request index does not fit the C table's 8 bits", a.Key)
			}
			g.kernel = append(g.kernel, r)
		default:
			return fmt.Errorf("emit: %v %s has unknown kind %v", a.Key, quoted(a.Name), a.Kind)
		}
	}
	if len(g.table) >= maxTableRows {
		return fmt.Errorf("emit: %d tensors occupy memory; the C tensor table holds at most %d", len(g.table), maxTableRows-1)
	}
	slices.SortStableFunc(g.table, func(x, y cRow) int {
		return cmp.Or(cmp.Compare(x.Ref.Subgraph, y.Ref.Subgraph), cmp.Compare(x.Ref.Tensor, y.Ref.Tensor))
	})
	var dims int64
	for i := range g.table {
		r := &g.table[i]
		if _, dup := g.row[r.Ref]; dup {
			return fmt.Errorf("emit: tensor %v is allocated twice", r.Ref)
		}
		g.row[r.Ref] = i
		t := g.m.Tensor(r.Ref.Subgraph, r.Ref.Tensor)
		if len(t.Shape) > math.MaxUint8 {
			return fmt.Errorf("emit: tensor %v %s has %d dimensions; the C table holds at most %d", r.Ref, quoted(r.Name), len(t.Shape), math.MaxUint8)
		}
		r.dims = dims
		dims += int64(len(t.Shape))
	}
	return nil
}

// staged reports whether some constant arena is copied in before the first
// run, which needs <prefix>_hydrate.
func (g *cgen) staged() bool {
	for _, a := range g.arenas {
		if a.Staged() {
			return true
		}
	}
	return false
}

// cwriter is a bytes.Buffer with formatted writes that records the names
// it defines, so that a name two parts of the module would both define is
// an error rather than C that does not compile.
type cwriter struct {
	bytes.Buffer
	names map[string]bool
	dup   string // the first name defined twice
}

func (w *cwriter) f(format string, args ...any) { fmt.Fprintf(&w.Buffer, format, args...) }

// name records that the module defines name.
func (w *cwriter) name(name string) {
	if w.names == nil {
		w.names = map[string]bool{}
	}
	if w.names[name] && w.dup == "" {
		w.dup = name
	}
	w.names[name] = true
}

// define writes "#define name value" and records name.
func (w *cwriter) define(name, format string, args ...any) {
	w.name(name)
	w.f("#define %s", name)
	if v := fmt.Sprintf(format, args...); v != "" {
		w.f(" %s", v)
	}
	w.WriteString("\n")
}

// err reports a name defined twice.
func (w *cwriter) err(file string) error {
	if w.dup == "" {
		return nil
	}
	return fmt.Errorf("emit: %s would define %s twice: an arena, bank or prefix gives a name the module already uses; rename the bank or give another --prefix", file, w.dup)
}
