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
}

// File is one generated file: a base name and its contents.
type File struct {
	Name string
	Data []byte
}

// Files is the output of C, header first.
type Files []File

// C renders the plan as a C11 module for firmware: "<prefix>.h" declares
// the arenas, a table locating every tensor that occupies memory and macros
// for subgraph 0's inputs and outputs; "<prefix>.c" defines the arenas, with
// each constant arena holding the model's weights at their planned offsets.
// There is no main(). The output compiles without warnings under
// -std=c11 -Wall -Wextra -Wconversion -pedantic, and the header also under
// C++. Offsets and sizes must fit in 32 bits.
func C(m *graph.Model, p *plan.Plan, opts COptions) (Files, error) {
	g, err := newCGen(m, p, opts)
	if err != nil {
		return nil, err
	}
	src, err := g.source()
	if err != nil {
		return nil, err
	}
	return Files{
		{Name: g.prefix + ".h", Data: g.header()},
		{Name: g.prefix + ".c", Data: src},
	}, nil
}

// cgen holds what both files need: names and the tables.
type cgen struct {
	m      *graph.Model
	p      *plan.Plan
	meta   Meta
	hash   string
	prefix string // lower-case symbols: <prefix>_tensors
	macro  string // upper-case macros: <PREFIX>_TENSOR_COUNT
	arenas []cArena
	byID   map[plan.ArenaID]int // arena ID -> index into arenas, for arenas that hold bytes
	table  []cRow               // tensors, in (subgraph, tensor) order
	row    map[graph.TensorRef]int
	vars   []cRow // resource variables, in plan order
	kernel []cRow // kernel scratch, in plan order
}

// cArena is one arena that C defines.
type cArena struct {
	*plan.Arena
	sym   string // <prefix>_<name>
	macro string // <PREFIX>_<NAME>
	enum  string // <PREFIX>_ARENA_<NAME>
}

func (a *cArena) sizeMacro() string { return a.macro + "_SIZE" }
func (a *cArena) attrMacro() string { return a.macro + "_ATTR" }
func (a *cArena) writable() bool    { return a.Role != liveness.Constant || a.Staged() }

// cRow is one allocation in a C table.
type cRow struct {
	*plan.Alloc
	arena int // index into cgen.arenas
}

func newCGen(m *graph.Model, p *plan.Plan, opts COptions) (*cgen, error) {
	prefix := opts.Prefix
	if prefix == "" {
		prefix = CPrefix(opts.Meta.ModelName)
	} else if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	g := &cgen{m: m, p: p, meta: opts.Meta, hash: p.Hash(), prefix: prefix, macro: strings.ToUpper(prefix),
		row: map[graph.TensorRef]int{}}
	if err := g.nameArenas(); err != nil {
		return nil, err
	}
	if err := g.buildTables(); err != nil {
		return nil, err
	}
	if err := g.checkPadding(); err != nil {
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
		case a.Provider != plan.Owned:
			return fmt.Errorf("emit: arena %s is %s; the C module defines only arenas heliac owns", a.Name, a.Provider)
		}
		if j, dup := named[a.Name]; dup {
			return fmt.Errorf("emit: arenas %d and %d are both named %s", j, a.ID, a.Name)
		}
		named[a.Name] = a.ID
		up := strings.ToUpper(a.Name)
		g.byID[a.ID] = len(g.arenas)
		g.arenas = append(g.arenas, cArena{Arena: a, sym: g.prefix + "_" + a.Name, macro: g.macro + "_" + up, enum: g.macro + "_ARENA_" + up})
	}
	if len(g.arenas) > math.MaxUint8+1 {
		return fmt.Errorf("emit: %d arenas; the C tables number at most %d", len(g.arenas), math.MaxUint8+1)
	}
	return nil
}

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
			case a.Ref.Subgraph < 0 || a.Ref.Subgraph > math.MaxUint16:
				return fmt.Errorf("emit: tensor %v: subgraph index does not fit the C table's 16 bits", a.Ref)
			case a.Ref.Tensor < 0 || a.Ref.Tensor > math.MaxUint16:
				return fmt.Errorf("emit: tensor %v: tensor index does not fit the C table's 16 bits", a.Ref)
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
	slices.SortStableFunc(g.table, func(x, y cRow) int {
		return cmp.Or(cmp.Compare(x.Ref.Subgraph, y.Ref.Subgraph), cmp.Compare(x.Ref.Tensor, y.Ref.Tensor))
	})
	for i, r := range g.table {
		if _, dup := g.row[r.Ref]; dup {
			return fmt.Errorf("emit: tensor %v is allocated twice", r.Ref)
		}
		g.row[r.Ref] = i
	}
	return nil
}

// staged reports whether some constant arena is copied in before the first
// run, which needs <prefix>_stage_constants.
func (g *cgen) staged() bool {
	for _, a := range g.arenas {
		if a.Staged() {
			return true
		}
	}
	return false
}

// cwriter is a bytes.Buffer with formatted writes.
type cwriter struct{ bytes.Buffer }

func (w *cwriter) f(format string, args ...any) { fmt.Fprintf(&w.Buffer, format, args...) }
