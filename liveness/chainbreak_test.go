package liveness_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
)

// visionHead is the first layers of a small vision model (vww_96's):
// the model input in, INT8 [1, 96, 96, 3] -> CONV_2D 3x3 stride 2 SAME ->
// a [1, 48, 48, 8] -> DEPTHWISE_CONV_2D 3x3 -> b [1, 48, 48, 8] ->
// CONV_2D 1x1 -> c [1, 48, 48, 16] -> FULLY_CONNECTED -> out [1, 16].
func visionHead() *graph.Model {
	weights := func(name string, typ graph.ElementType, buf graph.BufferIndex, shape ...int32) graph.Tensor {
		t := shaped(name, typ, shape...)
		t.Buffer = buf
		return t
	}
	sg := graph.Subgraph{
		Tensors: []graph.Tensor{
			shaped("in", graph.Int8, 1, 96, 96, 3),
			weights("f0", graph.Int8, 1, 8, 3, 3, 3), weights("b0", graph.Int32, 2, 8),
			shaped("a", graph.Int8, 1, 48, 48, 8),
			weights("f1", graph.Int8, 3, 1, 3, 3, 8), weights("b1", graph.Int32, 4, 8),
			shaped("b", graph.Int8, 1, 48, 48, 8),
			weights("f2", graph.Int8, 5, 16, 1, 1, 8), weights("b2", graph.Int32, 6, 16),
			shaped("c", graph.Int8, 1, 48, 48, 16),
			shaped("out", graph.Int8, 1, 16),
		},
		Inputs: ids(0), Outputs: ids(10),
		Ops: []graph.Op{
			op(graph.Conv2D, ids(0, 1, 2), ids(3)),
			op(graph.DepthwiseConv2D, ids(3, 4, 5), ids(6)),
			op(graph.Conv2D, ids(6, 7, 8), ids(9)),
			op(codeFullyConnected, ids(9), ids(10)),
		},
	}
	sg.Ops[0].Window = &graph.Window{Padding: graph.PaddingSame, StrideW: 2, StrideH: 2, DilationW: 1, DilationH: 1}
	sg.Ops[1].Window = &graph.Window{Padding: graph.PaddingSame, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1, DepthMultiplier: 1}
	sg.Ops[2].Window = &graph.Window{Padding: graph.PaddingSame, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}
	bufs := []graph.Buffer{{}}
	for _, t := range sg.Tensors {
		if t.Buffer != 0 {
			bufs = append(bufs, graph.Buffer{Data: make([]byte, t.Size)})
		}
	}
	return &graph.Model{Buffers: bufs, Subgraphs: []graph.Subgraph{sg}}
}

// spanPeak is the cost the in-place choice minimises: at each step, each
// alias group's bytes from the lowest to the highest byte of its members
// live there, summed; and never less than a group's whole extent.
func spanPeak(lt *liveness.Lifetimes) int64 {
	type span struct{ lo, hi int64 }
	var peak int64
	for s := liveness.Step(0); s <= liveness.Step(lt.Schedule.Steps); s++ {
		groups := map[graph.TensorRef]*span{}
		for _, tn := range lt.Tensors {
			if tn.Class != liveness.Scratch || tn.Live.First < 0 || s < tn.Live.First || s > tn.Live.Last {
				continue
			}
			root, off := tn.Ref, int64(0)
			if tn.AliasOf != nil {
				root, off = *tn.AliasOf, tn.AliasOffset
			}
			g := groups[root]
			if g == nil {
				g = &span{off, off + tn.Size}
				groups[root] = g
			}
			g.lo, g.hi = min(g.lo, off), max(g.hi, off+tn.Size)
		}
		var live int64
		for _, g := range groups {
			live += g.hi - g.lo
		}
		peak = max(peak, live)
	}
	for _, tn := range lt.Tensors {
		if tn.Class == liveness.Scratch && tn.AliasOf == nil {
			peak = max(peak, tn.Extent.Size())
		}
	}
	return peak
}

// TestInPlaceChainBreaksLater: where a model input may be written over,
// the first convolution writes its output over it (input 101 bytes after
// it, 112 aligned: 27760 B where both were 46080), the depthwise one
// keeps its own bytes, and the 1x1 convolution writes over the depthwise
// output (18448 B after its start: 36880 B). A chain of all three would
// drift to 46608 B; stopping the first write alone (46080 B), which the
// search tries first, is not as good as breaking the chain after it.
func TestInPlaceChainBreaksLater(t *testing.T) {
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	lt, err := liveness.Analyze(visionHead(), liveness.Options{Kernels: lib, OverwriteInputs: true})
	require.NoError(t, err)
	a, b, c := lt.Lookup(ref(0, 3)), lt.Lookup(ref(0, 6)), lt.Lookup(ref(0, 9))
	require.NotNil(t, a.InPlace, "the first convolution writes over the model input")
	assert.Equal(t, ref(0, 0), *a.AliasOf)
	assert.Equal(t, int64(-112), a.AliasOffset)
	assert.Nil(t, b.InPlace, "the depthwise convolution keeps bytes of its own")
	require.NotNil(t, c.InPlace, "the 1x1 convolution writes over the depthwise output")
	assert.Equal(t, ref(0, 6), *c.AliasOf)
	assert.Equal(t, int64(-18448), c.AliasOffset)
	assert.Equal(t, int64(36880), spanPeak(lt))

	// Without overwriting inputs the first write is not allowed: the
	// input and a are 46080 B.
	lt, err = liveness.Analyze(visionHead(), liveness.Options{Kernels: lib})
	require.NoError(t, err)
	assert.Nil(t, lt.Lookup(ref(0, 3)).InPlace)
	assert.Equal(t, int64(46080), spanPeak(lt))
}
