package stripe

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// TestGroups: the groups of more than 10 stripes (docs/stripes.md, "More
// than 10 stripes: groups"): g = ceil(k/10) groups whose sizes split k as
// EvenRows splits rows, the first k mod g one stripe larger. Worked out by
// hand: 11 = 6+5, 15 = 8+7, 21 = 7+7+7, 31 = 8+8+8+7, 55 = 10+9*5,
// 91 = 10+9*9, 99 = 10*9+9, 100 = 10*10.
func TestGroups(t *testing.T) {
	sizes := func(gs [][2]int) []int {
		var out []int
		next := 0
		for _, g := range gs {
			require.Equal(t, next, g[0], "groups %v are not consecutive", gs)
			out = append(out, g[1]-g[0])
			next = g[1]
		}
		return out
	}
	rep := func(n, times int) []int {
		out := make([]int, times)
		for i := range out {
			out[i] = n
		}
		return out
	}
	for _, tc := range []struct {
		k    int
		want []int // group sizes; nil: one CONCATENATION of the stripes
	}{
		{2, nil},
		{7, nil},
		{10, nil},
		{11, []int{6, 5}},
		{12, []int{6, 6}},
		{13, []int{7, 6}},
		{15, []int{8, 7}},
		{16, []int{8, 8}},
		{20, []int{10, 10}},
		{21, []int{7, 7, 7}},
		{31, []int{8, 8, 8, 7}},
		{55, append([]int{10}, rep(9, 5)...)},
		{91, append([]int{10}, rep(9, 9)...)},
		{99, append(rep(10, 9), 9)},
		{100, rep(10, 10)},
	} {
		t.Run(fmt.Sprint(tc.k), func(t *testing.T) {
			gs := groups(tc.k)
			if tc.want == nil {
				assert.Nil(t, gs)
				return
			}
			assert.Equal(t, tc.want, sizes(gs))
			assert.Equal(t, tc.k, gs[len(gs)-1][1], "the groups end at the last stripe")
			// TFLM's CONCATENATION takes at most 10 inputs, and every
			// group has at least 5 stripes.
			assert.LessOrEqual(t, len(gs), 10)
			for _, n := range tc.want {
				assert.LessOrEqual(t, n, 10)
				assert.GreaterOrEqual(t, n, 5)
			}
		})
	}
}

// groupChain is x [1, h, 2, 1] -> RELU -> a -> CONV_2D 3x1 SAME stride 1
// -> y [1, h, 2, 1] (int8): y row r reads a rows [r-1, r+2), and TFLM
// pads a by 1 row on top and 1 below, no column (a 3x1 window).
func groupChain(t *testing.T, h int32) *graph.Model {
	b := newMB()
	x := b.act("x", []int32{1, h, 2, 1}, -3)
	a := b.act("a", []int32{1, h, 2, 1}, -3)
	b.op(opRelu, nil, []graph.TensorID{x}, a)
	y := b.conv("y", a, []int32{1, h, 2, 1}, 3, 1, same(graph.PaddingSame, 1, 1), false)
	return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
}

// groupChainStripe is what docs/stripes.md appends for stripe j of k (2
// rows each, y [2j, 2j+2)) of groupChain with h = 2k, worked out by hand.
//
// Recomputed: y [2j, 2j+2) reads a [2j-1, 2j+3), clipped to [0, 2k); a
// reads the same rows of x, sliced from x. Stripe 0 reads a [0,3) and
// pads it by a row on top; stripe k-1 reads a [2k-3, 2k) and pads it by a
// row below; the others read 4 rows, unpadded.
//
// Cached: stripe 0 as recomputed, but the cache of a for stripe 1, a
// [1,3), is sliced from a/stripe0 (its rows 1-2) after its RELU. Stripe j
// from 1 on holds a [2j-1, 2j+3) (clipped), of which stripe j-1 holds up
// to 2j+1: its RELU computes a [2j+1, 2j+3) (the last stripe [2k-1, 2k))
// from those rows of x, and a CONCATENATION puts the cache [2j-1, 2j+1)
// in front; its cache for stripe j+1, a [2j+1, 2j+3), is rows 2-3 of its
// a.
func groupChainStripe(j, k int, cached bool) (ops, tensors []string) {
	last := j == k-1
	op := func(format string, args ...any) { ops = append(ops, fmt.Sprintf(format, args...)) }
	add := func(names ...string) {
		for _, n := range names {
			tensors = append(tensors, strings.ReplaceAll(n, "%j", fmt.Sprint(j)))
		}
	}
	slice := func(a, b int) {
		op("STRIDED_SLICE x[1 %d 2 1] begin[0 %d 0 0] end[1 %d 2 1] strides[1 1 1 1] -> x/stripe%d/slice[1 %d 2 1]", 2*k, a, b, j, b-a)
		add("x/stripe%j/slice/begin", "x/stripe%j/slice/end", "x/stripe%j/slice/strides", "x/stripe%j/slice")
	}
	held := 4 // rows of a/stripe<j>
	if j == 0 || last {
		held = 3
	}
	switch {
	case !cached || j == 0:
		slice(max(2*j-1, 0), min(2*j+3, 2*k))
		op("RELU x/stripe%d/slice[1 %d 2 1] -> a/stripe%d[1 %d 2 1]", j, held, j, held)
		add("a/stripe%j")
	default:
		fresh := 2
		if last {
			fresh = 1
		}
		slice(2*j+1, 2*j+1+fresh)
		op("RELU x/stripe%d/slice[1 %d 2 1] -> a/stripe%d/new[1 %d 2 1]", j, fresh, j, fresh)
		op("CONCATENATION a/stripe%d/cache[1 2 2 1] a/stripe%d/new[1 %d 2 1] -> a/stripe%d[1 %d 2 1]", j, j, fresh, j, held)
		add("a/stripe%j/new", "a/stripe%j")
	}
	if cached && !last {
		first := 2 // the cache is a/stripe<j>'s rows [first, first+2)
		if j == 0 {
			first = 1
		}
		op("STRIDED_SLICE a/stripe%d[1 %d 2 1] begin[0 %d 0 0] end[1 %d 2 1] strides[1 1 1 1] -> a/stripe%d/cache[1 2 2 1]", j, held, first, first+2, j+1)
		n := fmt.Sprint(j + 1)
		add("a/stripe"+n+"/cache/begin", "a/stripe"+n+"/cache/end", "a/stripe"+n+"/cache/strides", "a/stripe"+n+"/cache")
	}
	in := fmt.Sprintf("a/stripe%d[1 %d 2 1]", j, held)
	switch {
	case j == 0:
		op("PAD %s paddings[0 0 1 0 0 0 0 0] -> a/stripe0/pad[1 4 2 1]", in)
		add("a/stripe%j/pad/paddings", "a/stripe%j/pad")
		in = "a/stripe0/pad[1 4 2 1]"
	case last:
		op("PAD %s paddings[0 0 0 1 0 0 0 0] -> a/stripe%d/pad[1 4 2 1]", in, j)
		add("a/stripe%j/pad/paddings", "a/stripe%j/pad")
		in = fmt.Sprintf("a/stripe%d/pad[1 4 2 1]", j)
	}
	op("CONV_2D %s VALID -> y/stripe%d[1 2 2 1]", in, j)
	add("y/stripe%j")
	return ops, tensors
}

// stripeList is "y/stripe<j0>[1 2 2 1] ... y/stripe<j1-1>[1 2 2 1]".
func stripeList(j0, j1 int) string {
	var s []string
	for j := j0; j < j1; j++ {
		s = append(s, fmt.Sprintf("y/stripe%d[1 2 2 1]", j))
	}
	return strings.Join(s, " ")
}

// TestApplyGroups: groupChain with 11, 15 and 21 stripes of 2 rows, halos
// recomputed and cached. Each group's CONCATENATION comes right after its
// last stripe's operators (with cached halos, after the cache that stripe
// makes for the next), into <Y>/group<n>, and the last CONCATENATION joins
// the groups into y. The groups' positions and lines are worked out by
// hand: recomputed, stripes 0 and k-1 have 4 operators (slice, RELU, PAD,
// conv) and the others 3; cached, every stripe has 5 (stripe 0: slice,
// RELU, cache, PAD, conv; the middle ones: slice, RELU, concatenation,
// cache, conv; the last: slice, RELU, concatenation, PAD, conv).
func TestApplyGroups(t *testing.T) {
	for _, tc := range []struct {
		k      int
		cached bool
		groups map[int]string // operator index -> line, the group and last concatenations
		ops    int
	}{
		{11, false, map[int]string{
			19: "CONCATENATION " + stripeList(0, 6) + " -> y/group0[1 12 2 1]",
			36: "CONCATENATION " + stripeList(6, 11) + " -> y/group1[1 10 2 1]",
			37: "CONCATENATION y/group0[1 12 2 1] y/group1[1 10 2 1] -> y[1 22 2 1]",
		}, 38},
		{11, true, map[int]string{
			30: "CONCATENATION " + stripeList(0, 6) + " -> y/group0[1 12 2 1]",
			56: "CONCATENATION " + stripeList(6, 11) + " -> y/group1[1 10 2 1]",
			57: "CONCATENATION y/group0[1 12 2 1] y/group1[1 10 2 1] -> y[1 22 2 1]",
		}, 58},
		{15, false, map[int]string{
			25: "CONCATENATION " + stripeList(0, 8) + " -> y/group0[1 16 2 1]",
			48: "CONCATENATION " + stripeList(8, 15) + " -> y/group1[1 14 2 1]",
			49: "CONCATENATION y/group0[1 16 2 1] y/group1[1 14 2 1] -> y[1 30 2 1]",
		}, 50},
		{15, true, map[int]string{
			40: "CONCATENATION " + stripeList(0, 8) + " -> y/group0[1 16 2 1]",
			76: "CONCATENATION " + stripeList(8, 15) + " -> y/group1[1 14 2 1]",
			77: "CONCATENATION y/group0[1 16 2 1] y/group1[1 14 2 1] -> y[1 30 2 1]",
		}, 78},
		{21, false, map[int]string{
			22: "CONCATENATION " + stripeList(0, 7) + " -> y/group0[1 14 2 1]",
			44: "CONCATENATION " + stripeList(7, 14) + " -> y/group1[1 14 2 1]",
			67: "CONCATENATION " + stripeList(14, 21) + " -> y/group2[1 14 2 1]",
			68: "CONCATENATION y/group0[1 14 2 1] y/group1[1 14 2 1] y/group2[1 14 2 1] -> y[1 42 2 1]",
		}, 69},
		{21, true, map[int]string{
			35:  "CONCATENATION " + stripeList(0, 7) + " -> y/group0[1 14 2 1]",
			71:  "CONCATENATION " + stripeList(7, 14) + " -> y/group1[1 14 2 1]",
			107: "CONCATENATION " + stripeList(14, 21) + " -> y/group2[1 14 2 1]",
			108: "CONCATENATION y/group0[1 14 2 1] y/group1[1 14 2 1] y/group2[1 14 2 1] -> y[1 42 2 1]",
		}, 109},
	} {
		halo := graph.HaloRecompute
		if tc.cached {
			halo = graph.HaloCache
		}
		t.Run(fmt.Sprintf("k=%d %s", tc.k, halo), func(t *testing.T) {
			m := groupChain(t, int32(2*tc.k))
			r := graph.StripeRegion{Input: 0, Output: 2, Ops: []int{0, 1}, Rows: EvenRows(int32(2*tc.k), tc.k), Halo: halo}
			require.Equal(t, "y", m.Subgraphs[0].Tensors[2].Name)
			regs := []graph.StripeRegion{r}
			out, err := Apply(m, regs)
			require.NoError(t, err)
			got := describe(out)
			require.Len(t, got, tc.ops)
			for i, line := range tc.groups {
				assert.Equal(t, line, got[i], "operator %d", i)
			}

			// The whole list and the tensors appended, in order: each
			// stripe's, and each group's tensor after its last stripe's.
			var want, names []string
			group := 0
			for j := 0; j < tc.k; j++ {
				ops, ts := groupChainStripe(j, tc.k, tc.cached)
				want, names = append(want, ops...), append(names, ts...)
				if line, ok := tc.groups[len(want)]; ok && len(want) < tc.ops-1 {
					want = append(want, line)
					names = append(names, fmt.Sprintf("y/group%d", group))
					group++
				}
			}
			want = append(want, tc.groups[tc.ops-1])
			assert.Equal(t, len(tc.groups)-1, group, "a group concatenation after the last stripe of each group")
			assert.Equal(t, want, got)
			var appended []string
			for _, ts := range out.Subgraphs[0].Tensors[len(m.Subgraphs[0].Tensors):] {
				appended = append(appended, ts.Name)
			}
			assert.Equal(t, names, appended)

			// The group concatenations: version 2 (INT8), axis 1, no
			// activation; their tensors carry y's type and quantization,
			// buffer 0.
			sg := &out.Subgraphs[0]
			y := m.Subgraphs[0].Tensors[2]
			for i := range tc.groups {
				op := &sg.Ops[i]
				assert.Equal(t, opConcatenation, op.Code)
				assert.Equal(t, int32(2), op.Version)
				assert.Equal(t, concatenationOptions(1), op.Options)
				o := &sg.Tensors[op.Outputs[0]]
				assert.Equal(t, y.Type, o.Type)
				assert.Equal(t, y.Quantization, o.Quantization)
				assert.Equal(t, graph.BufferIndex(0), o.Buffer)
			}
			assert.Equal(t, graph.TensorID(2), sg.Ops[tc.ops-1].Outputs[0], "the last concatenation writes y")

			// Nothing of a is computed twice with cached halos; the
			// stripes compute y once either way (RELU has no MACs).
			assert.Equal(t, int64(0), regs[0].ExtraMACs)
			assert.Equal(t, int64(2*tc.k*2*3), regs[0].MACs)
			// Measure agrees.
			meas, _, err := Measure(m, r)
			require.NoError(t, err)
			assert.Equal(t, regs[0].MACs, meas.MACs)
			assert.Equal(t, regs[0].ExtraMACs, meas.ExtraMACs)
		})
	}
}

// TestApplyGroupsLimit: 100 stripes are 10 groups of 10, each group and
// the last concatenation within TFLM's 10 inputs; 101 are refused, by
// Apply and Measure alike, naming the count and the limit; 10 stripes
// are one CONCATENATION and no group.
func TestApplyGroupsLimit(t *testing.T) {
	m := groupChain(t, 120)
	r := graph.StripeRegion{Input: 0, Output: 2, Ops: []int{0, 1}, Halo: graph.HaloCache}
	concats := func(out *graph.Model) (groups []int, last []graph.TensorID) {
		for _, op := range out.Subgraphs[0].Ops {
			if op.Code != opConcatenation {
				continue
			}
			if name := out.Subgraphs[0].Tensors[op.Outputs[0]].Name; strings.HasPrefix(name, "y/group") {
				groups = append(groups, len(op.Inputs))
			} else if name == "y" {
				last = op.Inputs
			}
		}
		return groups, last
	}

	r.Rows = EvenRows(120, 100) // 20 stripes of 2 rows, 80 of 1
	for _, halo := range []graph.Halo{graph.HaloRecompute, graph.HaloCache} {
		r.Halo = halo
		if halo == graph.HaloCache {
			// One-row stripes of this chain compute no new row of a with
			// cached halos where the stripe before reaches a's last row:
			// the last stripe; it gets two rows.
			r.Rows = append(EvenRows(118, 99), [2]int32{118, 120})
		}
		out, err := Apply(m, []graph.StripeRegion{r})
		require.NoError(t, err, "halo %s", halo)
		groups, last := concats(out)
		assert.Equal(t, []int{10, 10, 10, 10, 10, 10, 10, 10, 10, 10}, groups, "halo %s", halo)
		require.Len(t, last, 10)
		for n, id := range last {
			assert.Equal(t, fmt.Sprintf("y/group%d", n), out.Subgraphs[0].Tensors[id].Name)
		}
	}

	r.Rows = EvenRows(120, 10)
	out, err := Apply(m, []graph.StripeRegion{r})
	require.NoError(t, err)
	groups, last := concats(out)
	assert.Empty(t, groups)
	require.Len(t, last, 10)
	assert.Equal(t, "y/stripe9", out.Subgraphs[0].Tensors[last[9]].Name)

	r.Rows = EvenRows(120, 101)
	const want = `101 stripes, not between 2 and 100: TFLM's CONCATENATION takes at most 10 inputs, so the stripes are joined in at most 10 groups of at most 10`
	_, err = Apply(m, []graph.StripeRegion{r})
	assert.EqualError(t, err, `stripe: region 0 (subgraph 0, 0 -> 2): `+want)
	_, _, err = Measure(m, r)
	assert.EqualError(t, err, `stripe: region (subgraph 0, 0 -> 2): `+want)
}
