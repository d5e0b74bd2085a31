package driver_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/plan"
)

// writeSharedSet compiles three bundled models as one set on apollo510
// and writes every file of it into a new directory, which it returns.
func writeSharedSet(t *testing.T) string {
	t.Helper()
	apollo, err := plan.BuiltinPlatform("apollo510")
	require.NoError(t, err)
	var models []driver.Model
	for _, name := range []string{"keyword_scrambled_8bit", "hello_world_int8", "micro_speech_quantized"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "models", name+".tflite"))
		require.NoError(t, err)
		cfg := testConfig(name)
		cfg.Plan.Platform = &apollo
		models = append(models, driver.Model{Data: data, Config: cfg})
	}
	set, err := driver.CompileSet(context.Background(), models)
	require.NoError(t, err)
	require.Len(t, set.Shared, 2)
	dir := t.TempDir()
	for _, o := range set.Outputs {
		for _, f := range o.Files() {
			require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644))
		}
	}
	for _, f := range set.Shared {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644))
	}
	return dir
}

// TestVerifyShared: heliac verify DIR checks the set's shared module
// against the plans on its own; each tampering is seen, with what is
// wrong.
func TestVerifyShared(t *testing.T) {
	const h, c = "heliac_shared.h", "heliac_shared.c"
	tests := []struct {
		name     string
		file     string
		old, new string // the first match of the regexp old in file becomes new
		remove   string // a file to remove instead
		want     string
	}{
		{"a buffer shrunk to 16 B", h, `_SCRATCH_DTCM_SIZE \d+u`, "_SCRATCH_DTCM_SIZE 16u", "", "HELIAC_SHARED_SCRATCH_DTCM_SIZE is 16u, but shared arena scratch_dtcm has shared_size"},
		{"an alignment too small", h, "_SCRATCH_DTCM_ALIGNMENT 16u", "_SCRATCH_DTCM_ALIGNMENT 8u", "", "HELIAC_SHARED_SCRATCH_DTCM_ALIGNMENT is 8, not a multiple of the alignment 16"},
		{"no declaration", h, "extern uint8_t heliac_shared_scratch_dtcm", "extern uint8_t other_scratch_dtcm", "", "no declaration extern uint8_t heliac_shared_scratch_dtcm"},
		{"a buffer missing", c, `uint8_t heliac_shared_scratch_dtcm\[`, "uint8_t heliac_shared_gone[", "", "no definition of heliac_shared_scratch_dtcm"},
		{"another section", c, "_PUT_IN_DTCM uint8_t", "_PUT_IN_SRAM uint8_t", "", "placed by KEYWORD_SCRAMBLED_8BIT_PUT_IN_SRAM, but shared arena scratch_dtcm is in memory DTCM"},
		{"a model not bound", c, `if \(hello_world_int8_bind_arena`, "if (hello_world_int8_unbind_arena", "", "does not bind heliac_shared_scratch_dtcm to arena scratch_dtcm of hello_world_int8"},
		{"the wrong size bound", c, `sizeof heliac_shared_scratch_dtcm\)`, "sizeof heliac_shared_other)", "", "binds heliac_shared_scratch_dtcm with the size of heliac_shared_other"},
		{"the source missing", "", "", "", c, "heliac_shared.h or heliac_shared.c is missing"},
		{"a plan that shares nothing", "hello_world_int8.plan.json", `"provider": "shared"`, `"provider": "owned"`, "", "hello_world_int8, whose plan shares no arena scratch_dtcm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeSharedSet(t)
			path, err := driver.VerifyShared(dir)
			require.NoError(t, err, "the set as written verifies")
			assert.Equal(t, filepath.Join(dir, c), path)
			if tt.remove != "" {
				require.NoError(t, os.Remove(filepath.Join(dir, tt.remove)))
			} else {
				p := filepath.Join(dir, tt.file)
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				re := regexp.MustCompile(tt.old)
				loc := re.FindIndex(data)
				require.NotNil(t, loc, tt.old)
				data = append(append(data[:loc[0]:loc[0]], tt.new...), data[loc[1]:]...)
				require.NoError(t, os.WriteFile(p, data, 0o644))
			}
			_, err = driver.VerifyShared(dir)
			var verr *driver.VerifyError
			require.ErrorAs(t, err, &verr)
			assert.Contains(t, err.Error(), tt.want)
		})
	}

	// A directory of models alone has no shared module to check.
	dir := t.TempDir()
	model, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	out, err := driver.Compile(context.Background(), model, testConfig("hello_world_int8"))
	require.NoError(t, err)
	for _, f := range out.Files() {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644))
	}
	path, err := driver.VerifyShared(dir)
	assert.NoError(t, err)
	assert.Empty(t, path)
}
