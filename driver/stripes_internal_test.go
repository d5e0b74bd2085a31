package driver

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/stripe"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

// stripedCase is a corpus model rewritten by the real stripe.Apply, its
// plan and C module, as a compile with --patches writes them.
type stripedCase struct {
	orig, m *graph.Model
	js      []byte
	files   emit.Files
	p       *plan.Plan // the rewrite's plan
}

// stripeCorpusModel rewrites the largest candidate region of a corpus
// model into k even stripes and plans the rewrite.
func stripeCorpusModel(t *testing.T, file string, k int) *stripedCase {
	t.Helper()
	return stripeCorpusModelHalo(t, file, k, graph.HaloRecompute)
}

// stripeCorpusModelHalo is stripeCorpusModel with the region's halo rows
// recomputed or cached.
func stripeCorpusModelHalo(t *testing.T, file string, k int, halo graph.Halo) *stripedCase {
	t.Helper()
	dir := corpus.Require(t)
	data, err := os.ReadFile(filepath.Join(dir, "corpus", file))
	require.NoError(t, err)
	orig, err := tflite.Load(data)
	require.NoError(t, err)
	cands := stripe.Candidates(orig)
	require.NotEmpty(t, cands, "%s has regions to stripe", file)
	// The candidate with the most operators: halos through several
	// layers, borders padded at both edges.
	var best graph.StripeRegion
	for _, c := range cands {
		if h := orig.Tensor(c.Subgraph, c.Output).Shape[1]; h >= int32(2*k) && len(c.Ops) > len(best.Ops) {
			best = c
		}
	}
	require.NotEmpty(t, best.Ops, "%s has a region of %d rows or more", file, 2*k)
	best.Rows = stripe.EvenRows(orig.Tensor(best.Subgraph, best.Output).Shape[1], k)
	best.Halo = halo
	m, err := stripe.Apply(orig, []graph.StripeRegion{best})
	require.NoError(t, err)
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	cfg := Config{ModelName: "striped", Version: "test", Kernels: lib}
	cfg.Liveness.Kernels = lib
	s, err := planLoaded(context.Background(), m, cfg)
	require.NoError(t, err)
	meta := emit.Meta{ModelName: "striped", ModelSHA256: sha256Hex(data), Subgraphs: len(m.Subgraphs), Version: "test"}
	js, err := emit.JSON(m, s.p, meta)
	require.NoError(t, err)
	files, err := emit.C(m, s.p, emit.COptions{Prefix: "striped", Meta: meta})
	require.NoError(t, err)
	return &stripedCase{orig: orig, m: m, js: js, files: files, p: s.p}
}

// cloneForMutation copies a model deeply enough to change its
// operators' operands, its tensors and its buffers.
func cloneForMutation(m *graph.Model) *graph.Model {
	c := *m
	c.Buffers = slices.Clone(m.Buffers)
	c.Subgraphs = slices.Clone(m.Subgraphs)
	for s := range c.Subgraphs {
		sg := &c.Subgraphs[s]
		sg.Tensors = slices.Clone(sg.Tensors)
		sg.Ops = slices.Clone(sg.Ops)
		for i := range sg.Ops {
			sg.Ops[i].Inputs = slices.Clone(sg.Ops[i].Inputs)
		}
	}
	return &c
}

// int32Data reads a constant INT32 tensor; setInt32Data gives it new data
// in a buffer of its own.
func int32Data(m *graph.Model, s graph.SubgraphIndex, id graph.TensorID) []int32 {
	d := m.Buffers[m.Tensor(s, id).Buffer].Data
	out := make([]int32, len(d)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(d[4*i:]))
	}
	return out
}

func setInt32Data(m *graph.Model, s graph.SubgraphIndex, id graph.TensorID, v []int32) {
	var d []byte
	for _, x := range v {
		d = binary.LittleEndian.AppendUint32(d, uint32(x))
	}
	m.Buffers = append(m.Buffers, graph.Buffer{Data: d})
	m.Subgraphs[s].Tensors[id].Buffer = graph.BufferIndex(len(m.Buffers) - 1)
}

// firstOp returns the index of the first operator named name at or after
// from in subgraph s, -1 when none.
func firstOp(m *graph.Model, s graph.SubgraphIndex, name string, from int) int {
	for i := from; i < len(m.Subgraphs[s].Ops); i++ {
		if m.Subgraphs[s].Ops[i].Name() == name {
			return i
		}
	}
	return -1
}

// addNum adds d to a JSON number.
func addNum(v any, d int64) json.Number {
	n, err := v.(json.Number).Int64()
	if err != nil {
		panic(err)
	}
	return json.Number(strconv.FormatInt(n+d, 10))
}

func messages(vs []verify.Violation) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString(v.String() + "\n")
	}
	return b.String()
}

// TestStripeRewriteVerified: the verifier's own rebuild of a rewrite by
// stripe.Apply is that rewrite, tensor for tensor and operator for
// operator, and the plan and C module made for the rewritten model
// verify against the original and the record.
func TestStripeRewriteVerified(t *testing.T) {
	for _, tt := range []struct {
		file string
		k    int
	}{{"tflite-micro/person_detect.tflite", 4}, {"ambiq/cnn_s_quantized.tflite", 3}} {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			c := stripeCorpusModel(t, tt.file, tt.k)
			assert.Empty(t, verifyOutput(c.orig, c.m, c.js, cModule(c.files)))
			assert.Empty(t, verify.Rewrite(c.orig, c.m, c.js))
			v := verify.Plan(c.m, c.js)
			require.Len(t, v, 1, "the rewritten model is not the one to give the verifier")
			assert.Equal(t, verify.Malformed, v[0].Kind)
		})
	}
}

// TestStripeRewriteMutations breaks a real rewrite (or its record) in the
// ways a faulty rewriter would, most with every size still fitting: each
// is caught, naming the operator or tensor.
func TestStripeRewriteMutations(t *testing.T) {
	c := stripeCorpusModel(t, "tflite-micro/person_detect.tflite", 4)
	s := c.m.Stripes[0].Subgraph
	// The slices and pads of stripe 1 (not the first: its halo reaches
	// rows above it).
	slice1 := firstOp(c.m, s, "STRIDED_SLICE", 0)
	for i := 0; slice1 >= 0; i++ {
		if strings.Contains(c.m.Tensor(s, c.m.Subgraphs[s].Ops[slice1].Outputs[0]).Name, "/stripe1/") {
			break
		}
		slice1 = firstOp(c.m, s, "STRIDED_SLICE", slice1+1)
	}
	require.GreaterOrEqual(t, slice1, 0, "stripe 1 slices a tensor")
	pad0 := firstOp(c.m, s, "PAD", 0)
	require.GreaterOrEqual(t, pad0, 0, "stripe 0 pads the top border")
	conv := firstOp(c.m, s, "CONV_2D", 0)
	require.GreaterOrEqual(t, conv, 0)

	for name, tt := range map[string]struct {
		model  func(m *graph.Model) // mutates the rewritten model
		record func(r map[string]any)
		kind   verify.Kind
		want   string
	}{
		"a halo one row short": {model: func(m *graph.Model) {
			op := &m.Subgraphs[s].Ops[slice1]
			begin := int32Data(m, s, op.Inputs[1])
			begin[1]++
			setInt32Data(m, s, op.Inputs[1], begin)
		}, kind: verify.RewriteMismatch, want: "/stripe1/slice/begin): its constant data"},
		"a border padded on the wrong side": {model: func(m *graph.Model) {
			// The first PAD whose top and bottom differ: the same rows
			// in all, the border at the wrong edge.
			for i := pad0; i >= 0; i = firstOp(m, s, "PAD", i+1) {
				op := &m.Subgraphs[s].Ops[i]
				if p := int32Data(m, s, op.Inputs[1]); p[2] != p[3] {
					p[2], p[3] = p[3], p[2]
					setInt32Data(m, s, op.Inputs[1], p)
					return
				}
			}
			t.Fatal("no PAD pads one edge only")
		}, kind: verify.RewriteMismatch, want: "/pad/paddings): its constant data"},
		"a border padded with the wrong value": {model: func(m *graph.Model) {
			out := &m.Subgraphs[s].Tensors[m.Subgraphs[s].Ops[pad0].Outputs[0]]
			q := *out.Quantization
			q.ZeroPoint = []int64{q.ZeroPoint[0] + 1}
			out.Quantization = &q
		}, kind: verify.RewriteMismatch, want: "/pad): quantization"},
		"a copy whose weights are another tensor": {model: func(m *graph.Model) {
			op := &m.Subgraphs[s].Ops[conv]
			for i, o := range m.Subgraphs[s].Ops {
				if i != conv && o.Name() == "CONV_2D" && o.Inputs[1] != op.Inputs[1] {
					op.Inputs[1] = o.Inputs[1]
					return
				}
			}
			op.Inputs[1] = op.Inputs[2] // the bias, if no other filter
		}, kind: verify.RewriteMismatch, want: "CONV_2D) reads"},
		"a slot one row off": {record: func(r map[string]any) {
			rows := r["rows"].([]any)
			first, second := rows[0].([]any), rows[1].([]any)
			first[1] = addNum(first[1], -1)
			second[0] = addNum(second[0], -1)
		}, kind: verify.RewriteMismatch, want: "/stripe0"},
		"rows that overlap": {record: func(r map[string]any) {
			rows := r["rows"].([]any)
			rows[1].([]any)[0] = addNum(rows[1].([]any)[0], -1)
		}, kind: verify.BadStripes, want: "rows[1] is"},
		"extra MACs understated": {record: func(r map[string]any) {
			r["extra_macs"] = 0
		}, kind: verify.BadStripes, want: "extra_macs 0"},
	} {
		t.Run(name, func(t *testing.T) {
			m, js := c.m, c.js
			if tt.model != nil {
				m = cloneForMutation(c.m)
				tt.model(m)
			}
			if tt.record != nil {
				var doc map[string]any
				dec := json.NewDecoder(bytes.NewReader(js))
				dec.UseNumber()
				require.NoError(t, dec.Decode(&doc))
				tt.record(doc["stripes"].([]any)[0].(map[string]any))
				var err error
				js, err = json.Marshal(doc)
				require.NoError(t, err)
			}
			v := verify.Rewrite(c.orig, m, js)
			require.NotEmpty(t, v, "the mutation is caught")
			assert.Equal(t, tt.kind, v[0].Kind, messages(v))
			assert.Contains(t, messages(v), tt.want)
			assert.NotEmpty(t, verifyOutput(c.orig, m, js, cModule(c.files)), "the driver's check catches it too")
		})
	}
}

// stripesJSON returns plan.json js with its stripes key replaced by m's
// record, as emit writes it (verify.Rewrite reads nothing else of the
// plan).
func stripesJSON(t *testing.T, js []byte, m *graph.Model) []byte {
	t.Helper()
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(js, &doc))
	var recs []map[string]any
	for _, r := range m.Stripes {
		ops := []string{}
		for _, o := range r.Ops {
			ops = append(ops, strconv.Itoa(int(r.Subgraph))+":"+strconv.Itoa(o))
		}
		id := func(t graph.TensorID) string { return strconv.Itoa(int(r.Subgraph)) + ":" + strconv.Itoa(int(t)) }
		recs = append(recs, map[string]any{"subgraph": r.Subgraph, "input": id(r.Input), "output": id(r.Output), "operators": ops,
			"k": r.K(), "rows": r.Rows, "halo": r.HaloKind(), "macs": r.MACs, "extra_macs": r.ExtraMACs})
	}
	raw, err := json.Marshal(recs)
	require.NoError(t, err)
	doc["stripes"] = raw
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// TestStripeRebuildMatchesApply: on three models, for every candidate
// region stripe.Candidates finds (the first 40 of a model), with 2 stripes
// and with as many as the output's rows allow (at most 10), the
// verifier's rebuild is exactly what stripe.Apply writes.
func TestStripeRebuildMatchesApply(t *testing.T) {
	rebuildMatchesApply(t, []string{"tflite-micro/person_detect.tflite", "ambiq/cnn_s_quantized.tflite", "tflite-micro/magic_wand.tflite"})
}

// TestStripeRebuildMatchesApplyCorpus is TestStripeRebuildMatchesApply
// over every corpus model: a sweep.
func TestStripeRebuildMatchesApplyCorpus(t *testing.T) {
	skipUnderRace(t)
	if testing.Short() {
		t.Skip("-short: TestStripeRebuildMatchesApply's three models")
	}
	rebuildMatchesApply(t, corpusFiles(t))
}

// skipUnderRace skips a corpus sweep under the race detector; make test
// runs it in its second step (SWEEPS in the Makefile).
func skipUnderRace(t *testing.T) {
	t.Helper()
	if underRace {
		t.Skip("a corpus sweep: `make test` runs it without -race (SWEEPS in the Makefile)")
	}
}

// corpusFiles lists every corpus model.
func corpusFiles(t *testing.T) []string {
	var files []string
	for _, e := range corpus.Manifest(t) {
		files = append(files, e.File)
	}
	return files
}

// eachCorpusCandidate calls fn with the first 40 candidate regions of
// each of the corpus models files the loader takes (the largest regions
// of each output first; enough to cover a model's shapes).
func eachCorpusCandidate(t *testing.T, files []string, fn func(file string, orig *graph.Model, c graph.StripeRegion)) {
	dir := corpus.Require(t)
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(dir, "corpus", file))
		require.NoError(t, err)
		orig, err := tflite.Load(data)
		if err != nil {
			continue // models the loader refuses have their own tests
		}
		cands := stripe.Candidates(orig)
		if len(cands) > 40 {
			cands = cands[:40]
		}
		for _, c := range cands {
			fn(file, orig, c)
		}
	}
}

func rebuildMatchesApply(t *testing.T, files []string) {
	base := stripeCorpusModel(t, "tflite-micro/person_detect.tflite", 2)
	regions := 0
	eachCorpusCandidate(t, files, func(file string, orig *graph.Model, c graph.StripeRegion) {
		h := orig.Tensor(c.Subgraph, c.Output).Shape[1]
		for _, k := range []int{2, min(10, int(h))} {
			r := c
			if r.Rows = stripe.EvenRows(h, k); r.Rows == nil {
				continue
			}
			m, err := stripe.Apply(orig, []graph.StripeRegion{r})
			if err != nil {
				continue // e.g. a stripe wholly in padding: Apply refuses it
			}
			regions++
			js := stripesJSON(t, base.js, m)
			assert.Empty(t, verify.Rewrite(orig, m, js), "%s: %d -> %d, k %d", file, r.Input, r.Output, k)
		}
	})
	t.Logf("%d rewrites rebuilt", regions)
	assert.NotZero(t, regions)
}

// TestVerifyPlanFileStripes: a --patches auto --emit-tflite compile
// verifies (its verifier rebuilt the rewrite from the original); heliac
// verify on the set it writes finds the original model by its sha256,
// rebuilds the rewrite and checks the plan, the C module and the
// rewritten model written beside the plan (<prefix>.tflite: operators in
// schedule order, unused intermediates of height 0) against it; the same
// file with a halo one row short is reported, naming the file and the
// tensor.
func TestVerifyPlanFileStripes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(corpus.Require(t), "corpus", "tflite-micro/person_detect.tflite"))
	require.NoError(t, err)
	lib, err := kernels.Lookup(kernels.TFLMReference)
	require.NoError(t, err)
	cfg := Config{ModelName: "person_detect", Version: "test", Kernels: lib, Patches: PatchesAuto, EmitTFLite: true}
	cfg.Liveness.Kernels = lib
	out, err := Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	require.NotEmpty(t, out.Model.Stripes, "person_detect is striped")
	write := func(dir string, emitted []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "original.tflite"), data, 0o644))
		for _, f := range out.Files() {
			if strings.HasSuffix(f.Name, ".tflite") && emitted != nil {
				f.Data = emitted
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644))
		}
	}
	dir := t.TempDir()
	write(dir, nil)
	r, err := VerifyPlanFile(filepath.Join(dir, out.Prefix()+PlanSuffix), "")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "original.tflite"), r.Model, "found by sha256, not the rewrite beside the plan")

	bad, err := tflite.Load(out.TFLite.Data)
	require.NoError(t, err)
	bad = cloneForMutation(bad)
	found := false
	for _, op := range bad.Subgraphs[0].Ops {
		if op.Name() == "STRIDED_SLICE" && strings.Contains(bad.Tensor(0, op.Outputs[0]).Name, "/stripe1/") {
			end := int32Data(bad, 0, op.Inputs[2])
			end[1]--
			setInt32Data(bad, 0, op.Inputs[2], end)
			found = true
			break
		}
	}
	require.True(t, found, "stripe 1 slices a tensor")
	enc, err := tflite.Encode(bad, tflite.EncodeOptions{})
	require.NoError(t, err)
	dir = t.TempDir()
	write(dir, enc)
	_, err = VerifyPlanFile(filepath.Join(dir, out.Prefix()+PlanSuffix), "")
	var ve *VerifyError
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, messages(ve.Violations), "RewriteMismatch: person_detect.tflite: tensor ")
	assert.Contains(t, messages(ve.Violations), "/stripe1/slice/end): its constant data")
}
