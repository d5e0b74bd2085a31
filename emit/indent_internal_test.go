package emit

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIndentJSON checks indentJSON against the Encoder's own indenting on
// random values: nested objects and arrays, empty ones, and strings full of
// the characters indenting looks for, quotes and backslashes.
func TestIndentJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	pieces := []string{"a", `"`, `\`, "{", "}", "[", "]", ",", ":", " ", "\n", "\u00e9", "<&>", `\"`}
	var value func(depth int) any
	value = func(depth int) any {
		switch k := r.IntN(7); {
		case depth > 4 || k == 0:
			s := ""
			for range r.IntN(6) {
				s += pieces[r.IntN(len(pieces))]
			}
			return s
		case k == 1:
			return r.IntN(1000) - 500
		case k == 2:
			return nil
		case k == 3:
			return r.IntN(2) == 0
		case k < 5:
			a := []any{}
			for range r.IntN(4) {
				a = append(a, value(depth+1))
			}
			return a
		}
		m := map[string]any{}
		for range r.IntN(4) {
			m[pieces[r.IntN(len(pieces))]+"k"] = value(depth + 1)
		}
		return m
	}
	for range 2000 {
		v := value(0)
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(v))
		got, err := encodeJSON(v)
		require.NoError(t, err)
		require.Equal(t, want.String(), string(got))
	}
}
