package verify

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Providers of an arena's bytes, as plan.json spells them.
var providers = []string{"owned", "bound", "shared"}

// indexArenas maps each arena id to its arenas entry. A second entry with
// an id, or with a name, is Malformed: ids and names identify arenas.
func (c *checker) indexArenas() {
	c.arenas = map[int64]*arenaRec{}
	names := map[string]*arenaRec{}
	for i := range c.doc.arenas {
		a := &c.doc.arenas[i]
		if first := c.arenas[a.id]; first != nil {
			c.r.add(Malformed, "%s: id %d is already %s's; two arenas cannot share an id", a.path, a.id, first.path)
			continue
		}
		c.arenas[a.id] = a
		if first := names[a.name]; first != nil {
			c.r.add(Malformed, "%s: name %q is already %s's", a.path, a.name, first.path)
		}
		names[a.name] = a
	}
}

// arenaList returns the arenas entries that index kept, in file order.
func (c *checker) arenaList() []*arenaRec {
	var out []*arenaRec
	for i := range c.doc.arenas {
		if a := &c.doc.arenas[i]; c.arenas[a.id] == a {
			out = append(out, a)
		}
	}
	return out
}

// checkArenas checks every arena on its own and against its heliaAOT view
// (arena_usages, persistent_arenas or constant_arenas), puts each
// allocation in the arena its binding names, and checks each arena's
// allocations. An allocation's binding names an arena of its role and
// memory, with its source_memory, and that arena has the one entry of its
// map under that memory: so heliaAOT's maps, keyed by memory, find every
// tensor's arena from its binding's role and memory (partition by role).
func (c *checker) checkArenas() {
	for _, a := range c.arenaList() {
		c.checkArenaEntry(a)
	}
	views := c.checkViews()
	members := map[*arenaRec][]*member{}
	for _, p := range c.members {
		if !knownRole(p.role) {
			continue // reported with the allocation
		}
		a := c.arenas[p.arena]
		switch {
		case a == nil:
			c.r.add(Malformed, "%s: %s is in arena %d, which arenas does not list", p.path, p.what, p.arena)
			continue
		case a.role != p.role:
			c.r.add(Malformed, "%s: %s is a %s allocation in %s arena %q", p.path, p.what, p.role, a.role, a.name)
			continue
		case a.memory != p.memory:
			c.r.add(Malformed, "%s: %s names memory %q, but arena %q is in %q", p.path, p.what, p.memory, a.name, a.memory)
			continue
		}
		// Single source: a constant has its arena's source_memory. (A
		// scratch or persistent binding's is null: checkTensors and
		// checkKernelScratch say so.)
		if p.role == roleConstant && strOrNull(p.source) != strOrNull(a.source) {
			c.r.add(Malformed, "%s: binding.source_memory is %s, but arena %q has %s", p.path, strOrNull(p.source), a.name, strOrNull(a.source))
		}
		members[a] = append(members[a], p)
	}
	for _, a := range c.arenaList() {
		if knownRole(a.role) {
			c.checkArena(a, members[a], views[a])
		}
	}
}

// checkArenaEntry checks one arenas entry on its own.
func (c *checker) checkArenaEntry(a *arenaRec) {
	if !knownRole(a.role) {
		c.r.add(Malformed, "%s.role: unknown role %q", a.path, a.role)
	}
	if !validName(a.name) {
		c.r.add(Malformed, "%s.name: %q is not a C identifier part (lower-case letters and digits, joined by single '_')", a.path, a.name)
	}
	if !slices.Contains(providers, a.provider) {
		c.r.add(Malformed, "%s.provider: %q is not one of %s", a.path, a.provider, strings.Join(providers, ", "))
	}
	switch {
	case a.provider == "shared" && a.role != roleScratch:
		c.r.add(Malformed, "%s: a %s arena is shared; only scratch arenas can be one buffer with other models'", a.path, a.role)
	case a.provider == "shared" && a.sharedSize < a.size:
		c.r.add(HeightMismatch, "%s: shared_size %d is less than the arena's size %d", a.path, a.sharedSize, a.size)
	case a.provider != "shared" && a.sharedSize != 0:
		c.r.add(Malformed, "%s: shared_size %d on a %s arena; only shared arenas have one", a.path, a.sharedSize, a.provider)
	}
	switch {
	case a.source != nil && a.role != roleConstant:
		c.r.add(Malformed, "%s: a %s arena has source_memory %q; only constant arenas have one", a.path, a.role, *a.source)
	case a.source == nil && a.role == roleConstant:
		c.r.add(Malformed, "%s: a constant arena has source_memory null; want its memory %q when cold, the bank it is copied from when staged",
			a.path, a.memory)
	}
	if a.size < 0 || a.used < 0 {
		c.r.add(Malformed, "%s: size %d and used %d must not be negative", a.path, a.size, a.used)
	}
	if want := c.alignOf(a.memory); a.alignment != want {
		c.r.add(Malformed, "%s: alignment %d, but the plan's and bank %q's alignments make %d", a.path, a.alignment, a.memory, want)
	} else if a.size%want != 0 {
		c.r.add(HeightMismatch, "%s: size %d is not a multiple of the alignment %d", a.path, a.size, want)
	}
}

// validName reports whether name can follow a C prefix and '_' as it is:
// lower-case letters and digits, joined by single underscores.
func validName(name string) bool {
	if name == "" || name[0] == '_' || name[len(name)-1] == '_' || strings.Contains(name, "__") {
		return false
	}
	for i := 0; i < len(name); i++ {
		if ch := name[i]; !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '_') {
			return false
		}
	}
	return true
}

// arenaMaps are heliaAOT's maps of arenas, by role.
var arenaMaps = map[string]string{roleScratch: "arena_usages", rolePersistent: "persistent_arenas", roleConstant: "constant_arenas"}

// checkViews checks the heliaAOT maps of arenas, keyed by memory: every
// entry's memory is its key, it names an arena of its map's role in that
// memory by id, and repeats its size and used; the keys of arena_usages
// and persistent_arenas are writable banks; every arena has its entry, so
// one role has at most one arena in a memory. It returns the entry of
// each arena.
func (c *checker) checkViews() map[*arenaRec]*usage {
	type roleMemory struct{ role, memory string }
	first := map[roleMemory]*arenaRec{}
	second := map[*arenaRec]bool{} // reported: not again for a missing entry
	for _, a := range c.arenaList() {
		k := roleMemory{a.role, a.memory}
		if f := first[k]; f != nil && knownRole(a.role) {
			c.r.add(Malformed, "%s: a second %s arena in %q (the first is %s); %s keys arenas by memory, one per memory",
				a.path, a.role, a.memory, f.path, arenaMaps[a.role])
			second[a] = true
			continue
		}
		first[k] = a
	}
	views := map[*arenaRec]*usage{}
	for _, list := range []struct {
		role string
		us   []usage
	}{{roleScratch, c.doc.scratch}, {rolePersistent, c.doc.persistent}, {roleConstant, c.doc.constant}} {
		for i := range list.us {
			u := &list.us[i]
			if u.memory != u.key {
				c.r.add(Malformed, "%s.memory: %q, but the entry is under %q; want its key", u.path, u.memory, u.key)
				continue
			}
			if b := c.banks[u.key]; b != nil && !b.writable && list.role != roleConstant {
				c.r.add(Malformed, "%s: %q is a read-only bank; %s holds arenas of writable banks", u.path, u.key, arenaMaps[list.role])
			}
			a := c.arenas[u.arena]
			switch {
			case a == nil:
				c.r.add(Malformed, "%s.arena: arena %d is not in arenas", u.path, u.arena)
				continue
			case a.role != list.role:
				c.r.add(Malformed, "%s: arena %d (%s) is a %s arena, not %s", u.path, u.arena, a.name, a.role, list.role)
				continue
			case a.memory != u.key:
				c.r.add(Malformed, "%s: arena %d (%s) is in %q; want its entry under that memory", u.path, u.arena, a.name, a.memory)
				continue
			case views[a] != nil:
				c.r.add(Malformed, "%s: arena %d (%s) is already %s", u.path, u.arena, a.name, views[a].path)
				continue
			}
			views[a] = u
			if u.total != a.size || u.used != a.used {
				c.r.add(Malformed, "%s: total_size %d and used %d, but arena %q has %d and %d",
					u.path, u.total, u.used, a.name, a.size, a.used)
			}
		}
	}
	for _, a := range c.arenaList() {
		if views[a] == nil && !second[a] && knownRole(a.role) {
			c.r.add(Malformed, "%s: %s arena %q has no entry %s[%q]", a.path, a.role, a.name, arenaMaps[a.role], a.memory)
		}
	}
	return views
}

// checkArena checks the allocations of one arena: bounds, alignment, every
// pair for overlap, and the arena's recorded sizes; with view, its
// heliaAOT entry's figures.
func (c *checker) checkArena(a *arenaRec, ps []*member, view *usage) {
	desc := fmt.Sprintf("%s arena %q", a.role, a.name)
	var top int64
	for _, p := range ps {
		top = max(top, c.checkRange(a, desc, p.what, p.offset, p.size))
	}
	for _, pq := range c.overlapPairs(a.role, ps) {
		c.checkPair(desc, a.role, ps[pq[0]], ps[pq[1]])
	}
	if a.used != top {
		c.r.add(HeightMismatch, "%s: used is %d, but its highest allocation ends at %d", desc, a.used, top)
	}
	if a.size < a.used {
		c.r.add(HeightMismatch, "%s: size %d is less than used %d", desc, a.size, a.used)
	}
	if view == nil {
		return
	}
	switch a.role {
	case roleScratch:
		c.checkUsage(view, a)
		c.checkPeak(view, a, desc, ps)
	case roleConstant:
		c.checkStaging(view, a)
	}
}

// checkRange reports bytes [offset, offset+size) of what that lie outside
// the arena or start off the alignment, and returns where they end.
func (c *checker) checkRange(a *arenaRec, desc, what string, offset, size int64) int64 {
	end := addSat(offset, size)
	if offset < 0 || end > a.size {
		c.r.add(OutOfBounds, "%s at [%d, %d) lies outside [0, %d) of %s", what, offset, end, a.size, desc)
	}
	if align := c.alignOf(a.memory); offset%align != 0 {
		c.r.add(Misaligned, "%s at offset %d in %s is not a multiple of %d", what, offset, desc, align)
	}
	return end
}

// checkPair reports two allocations of one arena that share a byte while
// both hold data: in a scratch arena, two whose lifetimes share a step,
// unless they are members of one alias group that hold one value or of
// which one was written in place over the other at the only step they
// share (related); in a persistent arena, any two; in a constant arena,
// any two but tensors of one model buffer at one offset.
func (c *checker) checkPair(desc, role string, p, q *member) {
	pEnd, qEnd := addSat(p.offset, p.size), addSat(q.offset, q.size)
	lo, hi := max(p.offset, q.offset), min(pEnd, qEnd)
	if lo >= hi {
		return
	}
	when := ""
	switch role {
	case roleScratch:
		if p.live == nil || q.live == nil || p.live.start > q.live.end || q.live.start > p.live.end {
			return
		}
		first, last := max(p.live.start, q.live.start), min(p.live.end, q.live.end)
		if p.group == q.group && c.related(p, q, first, last) {
			return
		}
		when = fmt.Sprintf(", both live at steps %d..%d", first, last)
		if p.group == q.group {
			when += ", members of one alias group that no view or in-place write relates there"
		}
	case roleConstant:
		if p.t != nil && q.t != nil && p.t.Buffer == q.t.Buffer && p.offset == q.offset {
			return
		}
	}
	c.r.add(Overlap, "%s at [%d, %d) and %s at [%d, %d) share bytes [%d, %d) of %s%s",
		p.what, p.offset, pEnd, q.what, q.offset, qEnd, lo, hi, desc, when)
}

// buffer is one alias group of a scratch arena. Its members keep fixed
// offsets from one another; at each step it holds the bytes from the
// lowest to the highest byte of its members live there.
type buffer struct {
	root    key
	align   int64
	members []*member
	at      []int64 // each member's first byte relative to the group
}

// widthAt returns the bytes the group holds at step, rounded up to the
// alignment: 0 when no member is live.
func (b *buffer) widthAt(step int64) int64 {
	lo, hi, live := int64(0), int64(0), false
	for i, p := range b.members {
		if p.live == nil || step < p.live.start || p.live.end < step {
			continue
		}
		if !live || b.at[i] < lo {
			lo = b.at[i]
		}
		if end := addSat(b.at[i], p.size); !live || end > hi {
			hi = end
		}
		live = true
	}
	if !live {
		return 0
	}
	return addSat(hi-lo, b.align-1) / b.align * b.align
}

// span returns the bytes from the group's lowest member byte to its
// highest, rounded up to the alignment: a rigid group needs them all.
func (b *buffer) span() int64 {
	if len(b.members) == 0 {
		return 0
	}
	lo, hi := b.at[0], addSat(b.at[0], b.members[0].size)
	for i, p := range b.members {
		lo, hi = min(lo, b.at[i]), max(hi, addSat(b.at[i], p.size))
	}
	return addSat(hi-lo, b.align-1) / b.align * b.align
}

// peakOf returns the largest sum over the timeline's steps of the groups'
// widths. A group's width changes only where one of its members' lifetimes
// starts or ends, so each group adds its width between those points to a
// difference array (widths): time linear in the steps plus, per group, its
// members times the log of their number (lifetimes are on the timeline:
// checkTensors and kernel scratch drop the others).
func (c *checker) peakOf(bufs []*buffer, steps int64) int64 {
	diff := make([]int64, steps+1)
	for _, b := range bufs {
		var pts []int64
		for _, p := range b.members {
			if p.live != nil && 0 <= p.live.start && p.live.start <= p.live.end && p.live.end < steps {
				pts = append(pts, p.live.start, p.live.end+1)
			}
		}
		slices.Sort(pts)
		pts = slices.Compact(pts)
		ws := b.widths(pts, &c.work)
		for i := 0; i+1 < len(pts); i++ {
			diff[pts[i]] = addSat(diff[pts[i]], ws[i])
			diff[pts[i+1]] -= ws[i]
		}
	}
	var peak, sum int64
	for _, d := range diff {
		sum = addSat(sum, d)
		peak = max(peak, sum)
	}
	return peak
}

// widths returns widthAt of each of the ascending steps pts, sweeping over
// them with the members live so far in two heaps, of their lowest and of
// their highest bytes, that drop a member once it has ended.
func (b *buffer) widths(pts []int64, work *int64) []int64 {
	var order []int // members with a lifetime, by its start
	for i, p := range b.members {
		if p.live != nil && p.live.start <= p.live.end {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(b.members[x].live.start, b.members[y].live.start) })
	high := func(i int) int64 { return addSat(b.at[i], b.members[i].size) }
	lows := &intHeap{less: func(x, y int) bool { return b.at[x] < b.at[y] }}
	highs := &intHeap{less: func(x, y int) bool { return high(x) > high(y) }}
	out := make([]int64, len(pts))
	next := 0
	for n, step := range pts {
		for ; next < len(order) && b.members[order[next]].live.start <= step; next++ {
			*work++
			lows.push(order[next])
			highs.push(order[next])
		}
		for _, h := range []*intHeap{lows, highs} {
			for h.len() > 0 && b.members[h.top()].live.end < step {
				*work++
				h.pop()
			}
		}
		if lows.len() == 0 {
			continue
		}
		lo, hi := b.at[lows.top()], high(highs.top())
		out[n] = addSat(hi-lo, b.align-1) / b.align * b.align
	}
	return out
}

// liveSum returns the bytes the groups hold at step, and the roots of
// those that hold any.
func liveSum(bufs []*buffer, step int64) (int64, []key) {
	var sum int64
	var roots []key
	for _, b := range bufs {
		if w := b.widthAt(step); w > 0 || b.liveAt(step) {
			sum = addSat(sum, w)
			roots = append(roots, b.root)
		}
	}
	return sum, roots
}

func (b *buffer) liveAt(step int64) bool {
	for _, p := range b.members {
		if p.live != nil && p.live.start <= step && step <= p.live.end {
			return true
		}
	}
	return false
}

// checkPeak recomputes a scratch arena's lower bounds, rounded up to the
// arena's alignment (the plan's and its bank's): lower_bound is the
// largest sum over steps of what each alias group holds there, the bytes
// from the lowest to the highest byte of its members live at that step
// (each where its root's offset and its alias_offset put it; badAlias
// checks it is there), or the widest group's span, lowest member byte to
// highest, if larger (a group is rigid); lower_bound_without_aliases gives
// every allocation a buffer of its own. It checks both bounds, peak_step
// (whose live groups take the sum's peak) and peak_tensors, which must
// name the root of every group live at peak_step.
func (c *checker) checkPeak(u *usage, a *arenaRec, desc string, ps []*member) {
	align := c.alignOf(a.memory)
	var alone, grouped []*buffer
	byRoot := map[key]*buffer{}
	for _, p := range ps {
		alone = append(alone, &buffer{root: p.key, align: align, members: []*member{p}, at: []int64{0}})
		b := byRoot[p.group]
		if b == nil {
			b = &buffer{root: p.group, align: align}
			byRoot[p.group] = b
			grouped = append(grouped, b)
		}
		b.members = append(b.members, p)
		b.at = append(b.at, c.groupOffset(p))
	}
	peak := c.peakOf(grouped, c.tl.steps)
	bound := peak
	for _, b := range grouped {
		bound = max(bound, b.span())
	}
	if u.lowerBound != bound {
		c.r.add(HeightMismatch, "%s: lower_bound is %d, but its buffers' peak is %d", desc, u.lowerBound, bound)
	}
	if bound := c.peakOf(alone, c.tl.steps); u.noAliases != bound {
		c.r.add(HeightMismatch, "%s: lower_bound_without_aliases is %d, but its allocations' peak is %d", desc, u.noAliases, bound)
	}
	if u.peakStep < 0 || u.peakStep >= c.tl.steps {
		c.r.add(Malformed, "%s.peak_step: %d is not a step of the timeline 0..%d", u.path, u.peakStep, c.tl.steps-1)
		return
	}
	sum, live := liveSum(grouped, u.peakStep)
	switch {
	case bound == peak && sum != u.lowerBound:
		c.r.add(HeightMismatch, "%s: buffers live at peak_step %d take %d bytes, not lower_bound %d", desc, u.peakStep, sum, u.lowerBound)
	case bound > peak && sum != peak:
		c.r.add(HeightMismatch, "%s: buffers live at peak_step %d take %d bytes, not their peak %d", desc, u.peakStep, sum, peak)
	}
	if !sameKeys(live, u.peakTensors) {
		c.r.add(HeightMismatch, "%s: peak_tensors are %s, but the buffers live at peak_step %d are %s",
			desc, keyList(u.peakTensors), u.peakStep, keyList(live))
	}
}

func sameKeys(a, b []key) bool {
	count := map[key]int{}
	for _, k := range a {
		count[k]++
	}
	for _, k := range b {
		count[k]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return len(a) == len(b)
}

func keyList(ks []key) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = k.String()
	}
	return "[" + strings.Join(s, " ") + "]"
}

// checkStaging checks a constant arena's source and mode against its
// arenas entry: its source_memory is the arena's (single source); its mode
// is cold, read where it lies, exactly when that source is its memory, and
// staged, copied from the source before the first run, otherwise.
func (c *checker) checkStaging(u *usage, a *arenaRec) {
	if a.source != nil && u.source != *a.source {
		c.r.add(Malformed, "%s: source_memory %q, but arena %q has %q", u.path, u.source, a.name, *a.source)
	}
	want := modeStaged
	if u.source == u.memory {
		want = modeCold
	}
	switch {
	case u.mode != modeCold && u.mode != modeStaged:
		c.r.add(Malformed, "%s.mode: %q, want \"cold\" or \"staged\"", u.path, u.mode)
	case u.mode != want:
		c.r.add(Malformed, "%s: mode %q with source_memory %q in %q; want %q (cold exactly when the source is the memory)",
			u.path, u.mode, u.source, u.memory, want)
	}
}

func strOrNull(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}
