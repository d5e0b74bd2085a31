package dsa

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
)

// funcID identifies a Strategy; functions are not comparable with ==.
func funcID(s Strategy) uintptr { return reflect.ValueOf(s).Pointer() }

func TestLookup(t *testing.T) {
	tests := []struct {
		lookup string
		name   string // canonical name found; "" for none
		run    Strategy
	}{
		{"best", "best", Best},
		{"tflm", "tflm", Greedy},
		{"greedy", "tflm", Greedy},
		{"linear", "linear", Linear},
		{"", "", nil},
		{"Best", "", nil},
		{"magic", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.lookup, func(t *testing.T) {
			got, ok := Lookup(tt.lookup)
			assert.Equal(t, tt.name != "", ok)
			assert.Equal(t, tt.name, got.Name)
			if tt.run != nil {
				assert.Equal(t, funcID(tt.run), funcID(got.Run))
			}
		})
	}
}

// TestStrategies checks the registry itself: every name and alias is
// unique, every entry is documented, and "best" comes first.
func TestStrategies(t *testing.T) {
	all := Strategies()
	assert.Equal(t, "best", all[0].Name)
	assert.Equal(t, []string{"best", "tflm", "linear"}, Names())
	seen := map[string]bool{}
	for _, s := range all {
		assert.NotEmpty(t, s.Doc, s.Name)
		assert.NotNil(t, s.Run, s.Name)
		for _, n := range append([]string{s.Name}, s.Aliases...) {
			assert.False(t, seen[n], "name %q appears twice", n)
			seen[n] = true
		}
	}
	all[0].Name = "changed"
	assert.Equal(t, "best", Strategies()[0].Name, "Strategies returns a copy")
}
