package verify

import (
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// randomMembers returns n allocations of one arena with small random
// offsets, sizes, lifetimes (some missing, some ending before they start),
// classes and model buffers, so that many pairs overlap.
func randomMembers(r *rand.Rand, n int) []*member {
	ps := make([]*member, n)
	for i := range ps {
		p := &member{what: string(rune('a' + i%26)), size: r.Int64N(5)}
		p.offset = r.Int64N(12)
		if r.IntN(10) > 0 {
			s := r.Int64N(10)
			e := s + r.Int64N(4) - 1 // now and then before the start
			p.live = &lifetime{start: s, end: e}
		}
		ps[i] = p
	}
	for _, p := range ps {
		if r.IntN(3) > 0 {
			q := ps[r.IntN(n)]
			p.class, p.group = q, q.key
		}
		if r.IntN(2) > 0 {
			p.t = &graph.Tensor{Buffer: graph.BufferIndex(r.IntN(3))}
		}
	}
	return ps
}

// TestOverlapPairsMatchNaive checks the pair sweep against every pair: the
// checks of an arena report the same violations, in the same order.
func TestOverlapPairsMatchNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		ps := randomMembers(r, 1+r.IntN(30))
		for _, role := range []string{roleScratch, rolePersistent, roleConstant} {
			var naive, sweep report
			c := &checker{r: &naive}
			for i, p := range ps {
				for _, q := range ps[i+1:] {
					c.checkPair("arena", role, p, q)
				}
			}
			c.r = &sweep
			for _, pq := range c.overlapPairs(role, ps) {
				c.checkPair("arena", role, ps[pq[0]], ps[pq[1]])
			}
			require.Equal(t, naive, sweep, "trial %d, %s arena", trial, role)
		}
	}
}

// TestWidthsMatchWidthAt checks the width sweep against widthAt at every
// step.
func TestWidthsMatchWidthAt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		ps := randomMembers(r, 1+r.IntN(20))
		b := &buffer{align: 4, members: ps}
		for range ps {
			b.at = append(b.at, r.Int64N(16)-4)
		}
		var steps []int64
		for s := int64(-1); s < 14; s++ {
			steps = append(steps, s)
		}
		var work int64
		got := b.widths(steps, &work)
		for i, s := range steps {
			assert.Equal(t, b.widthAt(s), got[i], "trial %d, step %d", trial, s)
		}
	}
}

// TestTableRowMatchesRegexp checks tableRow against cRowRe.
func TestTableRowMatchesRegexp(t *testing.T) {
	for _, text := range []string{"{1, 2},", "{1, 2}, /* x */", "{}, /**/", "{1}, /*/", "{1},/* x */", "{1}, /* x */ y",
		"{1}", "{1},", "{1, {2}},", "{1}} ,", "x{1},", "{1}, /* a */ /* b */", "{a}, /*", "{1},x", "{", "{}", "{},", ""} {
		m := cRowRe.FindStringSubmatch(text)
		body, ok := tableRow(text)
		assert.Equal(t, m != nil, ok, "%q", text)
		if m != nil && ok {
			assert.Equal(t, m[1], body, "%q", text)
		}
	}
}

// TestOutOfOrderMatchesNaive checks outOfOrder against every pair.
func TestOutOfOrderMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	c := &checker{}
	for trial := range 500 {
		n := 1 + r.IntN(12)
		ops := make([]graph.OpIndex, n)
		pos := make([]int, n)
		writes := map[graph.OpIndex]bool{}
		for i := range ops {
			ops[i] = graph.OpIndex(i)
			pos[i] = i
			if r.IntN(4) == 0 {
				writes[ops[i]] = true
			}
		}
		if r.IntN(4) > 0 {
			r.Shuffle(n, func(i, j int) { pos[i], pos[j] = pos[j], pos[i] })
		}
		stateful := r.IntN(3) == 0
		var naive [][2]int
		for i, a := range ops {
			for j := i + 1; j < n; j++ {
				if b := ops[j]; pos[a] > pos[b] && (stateful || writes[a] || writes[b]) {
					naive = append(naive, [2]int{i, j})
				}
			}
		}
		assert.Equal(t, naive, c.outOfOrder(ops, pos, stateful, writes), "trial %d", trial)
	}
}

// TestFastJSONMatchesDecoder checks fastJSON against encoding/json's
// Decoder with UseNumber on the plans of testdata and on documents it
// must leave to encoding/json (reporting false) or read alike.
func TestFastJSONMatchesDecoder(t *testing.T) {
	docs := []string{`{}`, `[]`, ` {"a": [1, -0, 2.5e-3, 1E+2, true, false, null, "x y"], "a": {}} `, `"s"`, `0`,
		`{"a": 01}`, `{"a": "\u00e9"}`, `{"a": "é"}`, `{"a": 1,}`, `[1 2]`, `{"a" 1}`, `{} x`, ``, `-`, `1.`, `1e`, `nul`,
		`{"a": [1, {"b": [[], {}]}]}`, "{\"a\":\t\r\n1}", `{"a": "tab	in"}`, `[-1.0e5, 0.0, 10]`}
	paths, err := filepath.Glob("testdata/*.json")
	require.NoError(t, err)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		docs = append(docs, string(data))
	}
	for _, doc := range docs {
		var want any
		dec := json.NewDecoder(strings.NewReader(doc))
		dec.UseNumber()
		err := dec.Decode(&want)
		if err == nil {
			if _, terr := dec.Token(); terr != io.EOF {
				err = errors.New("data after the value")
			}
		}
		got, dup, ok := fastJSON([]byte(doc))
		if dup != nil && err == nil {
			assert.Equal(t, dup, duplicateKey([]byte(doc)), "%.80q: fastJSON's duplicate key is not the token pass's", doc)
		}
		if !ok {
			continue // left to encoding/json
		}
		require.NoError(t, err, "fastJSON read %q, encoding/json does not", doc)
		assert.Equal(t, want, got, "%.80q", doc)
		assert.Nil(t, duplicateKey([]byte(doc)), "%.80q", doc)
	}
	ok := 0
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		if _, _, k := fastJSON(data); k {
			ok++
		}
	}
	assert.Positive(t, ok, "fastJSON reads heliac's plans")
}
