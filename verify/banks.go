package verify

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Modes of a constant arena, as plan.json spells them.
const (
	modeCold   = "cold"
	modeStaged = "staged"
)

// indexBanks checks the platform's banks (names present and unique,
// capacities not negative, alignments 0 or a power of two, some bank
// writable, and constant_bank, when given, a read-only bank) and indexes
// them; a bank with a bad capacity or alignment is indexed with none, so
// that its arenas are not reported twice.
func (c *checker) indexBanks() {
	c.banks = map[string]*bank{}
	for i := range c.doc.platform.banks {
		b := &c.doc.platform.banks[i]
		switch {
		case b.name == "":
			c.r.add(Malformed, "%s: name is empty", b.path)
			continue
		case c.banks[b.name] != nil:
			c.r.add(Malformed, "%s: bank %q is already %s", b.path, b.name, c.banks[b.name].path)
			continue
		}
		if b.capacity < 0 {
			c.r.add(Malformed, "%s: bank %q has capacity %d", b.path, b.name, b.capacity)
			b.capacity = 0
		}
		if b.alignment < 0 || b.alignment&(b.alignment-1) != 0 {
			c.r.add(Malformed, "%s: bank %q has alignment %d, not 0 or a power of two", b.path, b.name, b.alignment)
			b.alignment = 0
		}
		c.banks[b.name] = b
		if b.writable {
			c.writable = append(c.writable, b)
		}
	}
	// Allocation order: by order, ties in the order of banks.
	slices.SortStableFunc(c.writable, func(a, b *bank) int {
		switch {
		case a.order < b.order:
			return -1
		case a.order > b.order:
			return 1
		}
		return 0
	})
	if len(c.writable) == 0 {
		c.r.add(Malformed, "platform %q has no writable bank", c.doc.platform.name)
	}
	if cb := c.doc.platform.constBank; cb != nil {
		if b := c.banks[*cb]; b == nil || b.writable {
			c.r.add(Malformed, "platform.constant_bank: %q is not a read-only bank of the platform", *cb)
		}
	}
}

// constBank returns the bank cold constants go to by default:
// constant_bank when plan.json gives it, otherwise the first read-only
// bank; "" when there is none.
func (c *checker) constBank() string {
	if cb := c.doc.platform.constBank; cb != nil {
		return *cb
	}
	for _, b := range c.doc.platform.banks {
		if !b.writable {
			return b.name
		}
	}
	return ""
}

// writableRank returns the place of a writable bank in allocation order,
// or -1 when name is not a writable bank.
func (c *checker) writableRank(name string) int {
	for i, b := range c.writable {
		if b.name == name {
			return i
		}
	}
	return -1
}

// knownBank reports a memory that names no bank of the platform.
func (c *checker) knownBank(path, what, name string) bool {
	if c.banks[name] != nil {
		return true
	}
	c.r.add(Malformed, "%s: %s %q is not a bank of platform %q (banks: %s)", path, what, name, c.doc.platform.name, c.bankNames())
	return false
}

func (c *checker) bankNames() string {
	var names []string
	for _, b := range c.doc.platform.banks {
		names = append(names, b.name)
	}
	return strings.Join(names, ", ")
}

// alignOf returns the alignment of every offset in an arena of memory:
// the plan's alignment and the bank's, when it sets one, together.
func (c *checker) alignOf(memory string) int64 {
	a := c.align
	if b := c.banks[memory]; b != nil && b.alignment > 0 {
		a = lcm(a, b.alignment)
	}
	return a
}

// lcm returns the least common multiple of two positive numbers, or the
// largest int64 when it overflows.
func lcm(a, b int64) int64 {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	q := a / x
	if q > math.MaxInt64/b {
		return math.MaxInt64
	}
	return q * b
}

// checkBanks checks every arena against the platform: its memory (and a
// staged arena's source) is a bank (Malformed); scratch and persistent
// arenas and staged copies are in writable banks, cold constants and the
// sources of staged ones in read-only banks (WrongClass; a bank with
// boot_init may hold cold constants); and the arenas of each bank with a
// capacity fit it together (OverCapacity). Every allocation's memory must
// name a bank as well.
func (c *checker) checkBanks() {
	taken := map[string]int64{}
	parts := map[string][]string{}
	take := func(memory, what string, n int64) {
		taken[memory] = addSat(taken[memory], n)
		parts[memory] = append(parts[memory], fmt.Sprintf("%s %d", what, n))
	}
	for _, a := range c.arenaList() {
		if !c.knownBank(a.path, "memory", a.memory) {
			continue
		}
		b := c.banks[a.memory]
		what := a.role
		switch a.role {
		case roleScratch, rolePersistent:
			if !b.writable {
				c.r.add(WrongClass, "%s: %s arena in read-only bank %q", a.path, a.role, a.memory)
			}
		case roleConstant:
			what = modeCold + " constant"
			if a.staged() {
				what = modeStaged + " constant"
			}
			c.checkConstantBanks(a, b)
			if a.staged() && c.banks[*a.source] != nil {
				take(*a.source, "staged constant source", a.size)
			}
		}
		take(a.memory, what, a.size)
	}
	for i := range c.doc.platform.banks {
		b := &c.doc.platform.banks[i]
		if c.banks[b.name] != b || b.capacity == 0 || taken[b.name] <= b.capacity {
			continue
		}
		c.r.add(OverCapacity, "bank %q: its arenas take %d bytes (%s), but its capacity is %d",
			b.name, taken[b.name], strings.Join(parts[b.name], " + "), b.capacity)
	}
	for _, p := range c.members {
		c.knownBank(p.path, "memory", p.memory)
		if p.source != nil {
			c.knownBank(p.path, "source_memory", *p.source)
		}
	}
}

// checkConstantBanks checks where a constant arena and its source lie.
func (c *checker) checkConstantBanks(a *arenaRec, b *bank) {
	if !a.staged() {
		if b.writable && !b.bootInit {
			c.r.add(WrongClass, "%s: cold constant arena in writable bank %q, which nothing fills at start-up; stage it from a read-only bank", a.path, a.memory)
		}
		return
	}
	if !b.writable {
		c.r.add(WrongClass, "%s: staged constant arena copied into read-only bank %q", a.path, a.memory)
	}
	if !c.knownBank(a.path, "source_memory", *a.source) {
		return
	}
	if c.banks[*a.source].writable {
		c.r.add(WrongClass, "%s: staged constant arena copied from writable bank %q; the source must be read-only", a.path, *a.source)
	}
}

// checkUsage checks a scratch arena's capacity and fragmentation.
func (c *checker) checkUsage(u *usage, a *arenaRec) {
	if b := c.banks[a.memory]; b != nil && u.capacity != b.capacity {
		c.r.add(Malformed, "%s: capacity %d, but bank %q has capacity %d", u.path, u.capacity, b.name, b.capacity)
	}
	var want float64
	if a.size > 0 {
		want = math.Round(10000*float64(a.size-u.lowerBound)/float64(a.size)) / 10000
	}
	if math.Abs(u.frag-want) > 0.00005 {
		c.r.add(HeightMismatch, "%s: fragmentation %v, but (size - lower_bound) / size is %v", u.path, u.frag, want)
	}
}
