package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The table has a row per model of the figures file, with the figures
// of the right program in each column.
func TestTable(t *testing.T) {
	figures := `model=hello_world_int8.tflite
flash_bytes.heliac=42972
flash_bytes.tflm=64224
flash_vs_tflm=-33.1%
ram_bytes.heliac=4576 arenas=176 program=4400 data=8
ram_bytes.tflm=7412 arena_used=628 program=6784 data=8
ram_vs_tflm=-38.3%
staged_constant_bytes.heliac=144
ram_vs_tflm_unstaged=-40.2%
model=zero
flash_bytes.heliac=1
`
	path := filepath.Join(t.TempDir(), "figures")
	require.NoError(t, os.WriteFile(path, []byte(figures), 0o644))
	var b strings.Builder
	require.NoError(t, run([]string{"-table", path}, &b))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, "| hello_world_int8.tflite | 42972 (-33.1%) | 64224 | 4576 (176 + 4400) | 7412 (628 + 6784) | 144 | 4432 (-40.2%) |", lines[2])
	assert.True(t, strings.HasPrefix(lines[3], "| zero | 1 (-) | 0 |"), lines[3])

	_, err := readFigures(strings.NewReader("flash_bytes.heliac=1\n"))
	assert.Error(t, err, "figures before a model= line")
}
