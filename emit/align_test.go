package emit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// TestCAlignmentPadding checks that a constant arena mostly made of the
// padding a large bank alignment puts between constants is refused before
// any C is written (C compilers hold every element of an initializer in
// memory), and that one whose padding stays small is written.
func TestCAlignmentPadding(t *testing.T) {
	tests := []struct {
		name  string
		align int64
		err   string
	}{
		{"4 KiB apart", 1 << 12, ""},
		{"1 MiB apart", 1 << 20, "emit: constant arena constant_flash is 3145728 bytes for 37 bytes of data: its alignment 1048576 pads " +
			"every constant and the C initializer would spell out the zeros; lower the alignment of bank FLASH"},
		{"the largest alignment", plan.MaxAlignment, "emit: constant arena constant_flash is 805306368 bytes for 37 bytes of data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := denseModel()
			lt, err := liveness.Analyze(m, liveness.Options{})
			require.NoError(t, err)
			platform := plan.Platform{Name: "aligned", Banks: []plan.Bank{
				{Name: "SRAM", Writable: true}, {Name: "FLASH", Alignment: tt.align}}}
			p, err := plan.Build(context.Background(), m, lt, plan.Options{Platform: &platform})
			require.NoError(t, err)
			_, err = emit.C(m, p, emit.COptions{Meta: emit.Meta{ModelName: "dense"}})
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.err)
		})
	}
}
