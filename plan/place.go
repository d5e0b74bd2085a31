package plan

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan/dsa"
)

// CapacityError reports that allocations do not fit a bank and cannot
// spill to another: Need bytes were wanted where Have were left. Tensors
// names the allocations live at the step that needs the most (scratch), or
// the ones placed (constant).
type CapacityError struct {
	Bank    string
	Need    int64
	Have    int64
	Step    liveness.Step // for scratch: the step where Need is reached; -1 otherwise
	Tensors []string      // `0:12 "name" (4096 B)`, largest first, at most 8
}

func (e *CapacityError) Error() string {
	where := ""
	if e.Step >= 0 {
		where = fmt.Sprintf(" at step %d", e.Step)
	}
	msg := fmt.Sprintf("plan: bank %q: need %d bytes%s, have %d", e.Bank, e.Need, where, e.Have)
	if len(e.Tensors) > 0 {
		msg += "; largest tensors there: " + strings.Join(e.Tensors, ", ")
	}
	return msg
}

// placer assigns allocations to banks and arenas.
type placer struct {
	p        *Plan
	m        *graph.Model
	lt       *liveness.Lifetimes
	opts     Options
	writable []Bank           // by Order
	reserved map[string]int64 // bytes already taken in each bank by other arenas
	memory   []string         // per allocation: the bank it asked for, then the one it is in
	pinned   []bool           // per allocation: named by a tensor or name rule
	ruled    []bool           // per allocation: placed by a rule of any rank
	source   []string         // per constant allocation: staged from here, or ""
	names    map[string]bool  // arena names taken
	// fit, when set, decides which allocations fit a bank of limited
	// capacity instead of the selected planner (see Build).
	fit dsa.Strategy
}

func newPlacer(p *Plan, m *graph.Model, lt *liveness.Lifetimes, opts Options) *placer {
	return &placer{p: p, m: m, lt: lt, opts: opts, writable: opts.Platform.WritableBanks(),
		reserved: map[string]int64{}, names: map[string]bool{}}
}

func (pl *placer) run(ctx context.Context) error {
	if err := pl.applyRules(); err != nil {
		return err
	}
	if err := pl.placeConstants(); err != nil {
		return err
	}
	if err := pl.placePersistent(); err != nil {
		return err
	}
	return pl.placeScratch(ctx)
}

// applyRules decides where each allocation asks to go. Defaults: scratch
// and persistent allocations in the first writable bank, constants cold in
// the platform's constant bank. A rule naming a tensor (by index or name)
// beats one naming a class; among rules of equal rank the later one wins.
// A rule naming a tensor pins it: it never spills. An alias member follows
// its root. A rule that sends a tensor where its class cannot live (scratch
// or state in read-only memory, a constant in plain RAM without a source to
// stage from) is an error naming the rule and the tensor. A tensor or name
// rule that selects nothing goes to Plan.UnusedRules (an error with
// Options.Strict). A rule with Hottest takes only the hottest of the
// constants it would take (hotSets); the others go where the rules below
// it, or the default, put them.
func (pl *placer) applyRules() error {
	n := len(pl.p.Allocs)
	pl.memory, pl.pinned, pl.source, pl.ruled = make([]string, n), make([]bool, n), make([]string, n), make([]bool, n)
	cb, _ := pl.opts.Platform.ConstBank()
	matched := make([]bool, len(pl.opts.Rules))
	hot := pl.hotSets()
	for i := range pl.p.Allocs {
		a := &pl.p.Allocs[i]
		if a.Class == liveness.Constant {
			pl.memory[i] = cb.Name
		} else {
			pl.memory[i] = pl.writable[0].Name
		}
		rank, chosen := 0, -1
		for ri, r := range pl.opts.Rules {
			rk := ruleRank(r, a)
			matched[ri] = matched[ri] || rk > 0
			if r.Hottest > 0 && !hot[ri][i] {
				continue // not among the hottest: the rules below decide
			}
			if rk == 0 || rk < rank {
				continue
			}
			rank, chosen = rk, ri
			pl.memory[i], pl.source[i], pl.pinned[i], pl.ruled[i] = r.Memory, "", rk == 2, true
			if a.Class == liveness.Constant {
				pl.source[i] = r.Source
			}
		}
		if chosen >= 0 {
			if err := pl.checkRule(chosen, i); err != nil {
				return err
			}
		}
	}
	unused, err := pl.unusedRules(matched)
	if err != nil {
		return err
	}
	pl.p.UnusedRules = unused
	if err := pl.checkStagingSources(); err != nil {
		return err
	}
	for i := range pl.p.Allocs {
		if a := &pl.p.Allocs[i]; a.AliasOf != nil {
			root := pl.p.tensors[*a.AliasOf]
			pl.memory[i], pl.pinned[i], pl.ruled[i] = pl.memory[root], pl.pinned[root], pl.ruled[root]
		}
	}
	return nil
}

// checkRule checks that rule ri can hold allocation i.
func (pl *placer) checkRule(ri, i int) error {
	a := &pl.p.Allocs[i]
	r := pl.opts.Rules[ri]
	b, _ := pl.opts.Platform.Bank(r.Memory)
	cb, _ := pl.opts.Platform.ConstBank()
	switch {
	case a.Class != liveness.Constant && !b.Writable:
		return fmt.Errorf("plan: rule %d: %s tensor %v %q cannot live in read-only %s", ri, a.Class, a.Key, a.Name, r.Memory)
	case a.Class != liveness.Constant && r.Source != "":
		return fmt.Errorf("plan: rule %d: source applies to constants only, but %v %q is %s", ri, a.Key, a.Name, a.Class)
	case a.Class == liveness.Constant && b.Writable && !b.BootInit && r.Source == "":
		return fmt.Errorf("plan: rule %d: constant %v %q: %s is RAM; to place constants there, stage them: add source: %s",
			ri, a.Key, a.Name, r.Memory, cb.Name)
	case a.Class == liveness.Constant && !b.Writable && r.Source != "":
		return fmt.Errorf("plan: rule %d: constant %v %q: staging copies into RAM, but %s is read-only", ri, a.Key, a.Name, r.Memory)
	}
	return nil
}

// checkStagingSources refuses constants of one memory from two sources —
// staged from two banks, or staged into a boot_init RAM bank that also
// holds cold constants: heliaAOT's MemoryPlan keys constant arenas by the
// memory they are read from at run time, each with one source, and each
// memory gets one staged constant blob, copied in a single step.
func (pl *placer) checkStagingSources() error {
	src := map[string]string{}
	from := func(m, s string) string {
		if s == m {
			return m + " itself (cold)"
		}
		return s
	}
	for i := range pl.p.Allocs {
		if pl.p.Allocs[i].Class != liveness.Constant {
			continue
		}
		m, s := pl.memory[i], pl.source[i]
		if s == "" {
			s = m // cold: read where it lies
		}
		if prev, ok := src[m]; ok && prev != s {
			return fmt.Errorf("plan: constants in %s come from both %s and %s; a memory's constants come from one source (one constant arena per memory, as heliaAOT's MemoryPlan keys them)",
				m, from(m, prev), from(m, s))
		}
		src[m] = s
	}
	return nil
}

// ruleRank is 2 when r names tensor allocation a (by index or name), 1
// when it names a's class, else 0. Resource variables and kernel scratch
// are placed by class rules only.
func ruleRank(r Rule, a *Alloc) int {
	switch {
	case r.Tensor != "":
		if ref, err := ParseTensorRef(r.Tensor); err == nil && a.Kind == TensorAlloc && ref == a.Ref {
			return 2
		}
	case r.Name != "":
		if ok, _ := path.Match(r.Name, a.Name); ok && a.Kind == TensorAlloc {
			return 2
		}
	case r.Class != "":
		if r.Class == a.Class.String() {
			return 1
		}
	}
	return 0
}

func (pl *placer) bankAlign(name string) int64 {
	b, _ := pl.opts.Platform.Bank(name)
	return max(pl.p.Alignment, b.Alignment)
}

func (pl *placer) capacity(name string) int64 {
	b, _ := pl.opts.Platform.Bank(name)
	return b.Capacity
}

// fits reports whether n more bytes fit in bank name.
func (pl *placer) fits(name string, n int64) bool {
	c := pl.capacity(name)
	return c == 0 || pl.reserved[name]+n <= c
}

// newArena appends an empty arena of the given role in bank memory, with
// the next ID and a name of the form <role>_<memory> that no other arena
// of the plan has, and returns its index.
func (pl *placer) newArena(role liveness.Class, memory string) int {
	base := DefaultArenaName(role, memory)
	name := base
	for n := 2; pl.names[name]; n++ {
		name = fmt.Sprintf("%s_%d", base, n)
	}
	pl.names[name] = true
	ai := len(pl.p.Arenas)
	pl.p.Arenas = append(pl.p.Arenas, Arena{ID: ArenaID(ai), Name: name, Role: role, Memory: memory, Provider: Owned,
		Alignment: pl.bankAlign(memory), Capacity: pl.capacity(memory), PeakStep: -1})
	return ai
}

// placeConstants packs constants into one arena per (memory, source): cold
// arenas in read-only banks, staged arenas in RAM with their source image.
func (pl *placer) placeConstants() error {
	type key struct{ memory, source string }
	groups := map[key][]int{}
	var order []key
	for i := range pl.p.Allocs {
		if pl.p.Allocs[i].Class != liveness.Constant {
			continue
		}
		k := key{pl.memory[i], pl.source[i]}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range order {
		a := &pl.p.Arenas[pl.sequential(liveness.Constant, k.memory, groups[k], true)]
		a.Source = k.source
		if a.Staged() {
			if err := pl.reserve(k.source, a.Size, groups[k]); err != nil {
				return err
			}
		}
		if err := pl.reserve(k.memory, a.Size, groups[k]); err != nil {
			return err
		}
	}
	return nil
}

// reserve takes n bytes of bank name for an arena holding ids, or returns
// a CapacityError.
func (pl *placer) reserve(name string, n int64, ids []int) error {
	if !pl.fits(name, n) {
		return &CapacityError{Bank: name, Need: pl.reserved[name] + n, Have: pl.capacity(name), Step: -1,
			Tensors: pl.largest(ids)}
	}
	pl.reserved[name] += n
	return nil
}

// largest describes the biggest allocations among ids, at most 8.
func (pl *placer) largest(ids []int) []string {
	s := append([]int(nil), ids...)
	sort.SliceStable(s, func(i, j int) bool { return pl.p.Allocs[s[i]].Size > pl.p.Allocs[s[j]].Size })
	var out []string
	for i, id := range s {
		if i == 8 {
			break
		}
		a := &pl.p.Allocs[id]
		out = append(out, fmt.Sprintf("%v %q (%d B)", a.Key, a.Name, a.Size))
	}
	return out
}

// sequential packs ids one after another at aligned offsets in a new arena
// of bank memory and returns its index. With dedupe, constants over one
// model buffer share an offset.
func (pl *placer) sequential(role liveness.Class, memory string, ids []int, dedupe bool) int {
	ai := pl.newArena(role, memory)
	arena := &pl.p.Arenas[ai]
	seen := map[graph.BufferIndex]int64{}
	var next int64
	for _, id := range ids {
		a := &pl.p.Allocs[id]
		a.Arena = arena.ID
		if dedupe {
			buf := pl.m.Tensor(a.Ref.Subgraph, a.Ref.Tensor).Buffer
			if off, ok := seen[buf]; ok {
				a.Offset = off
				continue
			}
			seen[buf] = next
		}
		a.Offset = next
		next = alignTo(next+a.Size, arena.Alignment)
		arena.Used = max(arena.Used, a.Offset+a.Size)
	}
	arena.Size = alignTo(arena.Used, arena.Alignment)
	arena.LowerBound = next
	return ai
}

// next returns the writable bank after name in allocation order, or "".
func (pl *placer) next(name string) string {
	for i, b := range pl.writable {
		if b.Name == name && i+1 < len(pl.writable) {
			return pl.writable[i+1].Name
		}
	}
	return ""
}

func (pl *placer) spill(id int, from, to, reason string) {
	a := &pl.p.Allocs[id]
	pl.p.Spills = append(pl.p.Spills, Spill{Key: a.Key, Name: a.Name, From: from, To: to, Reason: reason})
	pl.memory[id] = to
}

// placePersistent puts is_variable tensors and resource variables in a
// persistent arena per bank, in allocation order, spilling to the next
// writable bank when one is full.
func (pl *placer) placePersistent() error {
	byBank := map[string][]int{}
	var order []string
	for i := range pl.p.Allocs {
		a := &pl.p.Allocs[i]
		if a.Class != liveness.Persistent {
			continue
		}
		bank := pl.memory[i]
		need := alignTo(a.Size, pl.bankAlign(bank))
		for !pl.fits(bank, need) {
			nb := pl.next(bank)
			if pl.pinned[i] || nb == "" {
				return &CapacityError{Bank: bank, Need: pl.reserved[bank] + need, Have: pl.capacity(bank), Step: -1}
			}
			pl.spill(i, bank, nb, fmt.Sprintf("%s full: %d persistent bytes do not fit", bank, need))
			bank = nb
			need = alignTo(a.Size, pl.bankAlign(bank))
		}
		pl.reserved[bank] += need
		if _, ok := byBank[bank]; !ok {
			order = append(order, bank)
		}
		byBank[bank] = append(byBank[bank], i)
	}
	for _, bank := range order {
		pl.sequential(liveness.Persistent, bank, byBank[bank], false)
	}
	return nil
}

// placeScratch gives each writable bank a scratch arena. Allocations start
// in the bank they ask for; while a bank cannot hold its allocations, the
// largest unpinned one live at its busiest step moves (with its alias
// group) to the next bank.
func (pl *placer) placeScratch(ctx context.Context) error {
	if pl.opts.OneScratchBank {
		if err := pl.oneScratchBank(ctx); err != nil {
			return err
		}
	} else if err := pl.scratchBanks(ctx); err != nil {
		return err
	}
	return pl.placeScratchMembers()
}

// scratchBanks places each writable bank's scratch roots in an arena of
// its own, spilling to the next bank.
func (pl *placer) scratchBanks(ctx context.Context) error {
	for _, b := range pl.writable {
		var roots []int
		for i := range pl.p.Allocs {
			a := &pl.p.Allocs[i]
			if a.Class == liveness.Scratch && a.AliasOf == nil && pl.memory[i] == b.Name {
				roots = append(roots, i)
			}
		}
		if len(roots) == 0 {
			continue
		}
		if err := pl.scratchBank(ctx, b, roots); err != nil {
			return err
		}
	}
	return nil
}

// oneScratchBank places every scratch root in one arena (Options.
// OneScratchBank): in the bank the scratch rules name, or else in the
// first writable bank that holds them all without spilling. The choice
// joins the plan's rules as a class rule.
func (pl *placer) oneScratchBank(ctx context.Context) error {
	var roots []int
	asked := map[string]bool{}
	for i := range pl.p.Allocs {
		a := &pl.p.Allocs[i]
		if a.Class != liveness.Scratch || a.AliasOf != nil {
			continue
		}
		roots = append(roots, i)
		if pl.ruled[i] {
			asked[pl.memory[i]] = true
		}
	}
	if len(roots) == 0 {
		return nil
	}
	candidates := pl.writable
	switch len(asked) {
	case 0:
	case 1:
		for name := range asked {
			b, _ := pl.opts.Platform.Bank(name)
			candidates = []Bank{b}
		}
	default:
		names := make([]string, 0, len(asked))
		for name := range asked {
			names = append(names, name)
		}
		sort.Strings(names)
		return fmt.Errorf("plan: one scratch bank: the rules put scratch tensors in %s; with one scratch bank, name one",
			strings.Join(names, " and "))
	}
	var tried []string
	var last error
	for _, b := range candidates {
		for _, id := range roots {
			pl.memory[id], pl.pinned[id] = b.Name, true // never spill
		}
		err := pl.scratchBank(ctx, b, roots)
		if err == nil {
			// Recorded as the class rule it amounts to, after the
			// config's, so plan.json says where scratch asked to go.
			pl.p.Rules = append(pl.p.Rules, Rule{Class: liveness.Scratch.String(), Memory: b.Name})
			return nil
		}
		var ce *CapacityError
		if !errors.As(err, &ce) {
			return err
		}
		tried, last = append(tried, fmt.Sprintf("%s needs %d B, has %d", b.Name, ce.Need, ce.Have)), err
	}
	return fmt.Errorf("plan: one scratch bank: no bank holds every scratch allocation (%s): %w", strings.Join(tried, "; "), last)
}

// placeScratchMembers gives alias members their roots' arena and offset,
// and places kernel scratch as TFLM would.
func (pl *placer) placeScratchMembers() error {
	for i := range pl.p.Allocs {
		if a := &pl.p.Allocs[i]; a.Class == liveness.Scratch && a.AliasOf != nil {
			ri := pl.p.tensors[*a.AliasOf]
			root := &pl.p.Allocs[ri]
			a.Arena, a.Offset = root.Arena, root.Offset+a.AliasOffset
			pl.memory[i] = pl.memory[ri]
			if align := pl.p.Arena(a.Arena).Alignment; align > 1 && a.AliasOffset%align != 0 && a.OwnPlan != nil {
				return fmt.Errorf("plan: tensor %v %q must lie %d bytes from %v, as the model's own offline plan puts it for operator %v (%s), "+
					"but arena %q aligns offsets to %d bytes; plan into a bank whose alignment divides %d",
					a.Ref, a.Name, a.AliasOffset, *a.AliasOf, a.OwnPlan.Op, a.OwnPlan.Operator, pl.p.Arena(a.Arena).Name, align, a.AliasOffset)
			} else if align > 1 && a.AliasOffset%align != 0 {
				return fmt.Errorf("plan: tensor %v %q lies %d bytes from its alias group's root %v, not a multiple of "+
					"the alignment %d of arena %q (liveness.Options.Alignment must be a multiple of plan.ScratchAlignment)",
					a.Ref, a.Name, a.AliasOffset, *a.AliasOf, align, pl.p.Arena(a.Arena).Name)
			}
		}
	}
	for i := range pl.p.Arenas {
		if pl.p.Arenas[i].Role == liveness.Scratch {
			pl.placeKernelScratchAsTFLM(&pl.p.Arenas[i])
		}
	}
	return nil
}

// extent returns the bytes allocation id's buffer covers, relative to
// the allocation's own first byte: for the root of an alias group, every
// member's bytes (liveness.Tensor.Extent); otherwise its own.
func (pl *placer) extent(id int) liveness.ByteRange {
	a := &pl.p.Allocs[id]
	if a.Kind == TensorAlloc {
		return pl.lt.Lookup(a.Ref).Extent
	}
	return liveness.ByteRange{Lo: 0, Hi: a.Size}
}

func (pl *placer) scratchBank(ctx context.Context, b Bank, roots []int) error {
	align := pl.bankAlign(b.Name)
	avail := int64(0) // 0: unlimited
	if b.Capacity > 0 {
		avail = b.Capacity - pl.reserved[b.Name]
		if avail <= 0 {
			avail = -1 // nothing left at all
		}
	}
	for {
		prob := pl.problem(roots, align)
		pinned := pl.pin(roots, prob)
		if pinned && avail != 0 {
			return fmt.Errorf("plan: scratch arena in %s: the model's own offline offsets are kept in a bank of unlimited capacity only", b.Name)
		}
		lb, peak := dsa.Peak(prob)
		var sol solution
		fits := avail == 0
		if avail > 0 && lb <= avail {
			prob.Capacity = avail
			s, err := pl.fitSolve(ctx, prob)
			if err == nil {
				sol, fits = s, true
			} else if !errors.Is(err, dsa.ErrInfeasible) {
				return fmt.Errorf("plan: scratch arena in %s: %w", b.Name, err)
			}
		}
		if avail == 0 && pinned {
			s, err := dsa.Around(prob)
			if err != nil {
				return fmt.Errorf("plan: scratch arena in %s: the model's own offline offsets: %w", b.Name, err)
			}
			sol = solution{Solution: s}
		} else if avail == 0 {
			s, err := pl.solve(ctx, prob)
			if err != nil {
				return fmt.Errorf("plan: scratch arena in %s: %w", b.Name, err)
			}
			sol = s
		}
		if fits && pl.opts.ScratchAfterTensors {
			if s, ok := pl.tensorsThenScratch(ctx, roots, prob); ok && (avail == 0 || s.Height <= avail) {
				// The bound counts the bytes in-place chains hold at each
				// step, as below.
				var bound *shapeBound
				if units, shaped, _ := pl.shapes(roots, align); shaped {
					lb, step := shapePeak(units)
					bound = &shapeBound{lb, step}
				}
				pl.scratchArena(b, roots, prob, s, bound)
				return nil
			}
		}
		if fits {
			var bound *shapeBound
			if units, shaped, rects := pl.shapes(roots, align); shaped {
				lb, step := shapePeak(units)
				bound = &shapeBound{lb, step}
				if pl.opts.Planner == PlannerBest && rects <= shapeLimit {
					if origins, h := placeShapes(units, align); h < sol.Height && (avail == 0 || h <= avail) {
						// Block starts, as the allocator gives them.
						offsets := make([]int64, len(roots))
						for i, id := range roots {
							offsets[i] = origins[i] + pl.extent(id).Lo
						}
						sol = solution{Solution: dsa.Solution{Offsets: offsets, Height: h}}
					}
				}
			}
			pl.scratchArena(b, roots, prob, sol, bound)
			return nil
		}
		victim, step := pl.victim(roots, prob, peak)
		nb := pl.next(b.Name)
		if victim < 0 || nb == "" {
			have := max(avail, 0)
			return &CapacityError{Bank: b.Name, Need: max(lb, have+1), Have: have, Step: step,
				Tensors: pl.largest(pl.liveAt(roots, prob, step))}
		}
		pl.spill(victim, b.Name, nb, fmt.Sprintf("%s full: %d scratch bytes live at step %d, %d available", b.Name, lb, step, max(avail, 0)))
		for i, r := range roots {
			if r == victim {
				roots = append(roots[:i:i], roots[i+1:]...)
				break
			}
		}
		if len(roots) == 0 {
			return nil
		}
	}
}

// tensorsThenScratch places the tensors of prob (roots' buffers) alone
// with the selected planner, then the kernel scratch around them as
// TFLM's greedy planner would (Options.ScratchAfterTensors); false when
// roots hold no kernel scratch or the placement fails.
func (pl *placer) tensorsThenScratch(ctx context.Context, roots []int, prob dsa.Problem) (solution, bool) {
	var tensors, scratch, later []int // positions in roots
	for i, id := range roots {
		if pl.p.Allocs[id].Kind == KernelScratchAlloc {
			scratch = append(scratch, i)
		} else {
			tensors = append(tensors, i)
		}
	}
	if len(scratch) == 0 {
		return solution{}, false
	}
	if pl.opts.ScratchBetweenTensors {
		// Only the tensors live with some scratch go first.
		with := tensors[:0:0]
		for _, i := range tensors {
			b := prob.Buffers[i]
			if slices.ContainsFunc(scratch, func(k int) bool { s := prob.Buffers[k]; return b.Start < s.End && s.Start < b.End }) {
				with = append(with, i)
			} else {
				later = append(later, i)
			}
		}
		tensors = with
	}
	tprob := dsa.Problem{Buffers: make([]dsa.Buffer, len(tensors))}
	for k, i := range tensors {
		tprob.Buffers[k] = prob.Buffers[i]
	}
	ts, err := pl.solve(ctx, tprob)
	if err != nil {
		return solution{}, false
	}
	full := dsa.Problem{Buffers: slices.Clone(prob.Buffers)}
	for k, i := range tensors {
		off := ts.Offsets[k]
		full.Buffers[i].Fixed = &off
	}
	if len(later) > 0 {
		// The scratch around the first tensors, then the rest around
		// both.
		first := dsa.Problem{}
		var pos []int
		for i := range full.Buffers {
			if !slices.Contains(later, i) {
				first.Buffers = append(first.Buffers, full.Buffers[i])
				pos = append(pos, i)
			}
		}
		s, err := dsa.Around(first)
		if err != nil {
			return solution{}, false
		}
		for k, i := range pos {
			off := s.Offsets[k]
			full.Buffers[i].Fixed = &off
		}
	}
	s, err := dsa.Around(full)
	if err != nil {
		return solution{}, false
	}
	return solution{Solution: s, timedOut: ts.timedOut}, true
}

// pin pins, in prob, the block of each root that Options.Offline places
// at the root's offline offset, and reports whether it pinned any.
func (pl *placer) pin(roots []int, prob dsa.Problem) bool {
	pinned := false
	for i, id := range roots {
		a := &pl.p.Allocs[id]
		if a.Kind != TensorAlloc {
			continue
		}
		if off, ok := pl.opts.Offline[a.Ref]; ok {
			start := off + pl.extent(id).Lo
			prob.Buffers[i].Fixed, pinned = &start, true
		}
	}
	return pinned
}

// solution is a placement and whether the search that made it ran out of
// time.
type solution struct {
	dsa.Solution
	timedOut bool
}

// solve runs the selected planner with the time limit as its budget: a
// planner that searches returns the best placement it has when the time is
// up; the others ignore it.
func (pl *placer) solve(ctx context.Context, prob dsa.Problem) (solution, error) {
	budget, cancel := context.WithTimeout(ctx, pl.opts.TimeLimit)
	defer cancel()
	s, err := strategies[pl.opts.Planner](budget, prob)
	timedOut := pl.opts.Planner == PlannerBest && !s.Optimal && budget.Err() != nil
	return solution{s, timedOut}, err
}

// fitSolve decides whether prob fits its capacity. With a separate fit
// strategy (see Build), that strategy decides and the selected planner then
// places the buffers that fit; the planner never does worse than Greedy, so
// its placement fits too, and if it did not, the fit strategy's is kept.
func (pl *placer) fitSolve(ctx context.Context, prob dsa.Problem) (solution, error) {
	if pl.fit == nil {
		return pl.solve(ctx, prob)
	}
	s, err := pl.fit(ctx, prob)
	if err != nil {
		return solution{Solution: s}, err
	}
	if better, err := pl.solve(ctx, prob); err == nil && better.Height <= s.Height {
		return better, nil
	}
	return solution{Solution: s}, nil
}

// problem turns scratch roots into allocator buffers. A tensor's buffer is
// its alias group's block: the bytes every member covers, once, live over
// the group's lifetime; kernel scratch is live over its operator's span.
func (pl *placer) problem(roots []int, align int64) dsa.Problem {
	prob := dsa.Problem{Buffers: make([]dsa.Buffer, len(roots))}
	for i, id := range roots {
		a := &pl.p.Allocs[id]
		live := a.Live
		if a.Kind == TensorAlloc {
			live = pl.lt.Lookup(a.Ref).Group
		}
		prob.Buffers[i] = buffer(live, pl.extent(id).Size(), align)
	}
	return prob
}

// buffer is the allocator buffer of size bytes, aligned, live over live.
// Lifetimes are inclusive [First, Last] steps, as TFLM's
// first_created/last_used; dsa buffers are half-open, so End = Last + 1.
// This is the only place the two conventions meet.
func buffer(live liveness.Interval, size, align int64) dsa.Buffer {
	return dsa.Buffer{Start: int64(live.First), End: int64(live.Last) + 1, Size: alignTo(size, align), Align: align}
}

// tensorRoots returns roots without kernel scratch.
func (pl *placer) tensorRoots(roots []int) []int {
	var out []int
	for _, id := range roots {
		if pl.p.Allocs[id].Kind != KernelScratchAlloc {
			out = append(out, id)
		}
	}
	return out
}

// lowerBound is the lower bound of placing roots in one arena, as
// scratchArena computes it: with rigid shapes where an alias group has
// them, otherwise of blocks.
func (pl *placer) lowerBound(roots []int, align int64) int64 {
	if units, shaped, _ := pl.shapes(roots, align); shaped {
		lb, _ := shapePeak(units)
		return lb
	}
	lb, _ := dsa.Peak(pl.problem(roots, align))
	return lb
}

// victim picks the largest unpinned root live at step, the problem's
// busiest (ties: the later allocation), or -1 when every one there is
// pinned.
func (pl *placer) victim(roots []int, prob dsa.Problem, step int64) (int, liveness.Step) {
	best := -1
	for i, b := range prob.Buffers {
		if b.Start > step || step >= b.End || pl.pinned[roots[i]] {
			continue
		}
		if best < 0 || b.Size >= prob.Buffers[best].Size {
			best = i
		}
	}
	if best < 0 {
		return -1, liveness.Step(step)
	}
	return roots[best], liveness.Step(step)
}

func (pl *placer) liveAt(roots []int, prob dsa.Problem, step liveness.Step) []int {
	var ids []int
	for i, b := range prob.Buffers {
		if b.Start <= int64(step) && int64(step) < b.End {
			ids = append(ids, roots[i])
		}
	}
	return ids
}

// shapeBound is the lower bound of a scratch arena whose groups are
// placed as rigid shapes (shapePeak), and a step where it is reached.
type shapeBound struct{ lb, step int64 }

// scratchArena records a solved scratch arena in bank b; bound, when set,
// is its lower bound with groups as shapes.
func (pl *placer) scratchArena(b Bank, roots []int, prob dsa.Problem, sol solution, bound *shapeBound) {
	arena := &pl.p.Arenas[pl.newArena(liveness.Scratch, b.Name)]
	arena.Optimal = sol.Optimal
	if sol.timedOut {
		arena.TimedOut = pl.opts.TimeLimit
	}
	for i, id := range roots {
		// The block starts at the offset the allocator chose; a group's
		// root lies -extent.Lo bytes into it, and its highest member
		// ends where the block does.
		a, ext := &pl.p.Allocs[id], pl.extent(id)
		a.Arena, a.Offset = arena.ID, sol.Offsets[i]-ext.Lo
		arena.Used = max(arena.Used, sol.Offsets[i]+ext.Size())
	}
	arena.Size = alignTo(arena.Used, arena.Alignment)
	lb, step := dsa.Peak(prob)
	if bound != nil {
		lb, step = bound.lb, bound.step
		arena.Optimal = arena.Used == lb
	}
	arena.LowerBound, arena.PeakStep = lb, liveness.Step(step)
	arena.TensorLowerBound = lb
	if tensors := pl.tensorRoots(roots); len(tensors) < len(roots) {
		arena.TensorLowerBound = pl.lowerBound(tensors, arena.Alignment)
	}
	for _, id := range pl.liveAt(roots, prob, liveness.Step(step)) {
		arena.Peak = append(arena.Peak, pl.p.Allocs[id].Key)
	}
	var all []dsa.Buffer
	for i := range pl.p.Allocs {
		a := &pl.p.Allocs[i]
		if a.Class != liveness.Scratch {
			continue
		}
		root := i
		if a.AliasOf != nil {
			root = pl.p.tensors[*a.AliasOf]
		}
		if pl.memory[root] == b.Name {
			all = append(all, buffer(a.Live, a.Size, arena.Alignment))
		}
	}
	arena.UnaliasedLowerBound = dsa.LowerBound(dsa.Problem{Buffers: all})
}
