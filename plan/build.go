package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan/dsa"
	"github.com/heliac/heliac/traffic"
)

// DefaultAlignment is the byte alignment of every tensor offset, as TFLM
// uses for its arena.
const DefaultAlignment = 16

// DefaultTimeLimit is the search budget of PlannerBest per scratch arena.
const DefaultTimeLimit = 3 * time.Second

// Two of the planners Options.Planner selects by name; dsa.Strategies lists
// them all.
const (
	// PlannerBest is the default: fast heuristics, then an exact search
	// that stops as soon as it proves the lower bound (dsa.Best).
	PlannerBest = "best"
	// PlannerTFLM reproduces TensorFlow Lite Micro's GreedyMemoryPlanner
	// (dsa.Greedy), for comparison.
	PlannerTFLM = "tflm"
)

// Options controls Build. The zero value plans with defaults on the
// generic platform.
type Options struct {
	Alignment int64  // a power of two up to MaxAlignment; 0 means DefaultAlignment
	Planner   string // a name or alias dsa.Lookup knows; "" means PlannerBest
	// TimeLimit is PlannerBest's search budget per scratch arena; when it
	// runs out, the best placement found so far is used (at worst
	// PlannerTFLM's) and the arena's TimedOut says so. Planners that do
	// not search ignore it. 0 means DefaultTimeLimit; negative is an error.
	TimeLimit time.Duration
	Platform  *Platform // nil means the generic platform
	Rules     []Rule    // placement rules, see Rule
	// KernelScratch are the scratch buffers kernels ask for, each planned
	// as a KernelScratchAlloc live over its operator's span.
	KernelScratch []ScratchRequest
	// ScratchSource says where KernelScratch came from, for the record
	// (Plan.ScratchSource); Build does not read it.
	ScratchSource ScratchSource
	// UnknownScratch lists the operators whose kernels' scratch the
	// caller cannot know (a custom operator its kernel library has no rule
	// for): the plan leaves it out and says so (Plan.UnknownScratch), or,
	// with Strict, fails.
	UnknownScratch []graph.OpRef
	// UnusedOverrides lists the config's kernel_scratch entries that
	// apply to no operator of the model: the plan says so
	// (Plan.UnusedOverrides), or, with Strict, fails.
	UnusedOverrides []UnusedOverride
	// TFLMKernelScratch places kernel scratch where TFLM's planner will put
	// it around the plan's tensors even when that needs a larger arena than
	// heliac's own placement (Arena.TFLMGrowth); set it when TFLM runs the
	// plan (--emit-tflite). Without it, TFLM's placement is taken only when
	// it costs nothing (see placeKernelScratchAsTFLM).
	TFLMKernelScratch bool
	// ScratchAfterTensors places each scratch arena's tensors first, as
	// if no kernel asked for scratch, then its kernel scratch around them
	// where TFLM's greedy planner would put it (dsa.Around), when that
	// fits the bank; otherwise both are placed together. A plan made for
	// several kernel libraries (kernels.Any) reserves, per operator, room
	// for every library's scratch; placed together, the tensors may lie
	// above a room only one library needs, and TFLM running the plan with
	// another library keeps them there (Plan.TFLMHead).
	ScratchAfterTensors bool
	// ScratchBetweenTensors, with ScratchAfterTensors, places first only
	// the tensors live while some kernel scratch is, then the scratch
	// around them, then the other tensors around both: the scratch lies
	// right above the tensors live with it, and the other tensors as low
	// as they fit.
	ScratchBetweenTensors bool
	// OneScratchBank plans every scratch allocation (tensors and kernel
	// scratch) into one scratch arena in one bank, as TFLM's single
	// tensor_arena needs: the first writable bank in allocation order
	// (the fastest) that holds them all, never spilling. A scratch rule
	// (class or tensor) that names a bank makes it that bank; rules naming
	// two banks are an error. The plan records the bank as a class rule
	// after Rules (Plan.Rules).
	OneScratchBank bool
	// Offline keeps scratch tensors at the offsets the model's own offline
	// plan gives them (liveness.OwnOffsets), as TFLM's planner does with a
	// model that carries one: each is pinned there and the others are
	// placed around them as TFLM places them (dsa.Around). Only with
	// PlannerTFLM, on banks of unlimited capacity; an offset that breaks
	// the arena's alignment is an error.
	Offline map[graph.TensorRef]int64
	// Strict makes a tensor or name rule that selects nothing, an
	// External glob that binds nothing, an operator in UnknownScratch and
	// an entry of UnusedOverrides an error; otherwise Plan.UnusedRules,
	// Plan.UnusedExternal, Plan.UnknownScratch and Plan.UnusedOverrides
	// list them.
	Strict bool
	// External lists the arenas the application provides: arena names as
	// plan.json gives them ("scratch_sram"), or path.Match globs ("*" for
	// every arena it can bind). Each arena matched is Bound: the C module
	// defines no storage for it, and the application binds a buffer of its
	// own at run time. Cold constant arenas hold the model's weights and stay
	// Owned. See bindExternal.
	External []string
}

func (o Options) withDefaults() (Options, error) {
	if o.Alignment == 0 {
		o.Alignment = DefaultAlignment
	}
	if why := checkAlignment(o.Alignment, false); why != "" {
		return o, fmt.Errorf("plan: %s", why)
	}
	if o.Planner == "" {
		o.Planner = PlannerBest
	}
	s, ok := dsa.Lookup(o.Planner)
	if !ok {
		return o, fmt.Errorf("plan: unknown planner %q (known: %s)", o.Planner, strings.Join(dsa.Names(), ", "))
	}
	o.Planner = s.Name // an alias becomes its canonical name, as plan.json records it
	switch {
	case o.TimeLimit < 0:
		return o, fmt.Errorf("plan: time limit %v is negative", o.TimeLimit)
	case o.TimeLimit == 0:
		o.TimeLimit = DefaultTimeLimit
	}
	if o.Platform == nil {
		g, err := BuiltinPlatform("generic")
		if err != nil {
			return o, err
		}
		o.Platform = &g
	}
	if err := o.Platform.Validate(); err != nil {
		return o, err
	}
	if err := ValidateRules(o.Rules, *o.Platform); err != nil {
		return o, err
	}
	if err := checkExternal(o.External); err != nil {
		return o, err
	}
	if len(o.Offline) > 0 && o.Planner != PlannerTFLM {
		return o, fmt.Errorf("plan: offline offsets are kept by planner %s only, not %s", PlannerTFLM, o.Planner)
	}
	return o, nil
}

// ScratchAlignment returns the alignment every scratch offset of a plan
// made with opts is a multiple of, whichever writable bank it lands in:
// the plan's alignment and every writable bank's. liveness places
// in-place outputs that do not lie exactly over their input a multiple of
// it from that input (liveness.Options.Alignment), so that the plan can
// place their alias group anywhere.
func ScratchAlignment(opts Options) (int64, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return 0, err
	}
	align := opts.Alignment
	for _, b := range opts.Platform.WritableBanks() {
		align = max(align, b.Alignment)
	}
	return align, nil
}

// strategies maps each canonical planner name in dsa's registry to its
// allocator; withDefaults has made Options.Planner canonical.
var strategies = func() map[string]dsa.Strategy {
	m := map[string]dsa.Strategy{}
	for _, s := range dsa.Strategies() {
		m[s.Name] = s.Run
	}
	return m
}()

// Build places every tensor of m that occupies bytes, bank by bank.
//
// With PlannerBest on a platform whose writable banks have capacities, the
// tensors a bank keeps depend on what the planner can pack, and packing more
// into a fast bank can leave the later banks needing more in total. So Build
// also places with TFLM's greedy planner deciding what fits each bank (Best
// then packing each bank) and keeps whichever plan needs fewer scratch bytes
// in total: the default planner is never worse than PlannerTFLM.
func Build(ctx context.Context, m *graph.Model, lt *liveness.Lifetimes, opts Options) (*Plan, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	p, err := build(ctx, m, lt, opts, nil)
	if opts.Planner != PlannerBest || !limited(opts.Platform) {
		return p, err
	}
	q, qerr := build(ctx, m, lt, opts, dsa.Greedy)
	switch {
	case err != nil && qerr != nil:
		return nil, err
	case err != nil:
		return q, nil
	case qerr != nil:
		return p, nil
	}
	qs, _ := q.ScratchTotals()
	ps, _ := p.ScratchTotals()
	if qs < ps {
		return q, nil
	}
	return p, nil
}

// limited reports whether any writable bank has a capacity.
func limited(p *Platform) bool {
	for _, b := range p.Banks {
		if b.Writable && b.Capacity > 0 {
			return true
		}
	}
	return false
}

// build makes one plan; fit, when set, decides what fits each bank.
func build(ctx context.Context, m *graph.Model, lt *liveness.Lifetimes, opts Options, fit dsa.Strategy) (*Plan, error) {
	p := &Plan{Planner: opts.Planner, Alignment: opts.Alignment, Schedule: lt.Schedule, Platform: *opts.Platform,
		Kernels: lt.Kernels, KernelsPath: lt.KernelsPath, OverwriteInputs: lt.OverwriteInputs, ScratchSource: opts.ScratchSource,
		Rules: append([]Rule(nil), opts.Rules...), tensors: map[graph.TensorRef]int{}, others: map[Key]int{},
		Allocs: make([]Alloc, 0, len(lt.Tensors)+len(lt.Variables)+len(opts.KernelScratch))}
	add := p.add
	// Persistent allocations hold their data at every step.
	always := liveness.Interval{First: 0, Last: liveness.Step(lt.Schedule.Steps - 1)}
	tr := traffic.Estimate(m, lt)
	for _, t := range lt.Tensors {
		if t.Class == liveness.Unallocated && t.Used {
			p.Skipped = append(p.Skipped, Skipped{Ref: t.Ref, Name: m.Tensor(t.Ref.Subgraph, t.Ref.Tensor).Name, Reason: t.Note})
		}
		if t.Class != liveness.Scratch && t.Class != liveness.Persistent && t.Class != liveness.Constant {
			continue
		}
		live := t.Live
		if t.Class == liveness.Persistent {
			live = always
		}
		add(Alloc{Key: TensorKey(t.Ref), Name: m.Tensor(t.Ref.Subgraph, t.Ref.Tensor).Name,
			Class: t.Class, Size: t.Size, Live: live, AliasOf: t.AliasOf, AliasOffset: t.AliasOffset, InPlace: t.InPlace, Copy: t.Copy,
			OwnPlan: t.OwnPlan, Dynamic: t.Dynamic, Traffic: tr.Tensor(t.Ref)})
	}
	for i, v := range lt.Variables {
		if v.Size > 0 {
			add(Alloc{Key: Key{Kind: VariableAlloc, Variable: v.Name}, Name: v.Name.SharedName, Class: liveness.Persistent,
				Size: v.Size, Live: always, Handles: append([]graph.TensorRef(nil), v.Handles...), Traffic: tr.Variable(i)})
		}
	}
	for _, o := range opts.UnknownScratch {
		if o.Subgraph < 0 || int(o.Subgraph) >= len(m.Subgraphs) || o.Op < 0 || int(o.Op) >= len(m.Subgraphs[o.Subgraph].Ops) {
			return nil, fmt.Errorf("plan: unknown kernel scratch: operator %v does not exist", o)
		}
		if opts.Strict {
			return nil, fmt.Errorf("plan: operator %v (%s) asks for kernel scratch its library has no rule for (rules are strict)",
				o, m.Subgraphs[o.Subgraph].Ops[o.Op].Name())
		}
		p.UnknownScratch = append(p.UnknownScratch, o)
	}
	for _, u := range opts.UnusedOverrides {
		if opts.Strict {
			return nil, fmt.Errorf("plan: %s (rules are strict)", u.Describe())
		}
		p.UnusedOverrides = append(p.UnusedOverrides, u)
	}
	// An operator's requests are numbered in the order given and listed
	// together, operators in (subgraph, operator) order.
	reqs := slices.Clone(opts.KernelScratch)
	slices.SortStableFunc(reqs, func(a, b ScratchRequest) int {
		if a.Op.Subgraph != b.Op.Subgraph {
			return int(a.Op.Subgraph - b.Op.Subgraph)
		}
		return int(a.Op.Op - b.Op.Op)
	})
	next := map[graph.OpRef]int{}
	for i, r := range reqs {
		span := lt.Schedule.Span(r.Op)
		switch {
		case span == (liveness.Interval{}):
			return nil, fmt.Errorf("plan: kernel scratch request %d: operator %v does not exist", i, r.Op)
		case r.Size <= 0:
			return nil, fmt.Errorf("plan: kernel scratch request %d: operator %v asks for %d bytes", i, r.Op, r.Size)
		}
		k := Key{Kind: KernelScratchAlloc, Op: r.Op, Index: next[r.Op]}
		next[r.Op]++
		op := &m.Subgraphs[r.Op.Subgraph].Ops[r.Op.Op]
		add(Alloc{Key: k, Name: fmt.Sprintf("%s scratch %d", op.Name(), k.Index), Class: liveness.Scratch,
			Size: r.Size, Live: span})
	}
	pl := newPlacer(p, m, lt, opts)
	pl.fit = fit
	if err := pl.run(ctx); err != nil {
		return nil, err
	}
	if err := bindExternal(p, opts.External, opts.Strict); err != nil {
		return nil, err
	}
	return p, nil
}

// alignTo rounds n up to a multiple of a (a <= 1: n itself).
func alignTo(n, a int64) int64 {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}
