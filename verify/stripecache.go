package verify

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// A region whose record says halo "cache" is rebuilt as docs/stripes.md,
// "Halo rows: recomputed or cached", describes it: a stripe computes only
// the rows of each tensor that the stripe before it did not, and takes
// the others (the cache) from that stripe's tensor: a STRIDED_SLICE of
// its last rows, made as soon as it is complete, then a CONCATENATION of
// the cache and the new rows. This is the verifier's own reading of the
// page, as stripeOps is for recompute; nothing is shared with package
// stripe.

// cachedStripe is one stripe's rows of a region with cached halos.
type cachedStripe struct {
	// need is need_j: the rows the stripe's tensor of each tensor holds
	// (X: all of it).
	need map[graph.TensorID]rowRange
	// fresh is new_j: the rows of each operator's output its copy
	// computes (Y: the stripe's rows).
	fresh map[graph.TensorID]rowRange
	// reads is what each copy reads of its inputs, from fresh.
	reads map[graph.OpIndex][]operand
}

// cacheRows returns the rows of a tensor that stripe j takes from stripe
// j-1 (cache_j): [need_j.lo, need_{j-1}.hi), empty when the first is not
// below the second.
func cacheRows(prev, cur rowRange) rowRange { return rowRange{cur.lo, prev.hi} }

func (a rowRange) empty() bool { return a.hi <= a.lo }

// cachedRows works out, stripe by stripe, the rows every tensor of a
// region with cached halos needs and each copy computes; nil after
// reporting a stripe that would compute no row of an intermediate tensor,
// one whose cache would need rows the stripe before no longer holds, one
// that reads no row of a tensor, or one that mirrors more rows than its
// slice holds.
func (b *rebuilder) cachedRows(rg *region) []cachedStripe {
	rec := rg.rec
	s := rec.subgraph
	orig := rg.sg
	out := make([]cachedStripe, len(rec.rows))
	for j, rows := range rec.rows {
		y := rowRange{rows[0], rows[1]}
		st := cachedStripe{need: map[graph.TensorID]rowRange{rec.output: y}, fresh: map[graph.TensorID]rowRange{rec.output: y},
			reads: map[graph.OpIndex][]operand{}}
		stripe := func() string {
			return fmt.Sprintf("%s: stripe %d (rows [%d,%d) of %s)", rec.path, j, rows[0], rows[1], b.tname(s, rec.output))
		}
		for i := len(rec.ops) - 1; i >= 0; i-- {
			oi := rec.ops[i]
			o := orig.Ops[oi].Outputs[0]
			p, done := st.fresh[o]
			if !done {
				// Every consumer of o in the region comes later: need_j[o]
				// is complete.
				nd, read := st.need[o]
				if !read {
					b.r.add(BadStripes, "%s reads no row of %s, which %s writes", stripe(), b.tname(s, o), b.oname(s, oi))
					return nil
				}
				p = nd
				if j > 0 {
					prev := out[j-1].need[o]
					p = rowRange{max(nd.lo, prev.hi), nd.hi}
					if p.empty() {
						b.r.add(BadStripes, "%s needs rows [%d,%d) of %s, which stripe %d computed (up to row %d): with halo cache it would "+
							"compute no row of it", stripe(), nd.lo, nd.hi, b.tname(s, o), j-1, prev.hi)
						return nil
					}
					if nd.lo < prev.lo {
						b.r.add(BadStripes, "%s needs rows [%d,%d) of %s, but stripe %d's tensor of it holds rows [%d,%d): with halo cache "+
							"rows above %d would have to come from a tensor that no longer holds them", stripe(), nd.lo, nd.hi, b.tname(s, o),
							j-1, prev.lo, prev.hi, prev.lo)
						return nil
					}
				}
				st.fresh[o] = p
			}
			rd, ok := b.operandRows(rg, j, oi, p, st.need)
			if !ok {
				return nil
			}
			st.reads[oi] = rd
		}
		st.need[rec.input] = rowRange{0, int64(orig.Tensors[rec.input].Shape[1])}
		out[j] = st
	}
	return out
}

// cachedOps builds the operators of every stripe of a region with cached
// halos and the CONCATENATION of the stripes into Y (with more than 10
// stripes, of the groups: stripegroups.go), appending their new
// tensors and buffers to the output model; nil after reporting a region
// that cannot be built so or MACs that differ from the record.
func (b *rebuilder) cachedOps(rg *region) []graph.Op {
	st := b.cachedRows(rg)
	if st == nil {
		return nil
	}
	rec := rg.rec
	s := rec.subgraph
	sg := &b.out.Subgraphs[s]
	orig := rg.sg
	k := len(st)
	var ops []graph.Op
	join := b.newJoiner(rg, sg)
	var copyMACs int64
	// cache holds, for each operator of the region, the tensor of the
	// rows of its output that the next stripe takes: made in stripe j,
	// read in stripe j+1. Keyed by the operator, not the tensor: each
	// writer's copy has its own.
	cache := map[graph.OpIndex]graph.TensorID{}
	for j, cur := range st {
		have := map[graph.TensorID]graph.TensorID{rec.input: rec.input}
		for _, oi := range rec.ops {
			o := orig.Ops[oi].Outputs[0]
			ot := orig.Tensors[o]
			p, nd := cur.fresh[o], cur.need[o]
			cp := b.copyOp(rg, j, oi, p, have, cur.need, cur.reads[oi], &ops)
			name := stripeName(&ot, j)
			if o != rec.output && j > 0 && !cacheRows(st[j-1].need[o], nd).empty() {
				fresh := b.newTensor(sg, name+"/new", &ot, p.hi-p.lo)
				cp.Outputs = []graph.TensorID{fresh}
				ops = append(ops, cp)
				whole := b.newTensor(sg, name, &ot, nd.hi-nd.lo)
				ops = append(ops, concatOp([]graph.TensorID{cache[oi], fresh}, whole, ot.Type))
				have[o] = whole
			} else {
				nt := b.newTensor(sg, name, &ot, p.hi-p.lo)
				cp.Outputs = []graph.TensorID{nt}
				ops = append(ops, cp)
				have[o] = nt
				if o == rec.output {
					join.add(nt)
				}
			}
			copyMACs += opMACs(sg, &cp, p.hi-p.lo)
			if o == rec.output || j+1 >= k {
				continue
			}
			c := cacheRows(nd, st[j+1].need[o])
			switch {
			case c.empty():
			case c == nd:
				cache[oi] = have[o] // the stripe's tensor is the cache
			default:
				cache[oi] = b.sliceRows(sg, stripeName(&ot, j+1)+"/cache", ot, have[o], c.lo-nd.lo, c.hi-nd.lo, &ops)
			}
		}
		join.endStripe(j, &ops)
	}
	if !b.checkMACs(rg, copyMACs) {
		return nil
	}
	return append(ops, join.final())
}
