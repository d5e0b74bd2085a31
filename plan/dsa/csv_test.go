package dsa

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCSVRoundTrip writes random problems with their Greedy solutions and
// reads them back: every buffer comes back pinned at its offset.
func TestCSVRoundTrip(t *testing.T) {
	for seed := range uint64(50) {
		p := randomProblem(seed, seed%2 == 0)
		s, err := Greedy(context.Background(), p)
		require.NoError(t, err, "seed %d", seed)
		var ids []string
		if seed%3 != 0 { // nil ids are written as indices
			for i := range p.Buffers {
				ids = append(ids, fmt.Sprintf("t%d,\"x\"", i)) // needs quoting
			}
		}
		var out bytes.Buffer
		require.NoError(t, WriteCSV(&out, p, ids, s), "seed %d", seed)
		q, gotIDs, err := ReadCSV(bytes.NewReader(out.Bytes()))
		require.NoError(t, err, "seed %d", seed)
		require.Len(t, q.Buffers, len(p.Buffers), "seed %d", seed)
		for i, b := range p.Buffers {
			want := b
			want.Fixed = ptr(s.Offsets[i])
			if want.Align == 1 && q.Buffers[i].Align == 0 {
				want.Align = 0 // no alignment column: Align 0 and 1 both mean none
			}
			assert.Equal(t, want, q.Buffers[i], "seed %d buffer %d", seed, i)
			if ids == nil {
				assert.Equal(t, fmt.Sprint(i), gotIDs[i])
			}
		}
		if ids != nil {
			assert.Equal(t, ids, gotIDs, "seed %d", seed)
		}
		// The pinned problem solves to the same offsets, and writes the same bytes.
		s2, err := Greedy(context.Background(), q)
		require.NoError(t, err, "seed %d", seed)
		assert.Equal(t, s, s2, "seed %d", seed)
		var again bytes.Buffer
		require.NoError(t, WriteCSV(&again, q, gotIDs, s2))
		assert.Equal(t, out.String(), again.String(), "seed %d", seed)
	}
}

// TestWriteCSVProblem writes a problem with no solution: the offset column
// carries the pinned offsets, and is left out when nothing is pinned.
func TestWriteCSVProblem(t *testing.T) {
	cases := []struct {
		name string
		p    Problem
		want string
	}{
		{"empty", Problem{}, "id,lower,upper,size\n"},
		{"plain", Problem{Buffers: []Buffer{buf(0, 2, 4), {Start: 1, End: 3, Size: 8, Align: 1}}},
			"id,lower,upper,size\n0,0,2,4\n1,1,3,8\n"},
		{"aligned and pinned", Problem{Buffers: []Buffer{{Start: 0, End: 2, Size: 4, Align: 4}, {Start: 1, End: 3, Size: 8, Fixed: ptr(16)}}},
			"id,lower,upper,size,alignment,offset\n0,0,2,4,4,\n1,1,3,8,0,16\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, WriteCSV(&out, tc.p, nil, Solution{}))
			assert.Equal(t, tc.want, out.String())
			q, _, err := ReadCSV(&out)
			require.NoError(t, err)
			assert.Equal(t, len(tc.p.Buffers), len(q.Buffers))
			for i, b := range q.Buffers {
				assert.Equal(t, tc.p.Buffers[i].Fixed, b.Fixed)
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestWriteCSVErrors checks mismatched lengths and writer failures.
func TestWriteCSVErrors(t *testing.T) {
	p := Problem{Buffers: []Buffer{buf(0, 1, 4), buf(0, 1, 4)}}
	var out bytes.Buffer
	assert.EqualError(t, WriteCSV(&out, p, []string{"a"}, Solution{}), "dsa: csv: 1 ids for 2 buffers")
	assert.EqualError(t, WriteCSV(&out, p, nil, Solution{Offsets: []int64{0}}), "dsa: csv: 1 offsets for 2 buffers")
	assert.EqualError(t, WriteCSV(failWriter{}, p, nil, Solution{}), "dsa: csv: disk full")
}

// TestReadCSV reads the header variants MiniMalloc accepts.
func TestReadCSV(t *testing.T) {
	cases := []struct {
		name, in string
		want     []Buffer
		ids      []string
	}{
		{"minimal", "id,lower,upper,size\na,0,2,4\n", []Buffer{buf(0, 2, 4)}, []string{"a"}},
		{"no rows", "id,lower,upper,size\n", nil, nil},
		{"columns in any order", "size,upper,id,lower\n4,2,a,0\n", []Buffer{buf(0, 2, 4)}, []string{"a"}},
		{"inclusive end", "buffer,begin,end,size\nx,0,1,4\n", []Buffer{buf(0, 2, 4)}, []string{"x"}},
		{"aliases", "buffer_id,start,upper,size\nx,3,5,4\n", []Buffer{buf(3, 5, 4)}, []string{"x"}},
		{"spaces, CRLF and blank lines", "id, lower, upper, size\r\n\r\n a , 0 , 2 , 4 \r\n", []Buffer{buf(0, 2, 4)}, []string{"a"}},
		{"alignment and offsets", "id,lower,upper,size,alignment,offset\na,0,2,4,8,\nb,0,2,4,8,16\n",
			[]Buffer{{Start: 0, End: 2, Size: 4, Align: 8}, {Start: 0, End: 2, Size: 4, Align: 8, Fixed: ptr(16)}}, []string{"a", "b"}},
		{"zero-size with no steps", "id,lower,upper,size\nz,5,3,0\n", []Buffer{buf(5, 3, 0)}, []string{"z"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, ids, err := ReadCSV(strings.NewReader(tc.in))
			require.NoError(t, err)
			assert.Equal(t, tc.want, p.Buffers)
			assert.Equal(t, tc.ids, ids)
			assert.Zero(t, p.Capacity)
		})
	}
}

// TestReadCSVErrors checks that malformed input is rejected with its line.
func TestReadCSVErrors(t *testing.T) {
	const head = "id,lower,upper,size\n"
	cases := []struct{ name, in, err string }{
		{"empty", "", "dsa: csv: missing header"},
		{"missing column", "id,lower,upper\n", "dsa: csv line 1: header needs columns id, lower, upper and size"},
		{"unknown column", "id,lower,upper,size,colour\n", `dsa: csv line 1: unknown column "colour"`},
		{"duplicate column", "id,lower,upper,size,size\n", `dsa: csv line 1: column "size" given twice`},
		{"duplicate alias", "id,lower,start,upper,size\n", `dsa: csv line 1: column "start" given twice`},
		{"upper and end", "id,lower,upper,end,size\n", `dsa: csv line 1: columns "upper" and "end" both given`},
		{"gaps", "id,lower,upper,size,gaps\n", `dsa: csv line 1: column "gaps" is not supported`},
		{"short row", head + "a,0,1\n", "dsa: csv line 2: 3 fields, header has 4"},
		{"long row", head + "a,0,1,4,5\n", "dsa: csv line 2: 5 fields, header has 4"},
		{"not an integer", head + "a,0,1,4\nb,0,x,4\n", `dsa: csv line 3: upper: "x" is not an integer`},
		{"first bad field wins", head + "a,y,x,4\n", `dsa: csv line 2: lower: "y" is not an integer`},
		{"line counts blank lines", head + "\na,0,1,4\n\nb,0,1,1.5\n", `dsa: csv line 5: size: "1.5" is not an integer`},
		{"bad offset", "id,lower,upper,size,offset\na,0,1,4,-\n", `dsa: csv line 2: offset: "-" is not an integer`},
		{"negative size", head + "a,0,1,4\nb,0,1,-4\n", "dsa: csv line 3: size -4 is negative"},
		{"empty lifetime", head + "a,2,2,4\n", "dsa: csv line 2: end 2 is not after start 2"},
		{"misaligned offset", "id,lower,upper,size,alignment,offset\na,0,1,4,16,8\n",
			"dsa: csv line 2: pinned offset 8 is not a multiple of alignment 16"},
		{"end out of range", "id,lower,end,size\na,0,9223372036854775807,4\n", "dsa: csv line 2: end: 9223372036854775807 is out of range"},
		{"duplicate id", head + "a,0,1,4\nb,0,1,4\na,0,1,4\n", `dsa: csv line 4: duplicate id "a" (first on line 2)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadCSV(strings.NewReader(tc.in))
			assert.EqualError(t, err, tc.err)
			assert.NotErrorIs(t, err, ErrInfeasible)
		})
	}
	t.Run("bad quoting", func(t *testing.T) {
		// encoding/csv words this error itself; it names the line.
		_, _, err := ReadCSV(strings.NewReader(head + "a,0,1,4\n\"b,0,1,4\n"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "dsa: csv: parse error on line 3")
	})
}
