package emit

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/heliac/heliac/graph"
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

// cgen holds what both files need: names and the tensor table.
type cgen struct {
	m      *graph.Model
	p      *plan.Plan
	meta   Meta
	hash   string
	prefix string // lower-case symbols: <prefix>_tensors
	macro  string // upper-case macros: <PREFIX>_TENSOR_COUNT
	arenas []cArena
	byPlan []int  // plan arena index -> index into arenas, -1 if omitted
	table  []cRow // in (subgraph, tensor) order
	row    map[graph.TensorRef]int
}

// cArena is one arena that C defines.
type cArena struct {
	*plan.Arena
	sym   string // <prefix>_scratch_sram
	macro string // <PREFIX>_SCRATCH_SRAM
	enum  string // <PREFIX>_ARENA_SCRATCH_SRAM
}

func (a *cArena) sizeMacro() string { return a.macro + "_SIZE" }
func (a *cArena) attrMacro() string { return a.macro + "_ATTR" }
func (a *cArena) writable() bool    { return a.Kind != plan.ConstantArena || a.Staged }

// cRow is one entry of the tensor table.
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
	if err := g.buildTable(); err != nil {
		return nil, err
	}
	return g, nil
}

// nameArenas names every arena that holds bytes as <kind>_<memory>.
func (g *cgen) nameArenas() error {
	seen := map[string]int{}
	g.byPlan = make([]int, len(g.p.Arenas))
	for i := range g.p.Arenas {
		a := &g.p.Arenas[i]
		g.byPlan[i] = -1
		if a.Size == 0 {
			continue // C forbids zero-length arrays; no tensor can be in it
		}
		if a.Size > math.MaxUint32 {
			return fmt.Errorf("emit: %s arena in %s is %d bytes; the C tables hold 32-bit offsets and sizes", a.Kind, a.Memory, a.Size)
		}
		name := a.Kind.String()
		if mem := identPart(a.Memory); mem != "" {
			name += "_" + mem
		}
		if j, ok := seen[name]; ok {
			return fmt.Errorf("emit: arenas %d and %d (%s in %q and %q) would both be named %s", j, i, a.Kind, g.p.Arenas[j].Memory, a.Memory, name)
		}
		seen[name] = i
		up := strings.ToUpper(name)
		g.byPlan[i] = len(g.arenas)
		g.arenas = append(g.arenas, cArena{Arena: a, sym: g.prefix + "_" + name, macro: g.macro + "_" + up, enum: g.macro + "_ARENA_" + up})
	}
	if len(g.arenas) > math.MaxUint8+1 {
		return fmt.Errorf("emit: %d arenas; the C tensor table numbers at most %d", len(g.arenas), math.MaxUint8+1)
	}
	return nil
}

// buildTable lists every allocation in (subgraph, tensor) order and checks
// that it fits the table's field widths and its arena.
func (g *cgen) buildTable() error {
	for i := range g.p.Allocs {
		a := &g.p.Allocs[i]
		if a.Arena < 0 || a.Arena >= len(g.byPlan) || g.byPlan[a.Arena] < 0 {
			return fmt.Errorf("emit: tensor %v (%s) is in arena %d, which holds no bytes", a.Ref, a.Name, a.Arena)
		}
		switch {
		case a.Ref.Subgraph < 0 || a.Ref.Subgraph > math.MaxUint16:
			return fmt.Errorf("emit: tensor %v: subgraph index does not fit the C table's 16 bits", a.Ref)
		case a.Ref.Tensor < 0 || a.Ref.Tensor > math.MaxUint16:
			return fmt.Errorf("emit: tensor %v: tensor index does not fit the C table's 16 bits", a.Ref)
		case a.Offset < 0 || a.Size < 0 || a.Offset+a.Size > g.p.Arenas[a.Arena].Size:
			return fmt.Errorf("emit: tensor %v (%s) at [%d, %d) lies outside its %d-byte arena",
				a.Ref, a.Name, a.Offset, a.Offset+a.Size, g.p.Arenas[a.Arena].Size)
		}
		g.table = append(g.table, cRow{Alloc: a, arena: g.byPlan[a.Arena]})
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
		if a.Kind == plan.ConstantArena && a.Staged {
			return true
		}
	}
	return false
}

// cwriter is a bytes.Buffer with formatted writes.
type cwriter struct{ bytes.Buffer }

func (w *cwriter) f(format string, args ...any) { fmt.Fprintf(&w.Buffer, format, args...) }
