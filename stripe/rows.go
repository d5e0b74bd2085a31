package stripe

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// use is what one operand of one operator needs in one stripe: its rows
// unclipped (U) and clipped to the tensor (C).
type use struct{ u, c span }

// stripeRows are the rows one stripe holds and computes of each tensor
// of the region computed at run time (docs/stripes.md, "Rows each tensor
// needs" and "Rows, with cached halos").
type stripeRows struct {
	// need: the rows the stripe's tensor of each tensor holds (X: the
	// hull of the rows its operators read, although they read X whole;
	// Y: the stripe's rows).
	need map[graph.TensorID]span
	// fresh: the rows the stripe's copy of each operator computes of
	// its output (new_j): need, but with cached halos.
	fresh map[graph.TensorID]span
	// cache: with cached halos, the rows of an intermediate the stripe
	// takes from the previous stripe's tensor of it (cache_j), for the
	// intermediates where they are not empty.
	cache map[graph.TensorID]span
	// uses: each operand's rows, by (operator, input index).
	uses map[[2]int]use
}

// stripes computes the rows of every stripe of reg, in order: each
// computing all it needs (recompute), or only the rows no earlier stripe
// computed (cache).
func (reg *region) stripes() ([]*stripeRows, error) {
	out := make([]*stripeRows, len(reg.Rows))
	var prev *stripeRows
	for j, r := range reg.Rows {
		if !reg.Cached() {
			prev = nil
		}
		s, err := reg.rows(span{r[0], r[1]}, prev, j)
		if err != nil {
			return nil, fmt.Errorf("stripe %d (rows [%d,%d)): %v", j, r[0], r[1], err)
		}
		out[j], prev = s, s
	}
	return out, nil
}

// rows computes the rows of the stripe j computing rows out of the
// region's output. With prev (the rows of stripe j-1, cached halos), the
// stripe computes of each intermediate only the rows prev does not hold
// and takes the others from prev's tensor; prev nil: it computes every
// row it needs.
func (reg *region) rows(out span, prev *stripeRows, j int) (*stripeRows, error) {
	g := reg.g
	sr := &stripeRows{
		need:  map[graph.TensorID]span{reg.Output: out},
		fresh: map[graph.TensorID]span{},
		cache: map[graph.TensorID]span{},
		uses:  map[[2]int]use{},
	}
	for n := len(reg.Ops) - 1; n >= 0; n-- {
		i := reg.Ops[n]
		op := g.op(i)
		o := op.Outputs[0]
		// Every consumer of o comes later in the region: need[o] is
		// whole.
		q, ok := sr.need[o]
		if !ok {
			return nil, fmt.Errorf("%s: output %s is not read on the way to the region's output", g.opName(i), g.tensorName(o))
		}
		if prev != nil && o != reg.Output {
			was := prev.need[o]
			if q.b <= was.b {
				return nil, fmt.Errorf("with cached halos it would compute no row of %s: it needs rows [%d,%d), and stripe %d holds rows [%d,%d)", g.tensorName(o), q.a, q.b, j-1, was.a, was.b)
			}
			if q.a < was.a {
				return nil, fmt.Errorf("with cached halos it would take rows [%d,%d) of %s from stripe %d, which holds only rows [%d,%d)", q.a, was.b, g.tensorName(o), j-1, was.a, was.b)
			}
			if c := (span{q.a, was.b}); !c.empty() {
				sr.cache[o] = c
			}
			q = span{max(q.a, was.b), q.b}
		}
		sr.fresh[o] = q
		who := func() string { // for errors
			s := fmt.Sprintf("the stripe of output rows [%d,%d)", out.a, out.b)
			if prev != nil {
				s += fmt.Sprintf(", computing rows [%d,%d) of %s,", q.a, q.b, g.tensorName(o))
			}
			return s
		}
		for a, t := range op.Inputs {
			if t == graph.NoTensor || g.constant(t) {
				continue
			}
			var u span
			switch kindOf(op.Code) {
			case convLike, pool:
				h := reg.win[i][0]
				u = span{q.a*h.stride - h.pad, (q.b-1)*h.stride - h.pad + h.extent}
			case pad:
				top := reg.pad[i][1][0]
				u = span{q.a - top, q.b - top}
			default:
				u = q
			}
			c := span{max(u.a, 0), min(u.b, g.tensor(t).Shape[1])}
			if c.empty() {
				return nil, fmt.Errorf("%s: %s reads no real row of %s (it would need rows [%d,%d) of %d)", g.opName(i), who(), g.tensorName(t), u.a, u.b, g.tensor(t).Shape[1])
			}
			if off, ok := reg.mirror[i]; ok {
				// The copy mirrors its slice's own rows: each padding must
				// stay within slice height - offset, as the original's
				// does within the input's (docs/stripes.md, MIRROR_PAD).
				top, bottom := reg.stripePad(i, q)
				if h := c.b - c.a; top > 0 && h < top+off || bottom > 0 && h < bottom+off {
					return nil, fmt.Errorf("%s: %s mirrors %d+%d rows of a slice of %d rows of %s (at most %d)", g.opName(i), who(), top, bottom, h, g.tensorName(t), h-off)
				}
			}
			sr.uses[[2]int{i, a}] = use{u, c}
			if old, ok := sr.need[t]; ok {
				c = hull(old, c)
			}
			sr.need[t] = c
		}
	}
	return sr, nil
}
