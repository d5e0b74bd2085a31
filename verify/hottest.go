package verify

import (
	"cmp"
	"math"
	"math/bits"

	"github.com/heliac/heliac/graph"
)

// takes reports whether the plan places constant p as rule r says: in its
// memory, staged from its source (cold when it gives none).
func (r *rule) takes(p *member) bool {
	return p.role == roleConstant && p.memory == r.memory && p.stagedFrom() == r.source
}

// constantReads returns, for every constant the schedule's runs read, the
// bytes read per inference: each run of an operator reads each of its
// input operands once, or as often as readBytes says, runs inside a
// CALL_ONCE's subgraph not at all (they run on the first inference only),
// as docs/plan-format.md's bank_traffic counts them.
func (c *checker) constantReads() map[graph.TensorRef]int64 {
	reads := map[graph.TensorRef]int64{}
	type caller struct {
		end  int64
		once bool
	}
	var callers []caller
	once := 0
	for _, run := range c.doc.schedule {
		for len(callers) > 0 && callers[len(callers)-1].end < run.start {
			if callers[len(callers)-1].once {
				once--
			}
			callers = callers[:len(callers)-1]
		}
		op := &c.m.Subgraphs[run.op.Subgraph].Ops[run.op.Op]
		if len(op.Called) > 0 {
			callers = append(callers, caller{end: run.end, once: op.Code == graph.CallOnce})
			if op.Code == graph.CallOnce {
				once++
			}
		}
		if once > 0 {
			continue
		}
		for k, id := range op.Inputs {
			ref := graph.TensorRef{Subgraph: run.op.Subgraph, Tensor: id}
			if p := c.placed[ref]; id != graph.NoTensor && p != nil && p.role == roleConstant {
				r := readBytes(&c.m.Subgraphs[run.op.Subgraph], op, k, p.size)
				reads[ref] = min(reads[ref], math.MaxInt64-r) + r
			}
		}
	}
	return reads
}

// checkHottest checks each constant rule with hottest, on the constants
// whose rule it is (the one the precedence of rules picks, hottest aside):
// those it takes (placed as it says) must all be read per inference and
// fit its budget, their bytes counted as its arena holds them (one copy
// per model buffer, each rounded up to the bank's alignment); one left out
// and read per inference must not fit beside them; and none left out may
// be hotter (more bytes read per inference per byte) than one taken while
// it would fit in that one's place. Constants over one buffer go
// together.
func (c *checker) checkHottest() {
	if !c.rulesOK {
		return
	}
	var reads map[graph.TensorRef]int64
	for ri := range c.doc.rules {
		r := &c.doc.rules[ri]
		if r.hottest <= 0 {
			continue
		}
		if reads == nil {
			reads = c.constantReads()
		}
		align := c.align
		if b := c.banks[r.memory]; b != nil && b.alignment > align {
			align = b.alignment
		}
		type group struct {
			first       *member
			read, size  int64
			taken, left bool
		}
		var groups []*group
		byBuffer := map[graph.BufferIndex]*group{}
		for _, p := range c.members {
			if p.key.kind != tensorKey || p.role != roleConstant || !c.ruleChecked(p) || c.winner(p) != ri {
				continue
			}
			g := byBuffer[p.t.Buffer]
			if g == nil {
				g = &group{first: p, size: (p.size + align - 1) / align * align}
				byBuffer[p.t.Buffer] = g
				groups = append(groups, g)
			}
			g.read += reads[p.key.ref]
			if r.takes(p) {
				g.taken = true
			} else {
				g.left = true
			}
		}
		var total int64
		for _, g := range groups {
			switch {
			case g.taken && g.left:
				c.r.add(RuleViolated, "%s: %s and the other constants over its buffer are split: some taken as the hottest, some not", r.path, g.first.what)
			case g.taken && g.read == 0:
				c.r.add(RuleViolated, "%s: %s is taken as one of the hottest constants, but no operator reads it per inference", r.path, g.first.what)
			}
			if g.taken {
				total += g.size
			}
		}
		if total > r.hottest {
			c.r.add(RuleViolated, "%s: the constants it takes as the hottest hold %d bytes, over its budget of %d", r.path, total, r.hottest)
			continue
		}
		for _, u := range groups {
			if u.taken || u.read == 0 {
				continue
			}
			if total+u.size <= r.hottest {
				c.r.add(RuleViolated, "%s: %s (%d bytes, %d read per inference) is left out of the hottest constants, but fits in the budget beside them (%d of %d bytes)",
					r.path, u.first.what, u.size, u.read, total, r.hottest)
				continue
			}
			for _, t := range groups {
				if t.taken && cmpDensity(u.read, u.size, t.read, t.size) > 0 && total-t.size+u.size <= r.hottest {
					c.r.add(RuleViolated, "%s: %s (%d bytes, %d read per inference) is left out of the hottest constants, but is hotter than %s (%d bytes, %d read), whose place it fits in",
						r.path, u.first.what, u.size, u.read, t.first.what, t.size, t.read)
					break
				}
			}
		}
	}
}

// winner returns the index of the rule whose place p takes by precedence
// alone (a tensor or name rule over a class rule, the later among equals),
// hottest aside; -1 for none.
func (c *checker) winner(p *member) int {
	best, chosen := 0, -1
	for i := range c.doc.rules {
		if rk := rank(&c.doc.rules[i], p); rk > 0 && rk >= best {
			best, chosen = rk, i
		}
	}
	return chosen
}

// cmpDensity compares t/n with u/m (n, m > 0; t, u >= 0) exactly.
func cmpDensity(t, n, u, m int64) int {
	hi1, lo1 := bits.Mul64(uint64(t), uint64(m))
	hi2, lo2 := bits.Mul64(uint64(u), uint64(n))
	if x := cmp.Compare(hi1, hi2); x != 0 {
		return x
	}
	return cmp.Compare(lo1, lo2)
}
