package stripe

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// cacheCase is a hand-built region striped with cached halos, with what
// docs/stripes.md ("Halo rows: recomputed or cached") makes of it, worked
// out by hand in each case's comment.
type cacheCase struct {
	name   string
	build  func(t *testing.T) *graph.Model
	region func(m *graph.Model) graph.StripeRegion // Halo cache
	// plan: per stripe, each intermediate's rows (planLines), when given.
	plan []string
	// extra and recompute: ExtraMACs with cached and recomputed halos.
	extra, recompute int64
	ops              int // operators of the rewritten subgraph
}

// convMACs is one output row of a 3x3 conv of w columns, cin -> cout.
func convRow(w, cin, cout int64) int64 { return w * cout * 9 * cin }

func cacheCases() []cacheCase {
	cached := func(r graph.StripeRegion) graph.StripeRegion { r.Halo = graph.HaloCache; return r }
	residual := geometryCases()[2]
	mirror := mirrorCase("SYMMETRIC", 1)
	reflect := mirrorFloatCase()
	return []cacheCase{
		{
			// x 9 rows -> a -> b -> y, 3x3 SAME stride 1, 3 stripes of 3 rows.
			// Each needs one row more of its input on each side: stripe 1
			// (y 3-6) needs b [2,7), of which stripe 0 holds [0,4): it
			// computes b [4,7) and caches [2,4); b [4,7) needs a [3,8), of
			// which stripe 0 holds [0,5). Stripe 2 (y 6-9): b [5,9), a
			// [6,9). Recomputed, a has 5+7+5 rows (8 again), b 4+5+4 (4).
			name: "conv chain 3x3 SAME stride 1",
			build: func(t *testing.T) *graph.Model {
				b := newMB()
				x := b.act("x", []int32{1, 9, 3, 2}, -3)
				a := b.conv("a", x, []int32{1, 9, 3, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
				bb := b.conv("b", a, []int32{1, 9, 3, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
				y := b.conv("y", bb, []int32{1, 9, 3, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
				return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
			},
			region: func(m *graph.Model) graph.StripeRegion {
				return graph.StripeRegion{Input: 0, Output: 7, Ops: []int{0, 1, 2}, Rows: EvenRows(9, 3), Halo: graph.HaloCache}
			},
			plan: []string{
				"stripe 0: x need [0,6); a need [0,5) fresh [0,5); b need [0,4) fresh [0,4); y need [0,3) fresh [0,3)",
				"stripe 1: x need [4,9); a need [3,8) fresh [5,8) cache [3,5); b need [2,7) fresh [4,7) cache [2,4); y need [3,6) fresh [3,6)",
				"stripe 2: x need [7,9); a need [6,9) fresh [8,9) cache [6,8); b need [5,9) fresh [7,9) cache [5,7); y need [6,9) fresh [6,9)",
			},
			extra: 0, recompute: 12 * convRow(3, 2, 2),
			// Stripe 0: slice x, pad, conv a, cache slice a, pad, conv b,
			// cache slice b, pad, conv y (9; a's and b's tensors are read
			// whole, padded). Stripe 1: slice x, pad, conv, concat, cache
			// slice, pad, conv, concat, cache slice, pad, conv (11).
			// Stripe 2: slice x, pad, conv, concat, pad, conv, concat, pad,
			// conv (9). The concatenation of y.
			ops: 9 + 11 + 9 + 1,
		},
		{
			// x 8 -> a 3x3 SAME stride 1 -> y 3x3 SAME stride 2 (4 rows):
			// TFLM pads y by (4-1)*2+3-8 = 1 row in all, 0 on top. y [0,2)
			// reads a [0,5); y [2,4) reads a [4,9) -> [4,8): a row 4 is
			// cached. a [5,8) reads x [4,9) -> [4,8).
			name: "conv then a stride-2 conv",
			build: func(t *testing.T) *graph.Model {
				b := newMB()
				x := b.act("x", []int32{1, 8, 3, 2}, -3)
				a := b.conv("a", x, []int32{1, 8, 3, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
				y := b.conv("y", a, []int32{1, 4, 2, 3}, 3, 3, same(graph.PaddingSame, 2, 2), false)
				return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
			},
			region: func(m *graph.Model) graph.StripeRegion {
				return graph.StripeRegion{Input: 0, Output: 4, Ops: []int{0, 1}, Rows: EvenRows(4, 2), Halo: graph.HaloCache}
			},
			plan: []string{
				"stripe 0: x need [0,6); a need [0,5) fresh [0,5); y need [0,2) fresh [0,2)",
				"stripe 1: x need [4,8); a need [4,8) fresh [5,8) cache [4,5); y need [2,4) fresh [2,4)",
			},
			extra: 0, recompute: convRow(3, 2, 2),
			// Stripe 0: slice x, pad, conv a, cache slice, pad, conv y;
			// stripe 1: slice x, pad, conv a, concat, pad, conv y; concat.
			ops: 6 + 6 + 1,
		},
		{
			// Depthwise 3x3 dilation 2 (extent 5), SAME stride 1, twice, on
			// 8 rows: 2 rows of padding each side. y [0,4) reads a [-2,6)
			// -> [0,6); y [4,8) reads a [2,10) -> [2,8): a [6,8) fresh,
			// [2,6) cached. Recomputed: a 6+6 rows, 4 again.
			name: "dilated depthwise chain",
			build: func(t *testing.T) *graph.Model {
				b := newMB()
				x := b.act("x", []int32{1, 8, 4, 2}, 7)
				w := same(graph.PaddingSame, 1, 1)
				w.DilationH, w.DilationW = 2, 2
				a := b.conv("a", x, []int32{1, 8, 4, 2}, 3, 3, w, true)
				y := b.conv("y", a, []int32{1, 8, 4, 2}, 3, 3, w, true)
				return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
			},
			region: func(m *graph.Model) graph.StripeRegion {
				return graph.StripeRegion{Input: 0, Output: 4, Ops: []int{0, 1}, Rows: EvenRows(8, 2), Halo: graph.HaloCache}
			},
			plan: []string{
				"stripe 0: x need [0,8); a need [0,6) fresh [0,6); y need [0,4) fresh [0,4)",
				"stripe 1: x need [4,8); a need [2,8) fresh [6,8) cache [2,6); y need [4,8) fresh [4,8)",
			},
			extra: 0, recompute: 4 * 4 * 2 * 9, // 4 rows of a: 4 columns, 2 channels, 9 taps
			// Stripe 0: pad x (read whole), dw a, cache slice, pad, dw y;
			// stripe 1: slice x, pad, dw, concat, pad, dw; concat.
			ops: 5 + 6 + 1,
		},
		{
			// TestApplyGeometry's residual chain, y = conv(conv(x)) + x, 2
			// stripes of 3 rows: stripe 1's b [3,6) reads a [2,6), of which
			// stripe 0 holds [0,4) (see cachedResidualOps).
			name:   "chain with a residual ADD",
			build:  residual.build,
			region: func(m *graph.Model) graph.StripeRegion { return cached(residual.region(m)) },
			plan: []string{
				"stripe 0: x need [0,5); a need [0,4) fresh [0,4); b need [0,3) fresh [0,3); y need [0,3) fresh [0,3)",
				"stripe 1: x need [3,6); a need [2,6) fresh [4,6) cache [2,4); b need [3,6) fresh [3,6); y need [3,6) fresh [3,6)",
			},
			extra: 0, recompute: residual.extra,
			ops: len(cachedResidualOps),
		},
		{
			// x 4 -> a 3x3 SAME -> PAD (1,1) -> p 6 -> y 3x3 VALID (4
			// rows). y [0,2) reads p [0,4) (a [0,3) and a pad row); y [2,4)
			// reads p [2,6), of which stripe 0 holds [0,4): p [4,6) is a
			// row 3 and a pad row, a [3,4) new and no cache of a.
			// Recomputed, stripe 1 computes a [1,4): 2 rows again.
			name: "conv, PAD, VALID conv",
			build: func(t *testing.T) *graph.Model {
				b := newMB()
				x := b.act("x", []int32{1, 4, 3, 2}, -3)
				a := b.conv("a", x, []int32{1, 4, 3, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
				pd := b.int32s("paddings", []int32{4, 2}, 0, 0, 1, 1, 1, 1, 0, 0)
				p := b.act("p", []int32{1, 6, 5, 2}, 5)
				b.op(opPad, nil, []graph.TensorID{a, pd}, p)
				y := b.conv("y", p, []int32{1, 4, 3, 2}, 3, 3, same(graph.PaddingValid, 1, 1), false)
				return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
			},
			region: func(m *graph.Model) graph.StripeRegion {
				return graph.StripeRegion{Input: 0, Output: 6, Ops: []int{0, 1, 2}, Rows: EvenRows(4, 2), Halo: graph.HaloCache}
			},
			plan: []string{
				"stripe 0: x need [0,4); a need [0,3) fresh [0,3); p need [0,4) fresh [0,4); y need [0,2) fresh [0,2)",
				"stripe 1: x need [2,4); a need [3,4) fresh [3,4); p need [2,6) fresh [4,6) cache [2,4); y need [2,4) fresh [2,4)",
			},
			extra: 0, recompute: 2 * convRow(3, 2, 2),
			// Stripe 0: pad x (read whole), conv a, PAD, cache slice of p,
			// conv y; stripe 1: slice x, pad, conv a, PAD, concat, conv y;
			// concat.
			ops: 5 + 6 + 1,
		},
		{
			// TestApplyGeometry's MIRROR_PAD SYMMETRIC -> conv 3x3 VALID, 2
			// stripes of 4 rows: y [4,8) reads p [4,10), of which stripe 0
			// holds [0,6): p [6,10) = x [4,6) mirrored by 2 below. No
			// operator before the conv has MACs.
			name:   "MIRROR_PAD SYMMETRIC",
			build:  mirror.build,
			region: func(m *graph.Model) graph.StripeRegion { return cached(mirror.region(m)) },
			plan: []string{
				"stripe 0: x need [0,4); p need [0,6) fresh [0,6); y need [0,4) fresh [0,4)",
				"stripe 1: x need [4,6); p need [4,10) fresh [6,10) cache [4,6); y need [4,8) fresh [4,8)",
			},
			ops: 4 + 4 + 1,
		},
		{
			// MIRROR_PAD REFLECT in FLOAT32, stripes of 3 and 5 rows (with
			// 4 and 4, stripe 1's copy would mirror 2 rows of a slice of 2:
			// refused). y [3,8) reads p [3,10); stripe 0 holds [0,5): p
			// [5,10) = x [3,6) and 2 rows reflected below.
			name:  "MIRROR_PAD REFLECT FLOAT32",
			build: reflect.build,
			region: func(m *graph.Model) graph.StripeRegion {
				r := cached(reflect.region(m))
				r.Rows = [][2]int32{{0, 3}, {3, 8}}
				return r
			},
			plan: []string{
				"stripe 0: x need [0,3); p need [0,5) fresh [0,5); y need [0,3) fresh [0,3)",
				"stripe 1: x need [3,6); p need [3,10) fresh [5,10) cache [3,5); y need [3,8) fresh [3,8)",
			},
			ops: 4 + 4 + 1,
		},
		{
			// x 4 -> a -> y, 3x3 SAME stride 1, stripes [0,1), [1,4): y
			// [0,1) reads a [0,2), which reads x [0,3); y [1,4) reads a
			// [0,4): all of stripe 0's a, and a [2,4) fresh (x [1,4)).
			// Recomputed, a [0,2) twice.
			name: "whole cache",
			build: func(t *testing.T) *graph.Model {
				b := newMB()
				x := b.act("x", []int32{1, 4, 3, 2}, -3)
				a := b.conv("a", x, []int32{1, 4, 3, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
				y := b.conv("y", a, []int32{1, 4, 3, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
				return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
			},
			region: func(m *graph.Model) graph.StripeRegion {
				return graph.StripeRegion{Input: 0, Output: 4, Ops: []int{0, 1}, Rows: [][2]int32{{0, 1}, {1, 4}}, Halo: graph.HaloCache}
			},
			plan: []string{
				"stripe 0: x need [0,3); a need [0,2) fresh [0,2); y need [0,1) fresh [0,1)",
				"stripe 1: x need [1,4); a need [0,4) fresh [2,4) cache [0,2); y need [1,4) fresh [1,4)",
			},
			extra: 0, recompute: 2 * convRow(3, 2, 2),
			// Stripe 0: slice x, pad, conv a, pad, conv y (a/stripe0 is the
			// cache); stripe 1: slice x, pad, conv, concat, pad, conv; concat.
			ops: 5 + 6 + 1,
		},
		{
			// x 7 -> a, b 3x3 SAME -> MAX_POOL 2x2 stride 2 VALID -> y 3
			// rows: b row 6 is never read. One row a stripe: y [j, j+1)
			// reads b [2j, 2j+2), which reads a [2j-1, 2j+3): a [0,3),
			// [3,5) (cache [1,3)), [5,7) (cache [3,5)), each row once; b 6
			// rows of 7. Recomputed: a 3+4+4 rows, 4 again, b 6.
			name: "VALID pool dropping a row",
			build: func(t *testing.T) *graph.Model {
				b := newMB()
				x := b.act("x", []int32{1, 7, 4, 2}, -3)
				a := b.conv("a", x, []int32{1, 7, 4, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
				bb := b.conv("b", a, []int32{1, 7, 4, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
				y := b.act("y", []int32{1, 3, 2, 2}, 5)
				b.op(graph.MaxPool2D, &graph.Window{Padding: graph.PaddingValid, StrideH: 2, StrideW: 2, FilterH: 2, FilterW: 2, DilationH: 1, DilationW: 1}, []graph.TensorID{bb}, y)
				return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
			},
			region: func(m *graph.Model) graph.StripeRegion {
				return graph.StripeRegion{Input: 0, Output: 7, Ops: []int{0, 1, 2}, Rows: EvenRows(3, 3), Halo: graph.HaloCache}
			},
			plan: []string{
				"stripe 0: x need [0,4); a need [0,3) fresh [0,3); b need [0,2) fresh [0,2); y need [0,1) fresh [0,1)",
				"stripe 1: x need [2,6); a need [1,5) fresh [3,5) cache [1,3); b need [2,4) fresh [2,4); y need [1,2) fresh [1,2)",
				"stripe 2: x need [4,7); a need [3,7) fresh [5,7) cache [3,5); b need [4,6) fresh [4,6); y need [2,3) fresh [2,3)",
			},
			extra: -convRow(4, 2, 2), recompute: 3 * convRow(4, 2, 2),
			// Stripe 0: slice x, pad, conv a, cache slice, pad, conv b, pool
			// (7: the pool and b read their inputs' stripe tensors whole);
			// stripe 1: slice x, pad, conv, concat, cache slice, pad, conv,
			// pool (8); stripe 2: slice x, pad, conv, concat, pad, conv,
			// pool (7); concat.
			ops: 7 + 8 + 7 + 1,
		},
	}
}

// cachedResidualOps is the residual chain striped with cached halos, by
// docs/stripes.md: stripe 0 as with recompute, and after its copy of a
// the cache of a for stripe 1 (rows [2,4) = a/stripe0's rows 2-3);
// stripe 1 computes a [4,6) only (from x [3,6), padded below) and puts
// the cache in front.
var cachedResidualOps = []string{
	"STRIDED_SLICE x[1 6 4 2] begin[0 0 0 0] end[1 5 4 2] strides[1 1 1 1] -> x/stripe0/slice[1 5 4 2]",
	"PAD x/stripe0/slice[1 5 4 2] paddings[0 0 1 0 1 1 0 0] -> x/stripe0/pad[1 6 6 2]",
	"CONV_2D x/stripe0/pad[1 6 6 2] VALID -> a/stripe0[1 4 4 2]",
	"STRIDED_SLICE a/stripe0[1 4 4 2] begin[0 2 0 0] end[1 4 4 2] strides[1 1 1 1] -> a/stripe1/cache[1 2 4 2]",
	"PAD a/stripe0[1 4 4 2] paddings[0 0 1 0 1 1 0 0] -> a/stripe0/pad[1 5 6 2]",
	"CONV_2D a/stripe0/pad[1 5 6 2] VALID -> b/stripe0[1 3 4 2]",
	"STRIDED_SLICE x[1 6 4 2] begin[0 0 0 0] end[1 3 4 2] strides[1 1 1 1] -> x/stripe0/slice[1 3 4 2]",
	"ADD b/stripe0[1 3 4 2] x/stripe0/slice[1 3 4 2] -> y/stripe0[1 3 4 2]",
	"STRIDED_SLICE x[1 6 4 2] begin[0 3 0 0] end[1 6 4 2] strides[1 1 1 1] -> x/stripe1/slice[1 3 4 2]",
	"PAD x/stripe1/slice[1 3 4 2] paddings[0 0 0 1 1 1 0 0] -> x/stripe1/pad[1 4 6 2]",
	"CONV_2D x/stripe1/pad[1 4 6 2] VALID -> a/stripe1/new[1 2 4 2]",
	"CONCATENATION a/stripe1/cache[1 2 4 2] a/stripe1/new[1 2 4 2] -> a/stripe1[1 4 4 2]",
	"PAD a/stripe1[1 4 4 2] paddings[0 0 0 1 1 1 0 0] -> a/stripe1/pad[1 5 6 2]",
	"CONV_2D a/stripe1/pad[1 5 6 2] VALID -> b/stripe1[1 3 4 2]",
	"STRIDED_SLICE x[1 6 4 2] begin[0 3 0 0] end[1 6 4 2] strides[1 1 1 1] -> x/stripe1/slice[1 3 4 2]",
	"ADD b/stripe1[1 3 4 2] x/stripe1/slice[1 3 4 2] -> y/stripe1[1 3 4 2]",
	"CONCATENATION y/stripe0[1 3 4 2] y/stripe1[1 3 4 2] -> y[1 6 4 2]",
}

// planLines renders reg's rows pass one line a stripe: each tensor of the
// region computed at run time by id, with the rows its stripe tensor
// holds, and for the operators' outputs the rows computed and cached.
func planLines(m *graph.Model, plan []*stripeRows) []string {
	var out []string
	for j, sr := range plan {
		ids := make([]graph.TensorID, 0, len(sr.need))
		for t := range sr.need {
			ids = append(ids, t)
		}
		sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
		line := fmt.Sprintf("stripe %d:", j)
		for n, t := range ids {
			if n > 0 {
				line += ";"
			}
			s := sr.need[t]
			line += fmt.Sprintf(" %s need [%d,%d)", m.Tensor(0, t).Name, s.a, s.b)
			if f, ok := sr.fresh[t]; ok {
				line += fmt.Sprintf(" fresh [%d,%d)", f.a, f.b)
			}
			if c, ok := sr.cache[t]; ok {
				line += fmt.Sprintf(" cache [%d,%d)", c.a, c.b)
			}
		}
		out = append(out, line)
	}
	return out
}

func TestCachedRows(t *testing.T) {
	for _, tc := range cacheCases() {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.build(t)
			r := tc.region(m)
			reg, err := check(analyze(m, 0), r)
			require.NoError(t, err)
			plan, err := reg.stripes()
			require.NoError(t, err)
			if tc.plan != nil {
				assert.Equal(t, tc.plan, planLines(m, plan))
			}
			// No row is computed twice, and every row some stripe needs is
			// computed: the fresh rows of each tensor the stripes compute
			// follow each other; each stripe's tensor holds its cache (the
			// last rows of the stripe before's) and then its fresh rows.
			for _, i := range r.Ops {
				o := m.Subgraphs[0].Ops[i].Outputs[0]
				var computed []int32
				for j, sr := range plan {
					f, n := sr.fresh[o], sr.need[o]
					require.False(t, f.empty(), "stripe %d computes no row of %d", j, o)
					assert.Equal(t, n.b, f.b, "stripe %d, tensor %d", j, o)
					for row := f.a; row < f.b; row++ {
						computed = append(computed, row)
					}
					c, ok := sr.cache[o]
					if !ok {
						assert.Equal(t, n, f, "stripe %d, tensor %d without a cache", j, o)
						continue
					}
					require.Positive(t, j)
					prev := plan[j-1].need[o]
					assert.Equal(t, span{n.a, f.a}, c, "stripe %d, tensor %d", j, o)
					assert.Equal(t, prev.b, c.b, "stripe %d takes the last rows of stripe %d's %d", j, j-1, o)
					assert.GreaterOrEqual(t, c.a, prev.a)
				}
				for n := 1; n < len(computed); n++ {
					assert.Less(t, computed[n-1], computed[n], "tensor %d: a row computed twice or out of order", o)
				}
			}
		})
	}
}

func TestApplyCached(t *testing.T) {
	for _, tc := range cacheCases() {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.build(t)
			regs := []graph.StripeRegion{tc.region(m)}
			out, err := Apply(m, regs)
			require.NoError(t, err)
			assert.LessOrEqual(t, regs[0].ExtraMACs, int64(0))
			assert.Equal(t, tc.extra, regs[0].ExtraMACs, "extra MACs, cached")
			assert.Len(t, out.Subgraphs[0].Ops, tc.ops)
			require.Len(t, out.Stripes, 1)
			assert.Equal(t, graph.HaloCache, out.Stripes[0].Halo)
			assert.Equal(t, regs[0], out.Stripes[0])
			// Every tensor and buffer of the original stays.
			assert.Equal(t, m.Buffers, out.Buffers[:len(m.Buffers)])
			for id := range m.Subgraphs[0].Tensors {
				assert.Equal(t, m.Subgraphs[0].Tensors[id].Name, out.Subgraphs[0].Tensors[id].Name)
			}

			// Measure agrees, and holds the rows of the plan.
			got, _, err := Measure(m, regs[0])
			require.NoError(t, err)
			assert.Equal(t, regs[0].MACs, got.MACs)
			assert.Equal(t, regs[0].ExtraMACs, got.ExtraMACs)

			// Recomputed, the same region costs the halo rows again.
			rec := []graph.StripeRegion{tc.region(m)}
			rec[0].Halo = ""
			_, err = Apply(m, rec)
			require.NoError(t, err)
			assert.Equal(t, tc.recompute, rec[0].ExtraMACs, "extra MACs, recomputed")
			assert.Equal(t, rec[0].MACs, regs[0].MACs)
		})
	}
}

// TestApplyCachedOperators checks the rewrite of the residual chain with
// cached halos operator by operator, with its tensors.
func TestApplyCachedOperators(t *testing.T) {
	tc := geometryCases()[2]
	require.Equal(t, "chain with a residual ADD", tc.name)
	m := tc.build(t)
	r := tc.region(m)
	r.Halo = graph.HaloCache
	out, err := Apply(m, []graph.StripeRegion{r})
	require.NoError(t, err)
	assert.Equal(t, cachedResidualOps, describe(out))

	// The tensors appended, in the order the operators create them:
	// stripe 0 as with recompute (15), the cache of a after a/stripe0;
	// then stripe 1.
	var names []string
	for _, ts := range out.Subgraphs[0].Tensors[len(m.Subgraphs[0].Tensors):] {
		names = append(names, ts.Name)
	}
	assert.Equal(t, []string{
		"x/stripe0/slice/begin", "x/stripe0/slice/end", "x/stripe0/slice/strides", "x/stripe0/slice",
		"x/stripe0/pad/paddings", "x/stripe0/pad", "a/stripe0",
		"a/stripe1/cache/begin", "a/stripe1/cache/end", "a/stripe1/cache/strides", "a/stripe1/cache",
		"a/stripe0/pad/paddings", "a/stripe0/pad", "b/stripe0",
		"x/stripe0/slice/begin", "x/stripe0/slice/end", "x/stripe0/slice/strides", "x/stripe0/slice", "y/stripe0",
		"x/stripe1/slice/begin", "x/stripe1/slice/end", "x/stripe1/slice/strides", "x/stripe1/slice",
		"x/stripe1/pad/paddings", "x/stripe1/pad", "a/stripe1/new", "a/stripe1",
		"a/stripe1/pad/paddings", "a/stripe1/pad", "b/stripe1",
		"x/stripe1/slice/begin", "x/stripe1/slice/end", "x/stripe1/slice/strides", "x/stripe1/slice", "y/stripe1",
	}, names)
	// The new operators: versions 2 (INT8), the options as the loader
	// reads them; the cache and the concatenation of a carry a's
	// quantization, the concatenation axis 1.
	sg := &out.Subgraphs[0]
	cacheOp, concatOp := sg.Ops[3], sg.Ops[11]
	assert.Equal(t, int32(2), cacheOp.Version)
	assert.Equal(t, stridedSliceOptions(), cacheOp.Options)
	assert.Equal(t, int32(2), concatOp.Version)
	assert.Equal(t, concatenationOptions(1), concatOp.Options)
	a := m.Subgraphs[0].Tensors[1]
	for _, id := range []graph.TensorID{cacheOp.Outputs[0], concatOp.Inputs[1], concatOp.Outputs[0]} {
		assert.Equal(t, a.Quantization, sg.Tensors[id].Quantization, "tensor %q", sg.Tensors[id].Name)
		assert.Equal(t, a.Type, sg.Tensors[id].Type)
		assert.Equal(t, graph.BufferIndex(0), sg.Tensors[id].Buffer)
	}
	assert.Equal(t, cacheOp.Outputs[0], concatOp.Inputs[0])
	// The region's intermediates a and b are kept with 0 rows.
	for _, id := range []graph.TensorID{1, 4} {
		assert.Equal(t, int32(0), sg.Tensors[id].Shape[1])
	}
}

// TestApplyCachedWholeCache: when the next stripe's cache is all of a
// stripe's tensor, that tensor is itself the cache, no STRIDED_SLICE
// (the "whole cache" case of cacheCases: y [1,4) reads a [0,4), and
// stripe 0 holds a [0,2)).
func TestApplyCachedWholeCache(t *testing.T) {
	var tc cacheCase
	for _, c := range cacheCases() {
		if c.name == "whole cache" {
			tc = c
		}
	}
	require.NotNil(t, tc.build)
	m := tc.build(t)
	out, err := Apply(m, []graph.StripeRegion{tc.region(m)})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"STRIDED_SLICE x[1 4 3 2] begin[0 0 0 0] end[1 3 3 2] strides[1 1 1 1] -> x/stripe0/slice[1 3 3 2]",
		"PAD x/stripe0/slice[1 3 3 2] paddings[0 0 1 0 1 1 0 0] -> x/stripe0/pad[1 4 5 2]",
		"CONV_2D x/stripe0/pad[1 4 5 2] VALID -> a/stripe0[1 2 3 2]",
		"PAD a/stripe0[1 2 3 2] paddings[0 0 1 0 1 1 0 0] -> a/stripe0/pad[1 3 5 2]",
		"CONV_2D a/stripe0/pad[1 3 5 2] VALID -> y/stripe0[1 1 3 2]",
		"STRIDED_SLICE x[1 4 3 2] begin[0 1 0 0] end[1 4 3 2] strides[1 1 1 1] -> x/stripe1/slice[1 3 3 2]",
		"PAD x/stripe1/slice[1 3 3 2] paddings[0 0 0 1 1 1 0 0] -> x/stripe1/pad[1 4 5 2]",
		"CONV_2D x/stripe1/pad[1 4 5 2] VALID -> a/stripe1/new[1 2 3 2]",
		"CONCATENATION a/stripe0[1 2 3 2] a/stripe1/new[1 2 3 2] -> a/stripe1[1 4 3 2]",
		"PAD a/stripe1[1 4 3 2] paddings[0 0 0 1 1 1 0 0] -> a/stripe1/pad[1 5 5 2]",
		"CONV_2D a/stripe1/pad[1 5 5 2] VALID -> y/stripe1[1 3 3 2]",
		"CONCATENATION y/stripe0[1 1 3 2] y/stripe1[1 3 3 2] -> y[1 4 3 2]",
	}, describe(out))
}

// chain6 is x (6 rows) -> a -> y, two 3x3 SAME stride-1 convs.
func chain6(t *testing.T) *graph.Model {
	b := newMB()
	x := b.act("x", []int32{1, 6, 3, 2}, -3)
	a := b.conv("a", x, []int32{1, 6, 3, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
	b.conv("y", a, []int32{1, 6, 3, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
	return b.model(t, []graph.TensorID{x}, []graph.TensorID{4})
}

// TestApplyCachedRefused: the refusals of docs/stripes.md, "Rows, with
// cached halos", each naming the stripe and the tensor.
func TestApplyCachedRefused(t *testing.T) {
	m := chain6(t)
	// Stripes [0,2), [2,4), [4,5), [5,6): stripe 2 (y [4,5)) needs a
	// [3,6), all of a's last rows; stripe 3 (y [5,6)) needs a [4,6):
	// nothing new.
	r := graph.StripeRegion{Input: 0, Output: 4, Ops: []int{0, 1}, Rows: EvenRows(6, 4), Halo: graph.HaloCache}
	const want = `stripe: region 0 (subgraph 0, 0 -> 4): stripe 3 (rows [5,6)): with cached halos it would compute no row of tensor 1 "a": it needs rows [4,6), and stripe 2 holds rows [3,6)`
	_, err := Apply(m, []graph.StripeRegion{r})
	assert.EqualError(t, err, want)
	_, _, err = Measure(m, r)
	assert.EqualError(t, err, `stripe: region (subgraph 0, 0 -> 4): stripe 3 (rows [5,6)): with cached halos it would compute no row of tensor 1 "a": it needs rows [4,6), and stripe 2 holds rows [3,6)`)
	// Recomputed, stripe 3 computes a [4,6) again.
	r.Halo = graph.HaloRecompute
	_, err = Apply(m, []graph.StripeRegion{r})
	assert.NoError(t, err)

	// A cache reaching above the rows the stripe before holds. The
	// operators' row maps never move backwards, so no region gets here
	// (a stripe's rows of a tensor start no earlier than the stripe
	// before's): the guard is checked on the rows pass itself, with
	// stripe 0 holding a [1,2) and stripe 1 (y [0,2)) needing a [0,3).
	r.Halo = graph.HaloCache
	reg, err := check(analyze(m, 0), r)
	require.NoError(t, err)
	prev := &stripeRows{need: map[graph.TensorID]span{1: {1, 2}}}
	_, err = reg.rows(span{0, 2}, prev, 1)
	assert.EqualError(t, err, `with cached halos it would take rows [0,2) of tensor 1 "a" from stripe 0, which holds only rows [1,2)`)

	// An unknown halo.
	r.Halo = "bogus"
	_, err = Apply(m, []graph.StripeRegion{r})
	assert.EqualError(t, err, `stripe: region 0 (subgraph 0, 0 -> 4): halo "bogus" is neither "recompute" nor "cache"`)
}

// TestApplyHaloRecorded: Apply records Halo as given ("" stays "").
func TestApplyHaloRecorded(t *testing.T) {
	m := chain6(t)
	for _, h := range []graph.Halo{"", graph.HaloRecompute, graph.HaloCache} {
		r := graph.StripeRegion{Input: 0, Output: 4, Ops: []int{0, 1}, Rows: EvenRows(6, 2), Halo: h}
		out, err := Apply(m, []graph.StripeRegion{r})
		require.NoError(t, err)
		require.Len(t, out.Stripes, 1)
		assert.Equal(t, h, out.Stripes[0].Halo)
	}
	// "" and recompute build the same model.
	a, err := Apply(m, []graph.StripeRegion{{Input: 0, Output: 4, Ops: []int{0, 1}, Rows: EvenRows(6, 2)}})
	require.NoError(t, err)
	b, err := Apply(m, []graph.StripeRegion{{Input: 0, Output: 4, Ops: []int{0, 1}, Rows: EvenRows(6, 2), Halo: graph.HaloRecompute}})
	require.NoError(t, err)
	a.Stripes, b.Stripes = nil, nil
	assert.Equal(t, a, b)
}

// TestApplyCachedSameAsRecompute: a region without intermediate tensors
// (one operator) has nothing to cache: both halos build the same model.
func TestApplyCachedSameAsRecompute(t *testing.T) {
	for _, tc := range geometryCases() {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.build(t)
			r := tc.region(m)
			if len(r.Ops) > 1 {
				t.Skip("a region with intermediates")
			}
			rec, err := Apply(m, []graph.StripeRegion{r})
			require.NoError(t, err)
			r.Halo = graph.HaloCache
			cached, err := Apply(m, []graph.StripeRegion{r})
			require.NoError(t, err)
			require.Equal(t, graph.HaloCache, cached.Stripes[0].Halo)
			rec.Stripes, cached.Stripes = nil, nil
			assert.Equal(t, rec, cached)
		})
	}
}

// TestApplyRefilled: a region Apply (or Measure) already filled gives
// the same MACs and ExtraMACs when applied again (they were added to
// the MACs given).
func TestApplyRefilled(t *testing.T) {
	for _, tc := range cacheCases() {
		m := tc.build(t)
		regs := []graph.StripeRegion{tc.region(m)}
		_, err := Apply(m, regs)
		require.NoError(t, err)
		again := append([]graph.StripeRegion(nil), regs...)
		out, err := Apply(m, again)
		require.NoError(t, err)
		assert.Equal(t, regs, again, tc.name)
		assert.Equal(t, regs[0], out.Stripes[0], tc.name)
	}
}
