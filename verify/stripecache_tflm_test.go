package verify

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
	"github.com/heliac/heliac/tflite"
)

// floatNet builds small FLOAT32 CNNs with deterministic weights for TFLM
// runs: every method appends an operator and returns its output.
type floatNet struct {
	m    *graph.Model
	seed uint64
}

func newFloatNet(name string, h, w, c int32) (*floatNet, graph.TensorID) {
	n := &floatNet{m: &graph.Model{Version: 3, Buffers: []graph.Buffer{{}}, Subgraphs: []graph.Subgraph{{}}}, seed: 1}
	x := n.act(name, 1, h, w, c)
	n.sg().Inputs = ids(x)
	return n, x
}

func (n *floatNet) sg() *graph.Subgraph { return &n.m.Subgraphs[0] }

func (n *floatNet) act(name string, shape ...int32) graph.TensorID {
	n.sg().Tensors = append(n.sg().Tensors, tensor(name, graph.Float32, shape...))
	return graph.TensorID(len(n.sg().Tensors) - 1)
}

// constant appends a constant tensor; FLOAT32 data from a fixed stream
// in [-1, 1) unless ints are given (INT32).
func (n *floatNet) constant(name string, ints []int32, shape ...int32) graph.TensorID {
	typ := graph.Float32
	var data []byte
	if ints != nil {
		typ = graph.Int32
		for _, v := range ints {
			data = binary.LittleEndian.AppendUint32(data, uint32(v))
		}
	} else {
		size := int32(1)
		for _, d := range shape {
			size *= d
		}
		for range size {
			n.seed = n.seed*6364136223846793005 + 1442695040888963407
			v := float32(n.seed>>40)/float32(1<<24)*2 - 1
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
		}
	}
	n.m.Buffers = append(n.m.Buffers, graph.Buffer{Data: data})
	n.sg().Tensors = append(n.sg().Tensors, withBuffer(tensor(name, typ, shape...), graph.BufferIndex(len(n.m.Buffers)-1)))
	return graph.TensorID(len(n.sg().Tensors) - 1)
}

func (n *floatNet) op(code graph.Opcode, name string, ins []graph.TensorID, out graph.TensorID, w *graph.Window) graph.TensorID {
	n.sg().Ops = append(n.sg().Ops, graph.Op{Code: code, CodeName: name, Version: 1, Inputs: ins, Outputs: ids(out), Window: w})
	return out
}

func (n *floatNet) shape(t graph.TensorID) []int32 { return n.sg().Tensors[t].Shape }

// conv appends a CONV_2D (depthwise when dw, multiplier 1) of kernel k,
// stride s and dilation d.
func (n *floatNet) conv(in graph.TensorID, name string, cout, k, s, d int32, same, dw bool) graph.TensorID {
	sh := n.shape(in)
	kk := (k-1)*d + 1
	oh, ow := (sh[1]+s-kk)/s, (sh[2]+s-kk)/s
	if same {
		oh, ow = (sh[1]+s-1)/s, (sh[2]+s-1)/s
	}
	pad := graph.PaddingValid
	if same {
		pad = graph.PaddingSame
	}
	win := &graph.Window{Padding: pad, StrideW: s, StrideH: s, DilationW: d, DilationH: d}
	code, opName, fshape := graph.Conv2D, "CONV_2D", []int32{cout, k, k, sh[3]}
	if dw {
		cout, win.DepthMultiplier = sh[3], 1
		code, opName, fshape = graph.DepthwiseConv2D, "DEPTHWISE_CONV_2D", []int32{1, k, k, sh[3]}
	}
	filter := n.constant(name+"/w", nil, fshape...)
	bias := n.constant(name+"/b", nil, cout)
	return n.op(code, opName, ids(in, filter, bias), n.act(name, 1, oh, ow, cout), win)
}

func (n *floatNet) maxPool(in graph.TensorID, name string, k, s int32) graph.TensorID {
	sh := n.shape(in)
	win := &graph.Window{Padding: graph.PaddingValid, StrideW: s, StrideH: s, DilationW: 1, DilationH: 1, FilterW: k, FilterH: k}
	return n.op(graph.MaxPool2D, "MAX_POOL_2D", ids(in), n.act(name, 1, (sh[1]-k)/s+1, (sh[2]-k)/s+1, sh[3]), win)
}

func (n *floatNet) pad(in graph.TensorID, name string, top, bottom, left, right int32) graph.TensorID {
	sh := n.shape(in)
	p := n.constant(name+"/paddings", []int32{0, 0, top, bottom, left, right, 0, 0}, 4, 2)
	return n.op(opPad, "PAD", ids(in, p), n.act(name, 1, sh[1]+top+bottom, sh[2]+left+right, sh[3]), nil)
}

func (n *floatNet) unary(code graph.Opcode, opName string, ins []graph.TensorID, name string) graph.TensorID {
	return n.op(code, opName, ins, n.act(name, n.shape(ins[0])...), nil)
}

// done makes y the model's output and returns the model.
func (n *floatNet) done(y graph.TensorID) *graph.Model {
	n.sg().Outputs = ids(y)
	return n.m
}

// cachedRecord returns the record of a region with cached halos over
// the operators ops (X the first one's first input, Y the last one's
// output), the MACs worked out with the rebuild's own row rules (this
// test is about what TFLM computes, not the MACs); false when the rows
// cannot be cached (then the rebuild's report).
func cachedRecord(t *testing.T, m *graph.Model, ops []graph.OpIndex, rows [][2]int64) (stripeRec, report) {
	t.Helper()
	sg := &m.Subgraphs[0]
	rec := stripeRec{path: "stripes[0]", input: sg.Ops[ops[0]].Inputs[0], output: sg.Ops[ops[len(ops)-1]].Outputs[0], ops: ops,
		k: int64(len(rows)), rows: rows, halo: graph.HaloCache}
	b := &rebuilder{orig: m}
	rg := b.checkRegion(&rec)
	require.NotNil(t, rg, "%v", b.r)
	st := b.cachedRows(rg)
	if st == nil {
		return rec, b.r
	}
	for _, oi := range ops {
		op := &sg.Ops[oi]
		rec.macs += opMACs(sg, op, int64(sg.Tensors[op.Outputs[0]].Shape[1]))
		for _, s := range st {
			p := s.fresh[op.Outputs[0]]
			rec.extra += opMACs(sg, op, p.hi-p.lo)
		}
	}
	rec.extra -= rec.macs
	return rec, nil
}

// evenRows splits h rows into k stripes, the first ones a row taller.
func evenRows(h, k int64) [][2]int64 {
	var rows [][2]int64
	start := int64(0)
	for j := range k {
		n := h / k
		if j < h%k {
			n++
		}
		rows = append(rows, [2]int64{start, start + n})
		start += n
	}
	return rows
}

// corpusModel returns a loader of a corpus model; the test using it
// skips when the corpus is absent.
func corpusModel(t *testing.T, file string) func() *graph.Model {
	return func() *graph.Model {
		data, err := os.ReadFile(filepath.Join(corpus.Require(t), "corpus", file))
		require.NoError(t, err)
		m, err := tflite.Load(data)
		require.NoError(t, err)
		return m
	}
}

// tflmOutputs runs m in TFLM with seeds 1 and 2, two invocations each,
// and returns every output digest.
func tflmOutputs(t *testing.T, tool string, m *graph.Model, file string) []string {
	t.Helper()
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), file)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	var out []string
	for seed := 1; seed <= 2; seed++ {
		res, err := tflmrun.Run(context.Background(), tool, path, tflmrun.Options{Seed: seed, Invokes: 2, ArenaBytes: 4 << 20})
		require.NoError(t, err)
		require.True(t, res.OK(), "%s: %s", file, res.Error())
		out = append(out, res.Outputs()...)
	}
	return out
}

// TestCachedRebuildTFLM runs the verifier's own rebuild of regions with
// cached halos in stock TFLM (../shared/tools/tflm_run, reference
// kernels) and compares every output with the original model's: the
// construction as this package reads docs/stripes.md computes the same
// bytes, independently of package stripe. A cache sliced one row off is
// shown to change the outputs.
func TestCachedRebuildTFLM(t *testing.T) {
	tool := tflmrun.Require(t)
	broke := 0
	for name, tt := range map[string]struct {
		model func() *graph.Model
		ops   []graph.OpIndex
		ks    []int64
	}{
		"conv, depthwise stride 2, conv": {func() *graph.Model {
			n, x := newFloatNet("x", 16, 8, 3)
			a := n.conv(x, "a", 4, 3, 1, 1, true, false)
			b := n.conv(a, "b", 0, 3, 2, 1, true, true)
			return n.done(n.conv(b, "y", 2, 3, 1, 1, true, false))
		}, []graph.OpIndex{0, 1, 2}, []int64{2, 3, 4}},
		"residual add": {func() *graph.Model {
			n, x := newFloatNet("x", 10, 6, 2)
			a := n.conv(x, "a", 2, 3, 1, 1, true, false)
			b := n.conv(a, "b", 2, 3, 1, 1, true, false)
			c := n.unary(opAdd, "ADD", ids(a, b), "c")
			return n.done(n.unary(19, "RELU", ids(c), "y"))
		}, []graph.OpIndex{0, 1, 2, 3}, []int64{2, 3, 5}},
		"pad, VALID conv, VALID pool": {func() *graph.Model {
			n, x := newFloatNet("x", 12, 6, 2)
			p := n.pad(x, "p", 1, 1, 1, 1)
			a := n.conv(p, "a", 3, 3, 1, 1, false, false)
			return n.done(n.maxPool(a, "y", 2, 2))
		}, []graph.OpIndex{0, 1, 2}, []int64{2, 3}},
		"dilated depthwise, 5x5 stride 2": {func() *graph.Model {
			n, x := newFloatNet("x", 14, 5, 2)
			a := n.conv(x, "a", 0, 3, 1, 2, true, true)
			return n.done(n.conv(a, "y", 2, 5, 2, 1, true, false))
		}, []graph.OpIndex{0, 1}, []int64{2, 3}},
		// INT8 corpus models (PADs write the zero point): person_detect's
		// first depthwise and convolutions (96 -> 48 -> 24 rows), cnn_s's
		// two VALID convolutions.
		"person_detect 0-6": {corpusModel(t, "tflite-micro/person_detect.tflite"), []graph.OpIndex{0, 1, 2, 3, 4, 5, 6}, []int64{2, 3, 7}},
		"person_detect 1-7": {corpusModel(t, "tflite-micro/person_detect.tflite"), []graph.OpIndex{1, 2, 3, 4, 5, 6, 7}, []int64{2, 4, 10}},
		"cnn_s 1-2":         {corpusModel(t, "ambiq/cnn_s_quantized.tflite"), []graph.OpIndex{1, 2}, []int64{2, 4}},
	} {
		t.Run(name, func(t *testing.T) {
			orig := tt.model()
			want := tflmOutputs(t, tool, orig, "orig.tflite")
			require.NotEmpty(t, want)
			sg := &orig.Subgraphs[0]
			h := int64(sg.Tensors[sg.Ops[tt.ops[len(tt.ops)-1]].Outputs[0]].Shape[1])
			built := 0
			for _, k := range tt.ks {
				rec, refused := cachedRecord(t, orig, tt.ops, evenRows(h, k))
				if refused != nil {
					t.Logf("k %d: %s", k, refused[0].Msg)
					continue
				}
				got, bad := rebuildModel(orig, &planDoc{stripes: []stripeRec{rec}})
				require.Empty(t, bad)
				built++
				concats := 0
				for _, op := range got.Subgraphs[0].Ops {
					if op.Code == opConcatenation {
						concats++
					}
				}
				assert.Greater(t, concats, 1, "k %d: some halo is cached", k)
				t.Logf("k %d: %d operators, %d concatenations, extra MACs %d of %d", k, len(got.Subgraphs[0].Ops), concats, rec.extra, rec.macs)
				assert.Equal(t, want, tflmOutputs(t, tool, got, "cached.tflite"), "k %d: extra MACs %d", k, rec.extra)
				if k != tt.ks[0] {
					continue
				}
				// The same rewrite with one cache taken a row higher.
				broken := cloneModel(got)
				shifted := false
				for _, op := range broken.Subgraphs[0].Ops {
					if op.Code != opStridedSlice || !strings.HasSuffix(broken.Subgraphs[0].Tensors[op.Outputs[0]].Name, "/cache") {
						continue
					}
					begin, end := int32s(t, broken, op.Inputs[1]), int32s(t, broken, op.Inputs[2])
					if begin[1] == 0 {
						continue
					}
					begin[1]--
					end[1]--
					setInt32(broken, op.Inputs[1], begin...)
					setInt32(broken, op.Inputs[2], end...)
					shifted = true
					break
				}
				if shifted {
					broke++
					assert.NotEqual(t, want, tflmOutputs(t, tool, broken, "broken.tflite"), "k %d: a cache a row off changes the outputs", k)
				}
			}
			assert.NotZero(t, built, "some k builds with cached halos")
		})
	}
	assert.NotZero(t, broke, "some rewrite was broken on purpose")
}
