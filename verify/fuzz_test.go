package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzPlan feeds mutated plans to Plan, which must never panic, and must
// call every result a violation of a valid Kind.
func FuzzPlan(f *testing.F) {
	names := []string{"chain", "while", "variable", "constant", "alias", "resource", "banks"}
	for i, name := range names {
		data, err := os.ReadFile(filepath.Join("testdata", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), data)
	}
	f.Fuzz(func(t *testing.T, model uint8, data []byte) {
		m := mustModel(names[int(model)%len(names)])
		for _, v := range Plan(m, data) {
			if strings.HasPrefix(v.Kind.String(), "Kind(") {
				t.Fatalf("invalid kind in %v", v)
			}
		}
	})
}

// FuzzBlocks checks that Blocks never panics.
func FuzzBlocks(f *testing.F) {
	f.Add(int64(0), int64(2), int64(16), int64(0), int64(16), int64(2), int64(4), int64(16), int64(8), int64(16), int64(64))
	f.Fuzz(func(t *testing.T, s0, e0, z0, o0, a0, s1, e1, z1, o1, a1, capacity int64) {
		Blocks([]Block{{s0, e0, z0, o0, a0}, {s1, e1, z1, o1, a1}}, capacity)
	})
}
