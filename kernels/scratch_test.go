package kernels_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/tflite"
)

// host is the machine ../shared/bench was measured on: x86_64, 8-byte
// pointers.
var host = kernels.Target{PointerSize: 8}

// TestScratchMatchesTFLM: on every corpus model TFLM runs, the scratch
// tflm-reference says each operator asks for, rounded up to 16 bytes as
// TFLM's planner rounds every buffer, is exactly the kind=scratch rows of
// ../shared/bench/tflm-buffers (allocation scope = operator index + 1),
// operator by operator and in request order; and every operator's
// requests are known.
func TestScratchMatchesTFLM(t *testing.T) {
	shared := corpus.Require(t)
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(shared, "bench", "tflm-buffers", "*.csv"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	byName := map[string]string{}
	for _, e := range corpus.Manifest(t) {
		name := strings.TrimSuffix(strings.TrimSuffix(e.File, ".bin"), ".tflite")
		byName[strings.Replace(name, "/", "_", 1)] = e.Path
	}
	models, withScratch := 0, 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".csv")
		path, ok := byName[name]
		require.True(t, ok, "%s names no corpus model", f)
		t.Run(name, func(t *testing.T) {
			rows, err := corpus.ReadCSV(f)
			require.NoError(t, err)
			want := map[int][]int64{} // op index -> sizes, in request order
			for _, r := range rows {
				if r["kind"] != "scratch" {
					continue
				}
				scope, err := strconv.Atoi(r["first_op"])
				require.NoError(t, err)
				size, err := strconv.ParseInt(r["size_bytes"], 10, 64)
				require.NoError(t, err)
				want[scope-1] = append(want[scope-1], size)
			}
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			m, err := tflite.Load(data)
			require.NoError(t, err)
			got := map[int][]int64{}
			for si, sg := range m.Subgraphs {
				for oi := range sg.Ops {
					op := &sg.Ops[oi]
					req, known := lib.Scratch(m, graph.SubgraphIndex(si), op, host)
					require.True(t, known, "op %d:%d %s: tflm-reference knows what it asks for", si, oi, op.Name())
					// Scopes number subgraph 0's operators only; no
					// corpus model asks for scratch in another.
					require.True(t, si == 0 || len(req) == 0, "op %d:%d asks for scratch outside subgraph 0", si, oi)
					for _, n := range req {
						got[oi] = append(got[oi], (n+15)/16*16)
					}
				}
			}
			assert.Equal(t, want, got)
			models++
			if len(want) > 0 {
				withScratch++
			}
		})
	}
	t.Logf("%d models, %d with kernel scratch", models, withScratch)
	assert.GreaterOrEqual(t, withScratch, 11, "models whose kernels ask for scratch")
}

// scratchModel is one operator of code (or custom name) over tensors.
func scratchModel(code graph.Opcode, custom string, tensors []graph.Tensor, inputs []graph.TensorID, outputs ...graph.TensorID) (*graph.Model, *graph.Op) {
	op := graph.Op{Code: code, CustomName: custom, Inputs: inputs, Outputs: outputs}
	m := &graph.Model{Subgraphs: []graph.Subgraph{{Tensors: tensors, Ops: []graph.Op{op}}}, Buffers: []graph.Buffer{{}}}
	return m, &m.Subgraphs[0].Ops[0]
}

// TestScratchRules checks each rule of tflm-reference on an operator made
// by hand, the sizes worked out from the kernels' formulas.
func TestScratchRules(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	lstmInputs := make([]int, 24)
	for i := range lstmInputs {
		lstmInputs[i] = -1
	}
	lstmInputs[0], lstmInputs[18], lstmInputs[19] = 0, 1, 2
	tests := []struct {
		name   string
		code   graph.Opcode
		custom string
		ts     []graph.Tensor
		in     []int
		target kernels.Target
		want   []int64
		known  bool
	}{
		{"CONV_2D with INT4 filters unpacks them", 3, "", []graph.Tensor{tensor(graph.Int8, 1, 4, 4, 2), tensor(graph.Int4, 3, 3, 3, 2), tensor(graph.Int8, 1, 4, 4, 3)},
			[]int{0, 1}, kernels.CortexM, []int64{54}, true},
		{"CONV_2D with INT8 filters asks for nothing", 3, "", []graph.Tensor{tensor(graph.Int8, 1, 4, 4, 2), tensor(graph.Int8, 3, 3, 3, 2), tensor(graph.Int8, 1, 4, 4, 3)},
			[]int{0, 1}, kernels.CortexM, nil, true},
		{"TRANSPOSE_CONV INT8: int32 accumulators", 67, "", []graph.Tensor{tensor(graph.Int32, 4), tensor(graph.Int8, 8, 3, 3, 4), tensor(graph.Int8, 1, 2, 2, 4), tensor(graph.Int8, 1, 4, 4, 8)},
			[]int{0, 1, 2}, kernels.CortexM, []int64{4 * 128}, true},
		{"TRANSPOSE_CONV INT16 with an INT16 bias: int64 accumulators, the bias widened", 67, "", []graph.Tensor{tensor(graph.Int32, 4), tensor(graph.Int8, 8, 3, 3, 4), tensor(graph.Int16, 1, 2, 2, 4), tensor(graph.Int16, 8), tensor(graph.Int16, 1, 4, 4, 8)},
			[]int{0, 1, 2, 3}, kernels.CortexM, []int64{8 * 128, 8 * 8}, true},
		{"SVDF FLOAT32: batch × filters", 27, "", []graph.Tensor{tensor(graph.Float32, 2, 10), tensor(graph.Float32, 8, 10), tensor(graph.Float32, 2, 4)},
			[]int{0, 1}, kernels.CortexM, []int64{2 * 8 * 4}, true},
		{"SVDF INT8: and batch × units", 27, "", []graph.Tensor{tensor(graph.Int8, 2, 10), tensor(graph.Int8, 8, 10), tensor(graph.Int8, 2, 4)},
			[]int{0, 1}, kernels.CortexM, []int64{2 * 8 * 4, 2 * 4 * 4}, true},
		{"UNIDIRECTIONAL_SEQUENCE_LSTM: four of the cell state's type", 44, "", []graph.Tensor{tensor(graph.Int8, 1, 5, 3), tensor(graph.Int8, 2, 20), tensor(graph.Int16, 2, 20), tensor(graph.Int8, 1, 5, 20)},
			lstmInputs, kernels.CortexM, []int64{80, 80, 80, 80}, true},
		{"ADD_N: a pointer per input, 32-bit", 106, "", []graph.Tensor{tensor(graph.Float32, 4), tensor(graph.Float32, 4)},
			[]int{0, 0, 0}, kernels.CortexM, []int64{12}, true},
		{"ADD_N: a pointer per input, 64-bit", 106, "", []graph.Tensor{tensor(graph.Float32, 4), tensor(graph.Float32, 4)},
			[]int{0, 0, 0}, host, []int64{24}, true},
		{"MIRROR_PAD: two arrays of the rank", 100, "", []graph.Tensor{tensor(graph.Float32, 1, 4, 4, 2), tensor(graph.Int32, 4, 2), tensor(graph.Float32, 1, 6, 6, 2)},
			[]int{0, 1}, kernels.CortexM, []int64{16, 16}, true},
		{"MEAN INT8: an accumulator per output, rank, axis", 40, "", []graph.Tensor{tensor(graph.Int8, 1, 7, 7, 64), tensor(graph.Int32, 2), tensor(graph.Int8, 1, 1, 1, 64)},
			[]int{0, 1}, kernels.CortexM, []int64{256, 16, 8}, true},
		{"SUM FLOAT32: rank and axis only", 74, "", []graph.Tensor{tensor(graph.Float32, 1, 7, 7, 64), tensor(graph.Int32), tensor(graph.Float32, 1, 7, 64)},
			[]int{0, 1}, kernels.CortexM, []int64{16, 4}, true},
		{"REDUCE_MAX: rank and axis", 82, "", []graph.Tensor{tensor(graph.Int8, 2, 3), tensor(graph.Int32, 1), tensor(graph.Int8, 2)},
			[]int{0, 1}, kernels.CortexM, []int64{8, 4}, true},
		{"SignalRfft: fft_length elements of the input's type", graph.Custom, "SignalRfft", []graph.Tensor{tensor(graph.Int16, 480), tensor(graph.Int16, 514)},
			[]int{0}, kernels.CortexM, []int64{1024}, true},
		{"an operator with no rule asks for nothing", 0, "", []graph.Tensor{tensor(graph.Int8, 4), tensor(graph.Int8, 4)},
			[]int{0, 0}, kernels.CortexM, nil, true},
		{"a custom operator with no rule is unknown", graph.Custom, "MyOp", []graph.Tensor{tensor(graph.Int8, 4), tensor(graph.Int8, 4)},
			[]int{0}, kernels.CortexM, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := make([]graph.TensorID, len(tt.in))
			for i, x := range tt.in {
				in[i] = graph.TensorID(x)
			}
			m, op := scratchModel(tt.code, tt.custom, tt.ts, in, graph.TensorID(len(tt.ts)-1))
			got, known := lib.Scratch(m, 0, op, tt.target)
			assert.Equal(t, tt.known, known)
			assert.Equal(t, tt.want, got)
		})
	}
	// Every rule survives an operator missing its operands.
	for _, code := range []graph.Opcode{3, 4, 9, 27, 40, 44, 67, 74, 82, 89, 100, 106, 140} {
		m, op := scratchModel(code, "", nil, nil)
		assert.NotPanics(t, func() { lib.Scratch(m, 0, op, kernels.CortexM) }, "%d", code)
	}
	m, op := scratchModel(graph.Custom, "SignalRfft", nil, nil)
	assert.NotPanics(t, func() { lib.Scratch(m, 0, op, kernels.CortexM) })
}
