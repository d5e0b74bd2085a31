package liveness_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/tflite"
)

func analyzeFile(t *testing.T, path string, opts liveness.Options) (*graph.Model, *liveness.Lifetimes) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	m, err := tflite.Load(data)
	require.NoError(t, err)
	lt, err := liveness.Analyze(m, opts)
	require.NoError(t, err)
	return m, lt
}

type want struct {
	ref   graph.TensorRef
	class liveness.Class
	live  liveness.Interval
	note  string
}

func ref(s, t int) graph.TensorRef {
	return graph.TensorRef{Subgraph: graph.SubgraphIndex(s), Tensor: graph.TensorID(t)}
}

func checkAll(t *testing.T, lt *liveness.Lifetimes, wants []want) {
	t.Helper()
	for _, w := range wants {
		got := lt.Lookup(w.ref)
		require.NotNil(t, got, "%v", w.ref)
		assert.Equal(t, w.class, got.Class, "class of %v", w.ref)
		if w.class != liveness.Constant && w.class != liveness.Unallocated {
			assert.Equal(t, w.live, got.Live, "lifetime of %v", w.ref)
		}
		assert.Equal(t, w.note, got.Note, "note of %v", w.ref)
	}
}

// call_once_mul: main runs CALL_ONCE(init) then VAR_HANDLE, READ_VARIABLE,
// ASSIGN_VARIABLE(handle, x), MUL(read, x). Hand-derived steps: 0 main
// inputs; 1 CALL_ONCE, inside it 2 init inputs, 3 VAR_HANDLE, 4
// ASSIGN_VARIABLE; 5 VAR_HANDLE; 6 READ_VARIABLE; 7 ASSIGN_VARIABLE; 8 MUL.
func TestCallOnceAndResourceVariable(t *testing.T) {
	_, lt := analyzeFile(t, "../testdata/models/call_once_mul.tflite", liveness.Options{})
	assert.Equal(t, 9, lt.Schedule.Steps)
	assert.Equal(t, liveness.Interval{1, 4}, lt.Schedule.Span(graph.OpRef{Subgraph: 0, Op: 0}), "CALL_ONCE spans its init subgraph")
	checkAll(t, lt, []want{
		{ref(0, 0), liveness.Scratch, liveness.Interval{0, 8}, ""}, // x, read by ASSIGN (7) and MUL (8)
		{ref(0, 1), liveness.Unallocated, liveness.Interval{}, liveness.NoteResource},
		{ref(0, 2), liveness.Scratch, liveness.Interval{6, 8}, ""}, // ReadVariableOp
		{ref(0, 3), liveness.Scratch, liveness.Interval{8, 8}, ""}, // model output
		{ref(1, 0), liveness.Constant, liveness.Interval{}, ""},    // the initial value
		{ref(1, 1), liveness.Unallocated, liveness.Interval{}, liveness.NoteResource},
	})
	require.Len(t, lt.Variables, 1, "both VAR_HANDLEs name shared_name \"Variable\"")
	v := lt.Variables[0]
	assert.Equal(t, graph.ResourceName{SharedName: "Variable", HasContainer: true}, v.Name, "the converter writes container \"\"")
	assert.Equal(t, int64(4), v.Size, "a float32 scalar")
	assert.Equal(t, []graph.TensorRef{ref(0, 1), ref(1, 1)}, v.Handles)
}

// multi_subgraphs_while: main's only operator is WHILE(cond=1, body=2) over
// four values; steps 0 main inputs, 1 WHILE, 2-3 cond (inputs, LESS), 4-7
// body (inputs, ADD, MUL, ADD).
func TestWhileModel(t *testing.T) {
	_, lt := analyzeFile(t, "../testdata/models/multi_subgraphs_while.tflite", liveness.Options{})
	assert.Equal(t, 8, lt.Schedule.Steps)
	assert.Equal(t, liveness.Interval{1, 7}, lt.Schedule.Span(graph.OpRef{Subgraph: 0, Op: 0}))
	assert.Equal(t, liveness.Interval{3, 3}, lt.Schedule.Span(graph.OpRef{Subgraph: 1, Op: 0}))
	assert.Equal(t, liveness.Interval{7, 7}, lt.Schedule.Span(graph.OpRef{Subgraph: 2, Op: 2}))
	checkAll(t, lt, []want{
		{ref(0, 0), liveness.Scratch, liveness.Interval{0, 7}, ""}, // model input, read by WHILE
		{ref(0, 1), liveness.Constant, liveness.Interval{}, ""},
		{ref(0, 2), liveness.Scratch, liveness.Interval{1, 7}, ""}, // WHILE results live across the loop
		{ref(1, 0), liveness.Scratch, liveness.Interval{2, 2}, ""}, // cond input nobody reads
		{ref(1, 1), liveness.Scratch, liveness.Interval{2, 3}, ""}, // read by LESS
		{ref(1, 4), liveness.Scratch, liveness.Interval{3, 3}, ""}, // cond output
		{ref(2, 0), liveness.Scratch, liveness.Interval{4, 7}, ""}, // body input, also a body output
		{ref(2, 5), liveness.Scratch, liveness.Interval{5, 7}, ""},
		{ref(2, 7), liveness.Scratch, liveness.Interval{7, 7}, ""},
	})
	// Every loop tensor lies inside the WHILE's span, during which its operands stay live.
	for _, tn := range lt.Tensors {
		if tn.Ref.Subgraph > 0 && tn.Class == liveness.Scratch {
			span := lt.Schedule.Span(graph.OpRef{Subgraph: 0, Op: 0})
			assert.True(t, span.First <= tn.Live.First && tn.Live.Last <= span.Last, "%v", tn.Ref)
		}
	}
}

// okay_nabu_v2 (esphome micro wake word) keeps six streaming states as
// resource variables, initialised by a CALL_ONCE subgraph. The expected
// sizes are the READ_VARIABLE output shapes ([1,2,1,40] int8 is 80 bytes …),
// the same raw_bytes TFLM reports for them in bench/tflm-buffers.
func TestStreamingStatesAreVariables(t *testing.T) {
	dir := corpus.Require(t)
	_, lt := analyzeFile(t, filepath.Join(dir, "corpus", "esphome-mww", "okay_nabu_v2.tflite"), liveness.Options{})
	sizes := map[string]int64{}
	for _, v := range lt.Variables {
		sizes[v.Name.SharedName] = v.Size
		assert.Len(t, v.Handles, 2, "one VAR_HANDLE in main, one in the init subgraph")
	}
	assert.Equal(t, map[string]int64{
		"stream/states": 80, "stream_1/states": 128, "stream_2/states": 640,
		"stream_3/states": 896, "stream_4/states": 1408, "stream_5/states": 320,
	}, sizes)
	for _, tn := range lt.Tensors {
		if tn.Class == liveness.Unallocated && tn.Used {
			assert.Equal(t, liveness.NoteResource, tn.Note, "%v", tn.Ref)
		}
	}
}
