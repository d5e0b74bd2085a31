package driver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParsePatchMACs: --patch-macs takes a percentage or a fraction of the
// model's MACs, and nothing outside 0..100 %.
func TestParsePatchMACs(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
	}{{"10%", 0.10}, {"2.5%", 0.025}, {" 25 % ", 0.25}, {"0.1", 0.1}, {"1", 1}, {"0", 0}, {"100%", 1}} {
		got, err := ParsePatchMACs(tt.in)
		require.NoError(t, err, tt.in)
		assert.InDelta(t, tt.want, got, 1e-12, tt.in)
	}
	for _, in := range []string{"", "ten", "10%%", "-1%", "150%", "1.5", "NaN"} {
		_, err := ParsePatchMACs(in)
		assert.Error(t, err, in)
	}
}
