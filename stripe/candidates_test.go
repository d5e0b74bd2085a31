package stripe

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/tflite"
)

func TestCandidates(t *testing.T) {
	relu := graph.Opcode(19)
	cases := []struct {
		name  string
		build func(t *testing.T) *graph.Model
		want  []graph.StripeRegion
	}{
		{
			// x -> conv a (op 0) -> conv b (op 1) -> ADD(b, x) y (op 2).
			// Ending at y only X = x works: from a or b the ADD would read
			// x from outside.
			name: "residual",
			build: func(t *testing.T) *graph.Model {
				b := newMB()
				x := b.act("x", []int32{1, 6, 4, 2}, -3)
				a := b.conv("a", x, []int32{1, 6, 4, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
				bb := b.conv("b", a, []int32{1, 6, 4, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
				y := b.act("y", []int32{1, 6, 4, 2}, 1)
				b.op(0, nil, []graph.TensorID{bb, x}, y)
				return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
			},
			want: []graph.StripeRegion{
				{Input: 0, Output: 1, Ops: []int{0}},
				{Input: 0, Output: 4, Ops: []int{0, 1}},
				{Input: 1, Output: 4, Ops: []int{1}},
				{Input: 0, Output: 7, Ops: []int{0, 1, 2}},
			},
		},
		{
			// x -> conv a (op 0) -> conv b (op 1); a -> RELU c (op 2): a is
			// read by both, so no region holds a as an intermediate.
			name: "fork",
			build: func(t *testing.T) *graph.Model {
				b := newMB()
				x := b.act("x", []int32{1, 6, 4, 2}, -3)
				a := b.conv("a", x, []int32{1, 6, 4, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
				bb := b.conv("b", a, []int32{1, 6, 4, 2}, 3, 3, same(graph.PaddingSame, 1, 1), false)
				c := b.act("c", []int32{1, 6, 4, 2}, -3)
				b.op(relu, nil, []graph.TensorID{a}, c)
				return b.model(t, []graph.TensorID{x}, []graph.TensorID{bb, c})
			},
			want: []graph.StripeRegion{
				{Input: 0, Output: 1, Ops: []int{0}},
				{Input: 1, Output: 4, Ops: []int{1}},
				{Input: 1, Output: 7, Ops: []int{2}},
			},
		},
		{
			// x -> RESHAPE r (op 0) -> conv y (op 1): the chain starts at r.
			name: "after a non-row-local operator",
			build: func(t *testing.T) *graph.Model {
				b := newMB()
				x := b.act("x", []int32{1, 4, 4, 2}, -3)
				shape := b.int32s("shape", []int32{4}, 1, 4, 4, 2)
				r := b.act("r", []int32{1, 4, 4, 2}, -3)
				b.op(graph.Reshape, nil, []graph.TensorID{x, shape}, r)
				y := b.conv("y", r, []int32{1, 4, 4, 2}, 1, 1, same(graph.PaddingValid, 1, 1), false)
				return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
			},
			want: []graph.StripeRegion{{Input: 2, Output: 3, Ops: []int{1}}},
		},
		{
			// A 1-row output cannot be split.
			name: "one row",
			build: func(t *testing.T) *graph.Model {
				b := newMB()
				x := b.act("x", []int32{1, 3, 4, 2}, -3)
				y := b.conv("y", x, []int32{1, 1, 4, 2}, 3, 1, same(graph.PaddingValid, 1, 1), false)
				return b.model(t, []graph.TensorID{x}, []graph.TensorID{y})
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.build(t)
			got := Candidates(m)
			assert.Equal(t, tc.want, got)
			for _, r := range got {
				r.Rows = EvenRows(m.Tensor(r.Subgraph, r.Output).Shape[1], 2)
				_, err := Apply(m, []graph.StripeRegion{r})
				assert.NoError(t, err, "candidate %+v", r)
			}
		})
	}
}

// TestCandidatesCorpus: on the largest corpus models Candidates is quick,
// and every candidate it returns is one Apply accepts with two stripes.
func TestCandidatesCorpus(t *testing.T) {
	dir := corpus.Require(t)
	for _, f := range []string{"tflite-micro/mobilenet_v2_quantized_1x3x224x224.tflite", "tflite-micro/custom_model_rf_keras.tflite"} {
		t.Run(f, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, "corpus", f))
			require.NoError(t, err)
			m, err := tflite.Load(data)
			require.NoError(t, err)
			start := time.Now()
			c := Candidates(m)
			t.Logf("%d candidates in %v", len(c), time.Since(start))
			require.NotEmpty(t, c)
			if testing.Short() {
				c = c[:min(len(c), 20)]
			}
			for _, r := range c {
				r.Rows = EvenRows(m.Tensor(r.Subgraph, r.Output).Shape[1], 2)
				_, err := Apply(m, []graph.StripeRegion{r})
				require.NoError(t, err, "candidate %+v", r)
			}
		})
	}
}

func TestEvenRows(t *testing.T) {
	cases := []struct {
		h    int32
		k    int
		want [][2]int32
	}{
		{10, 3, [][2]int32{{0, 4}, {4, 7}, {7, 10}}},
		{4, 4, [][2]int32{{0, 1}, {1, 2}, {2, 3}, {3, 4}}},
		{112, 2, [][2]int32{{0, 56}, {56, 112}}},
		{7, 1, [][2]int32{{0, 7}}},
		{3, 4, nil},
		{5, 0, nil},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, EvenRows(tc.h, tc.k), "EvenRows(%d, %d)", tc.h, tc.k)
	}
}

func TestMACs(t *testing.T) {
	cases := geometryCases()
	// By hand: conv 3x3 s2 7x5x2 -> 4x3x3: 4*3*3 outputs * 3*3*2 taps;
	// depthwise 3x3 8x4x2: 8*4*2 * 9; the residual chain: two 3x3 convs
	// 6x4x2 -> 6x4x2: 2 * 6*4*2 * 18; PAD + conv 3x3 1 -> 1 channel,
	// 3x2 outputs: 3*2*9; the max pool: 0; MIRROR_PAD (0) + conv 3x3 2 -> 3
	// channels, 8x4 outputs: 8*4*3 * 18, twice.
	want := []int64{4 * 3 * 3 * 18, 8 * 4 * 2 * 9, 2 * 6 * 4 * 2 * 18, 3 * 2 * 9, 0, 8 * 4 * 3 * 18, 8 * 4 * 3 * 18}
	for i, tc := range cases {
		m := tc.build(t)
		assert.Equal(t, want[i], ModelMACs(m), tc.name)
	}
	m := cases[2].build(t)
	assert.Equal(t, int64(6*4*2*18), OpMACs(m, 0, &m.Subgraphs[0].Ops[0]))
	assert.Zero(t, OpMACs(m, 0, &m.Subgraphs[0].Ops[2]), "ADD")
}
