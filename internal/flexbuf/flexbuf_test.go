package flexbuf

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// handMap is a map {"a": 3, "b": -2} written by hand with 1-byte values:
// the keys, the keys vector (length 2, offsets back to "a" and "b"), the
// map's prefix (keys offset 3, keys width 1, length 2), its values and
// types (INT, width 1), then the root (offset 3, MAP width 1, width 1).
var handMap = []byte{
	'a', 0, 'b', 0, // keys at 0 and 2
	2, 5, 4, // keys vector at 5: length 2 at 4, offsets 5-0 and 6-2
	2, 1, 2, // at 7: keys offset 7-5, keys width 1, length 2
	3, 0xfe, // values at 10
	1 << 2, 1 << 2, // types
	4, 9 << 2, 1, // root: 14-4=10, MAP width 1, root width 1
}

func TestReadMap(t *testing.T) {
	enc, err := EncodeMap([]Entry{{"x_scale", float32(10)}, {"max_detections", 3}, {"use_regular_nms", true}, {"n", int64(-70000)}})
	require.NoError(t, err)
	cases := []struct {
		name string
		b    []byte
		want map[string]float64 // key -> value; ints as floats
		err  bool
	}{
		{"by hand", handMap, map[string]float64{"a": 3, "b": -2}, false},
		{"encoded", enc, map[string]float64{"max_detections": 3, "n": -70000, "use_regular_nms": 1, "x_scale": 10}, false},
		{"short", []byte{1, 2}, nil, true},
		{"not a map", []byte{5, 1 << 2, 1}, nil, true},
		{"offset before the start", append([]byte{}, append(handMap[:len(handMap)-3:len(handMap)-3], 200, 9<<2, 1)...), nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := ReadMap(c.b)
			if c.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, len(c.want), m.Len())
			for k, want := range c.want {
				v, ok, err := m.Get(k)
				require.NoError(t, err)
				require.True(t, ok, k)
				assert.Equal(t, want, v.Float(), k)
				assert.Equal(t, int64(want), v.Int(), k)
			}
			v, ok, err := m.Get("absent")
			assert.NoError(t, err)
			assert.False(t, ok)
			assert.True(t, v.IsNull())
		})
	}
}

func TestEncodeMapRefuses(t *testing.T) {
	for _, es := range [][]Entry{
		{{"a", 1 << 40}},
		{{"a", "text"}},
		{{"a", 1}, {"a", 2}},
	} {
		_, err := EncodeMap(es)
		assert.Error(t, err, "%v", es)
	}
}
