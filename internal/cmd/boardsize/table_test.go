package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The table has a row per model and kernel build of the figures file, with the figures
// of the right program in each column.
func TestTable(t *testing.T) {
	figures := `model=hello_world_int8.tflite
rules=/x/stage-none.yaml
kernels=cmsis-nn
flash_bytes.heliac=42972
flash_bytes.tflm=64224
flash_vs_tflm=-33.1%
ram_bytes.heliac=4576 arenas=176 program=4400 data=8
ram_bytes.tflm=7412 arena_used=628 program=6784 data=8
ram_vs_tflm=-38.3%
staged_constant_bytes.heliac=144
ram_vs_tflm_unstaged=-40.2%
insns_per_inference.heliac=1234567 n_k=1015000 n_k1=2249567
insns_per_inference.tflm=2000000 n_k=2000000 n_k1=4000000
insns_vs_tflm=-38.3%
model=zero
flash_bytes.heliac=1
`
	path := filepath.Join(t.TempDir(), "figures")
	require.NoError(t, os.WriteFile(path, []byte(figures), 0o644))
	var b strings.Builder
	require.NoError(t, run([]string{"-table", path}, &b))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 7)
	assert.Equal(t, []string{
		"geometric mean of heliac/TFLM instructions per inference, kernels cmsis-nn: 0.6173 (-38.27%) over 1 models",
		"heliac below TFLM in instructions, RAM and flash on every model",
	}, lines[5:7])
	assert.Equal(t, "| hello_world_int8.tflite | cmsis-nn | 42972 (-33.1%) | 64224 | 4576 (-38.3%; 176 + 4400) | 7412 (628 + 6784) | 144 | 1,234,567 (-38.27%) | 2,000,000 |", lines[2])
	assert.True(t, strings.HasPrefix(lines[3], "| zero | - | 1 (-) | 0 |"), lines[3])
	assert.True(t, strings.HasSuffix(lines[3], "| - | - |"), lines[3])

	_, err := readFigures(strings.NewReader("flash_bytes.heliac=1\n"))
	assert.Error(t, err, "figures before a model= line")

	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 6684527: "6,684,527", 533004123: "533,004,123"} {
		assert.Equal(t, want, grouped(n))
	}
}

// The summary names every row where heliac is not below TFLM, with both
// figures, and the geometric mean is over the rows with both counts.
func TestSummary(t *testing.T) {
	rows, err := readFigures(strings.NewReader(`model=a
kernels=reference
flash_bytes.heliac=90
flash_bytes.tflm=100
ram_bytes.heliac=100 arenas=1 program=99
ram_bytes.tflm=100 arena_used=1 program=99
insns_per_inference.heliac=2000
insns_per_inference.tflm=1000
model=b
kernels=reference
insns_per_inference.heliac=500
insns_per_inference.tflm=1000
`))
	require.NoError(t, err)
	var b strings.Builder
	summary(rows, &b)
	assert.Equal(t, `
geometric mean of heliac/TFLM instructions per inference, kernels reference: 1.0000 (+0.00%) over 2 models
not below TFLM: a (reference): instructions 2,000 vs 1,000 (+100.00%), RAM 100 vs 100 (+0.00%)
`, b.String())
}
