package driver_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

// An Ethos-U operator's command stream reaches its inputs and outputs
// through the base address of its scratch tensor (TFLM's ethos_u kernel,
// tflite-micro 90b983c), so a Vela model's own offline plan is part of
// what it computes: these tests check that heliac keeps every such
// tensor's offset from the scratch, in its plan and in the model
// --emit-tflite writes.

// offlinePlanOf returns a model's offline plan, one offset per tensor of
// every subgraph, or fails the test.
func offlinePlanOf(t *testing.T, m *graph.Model) []int32 {
	t.Helper()
	for _, md := range m.Metadata {
		if md.Name == graph.OfflinePlanName {
			_, _, offs, err := graph.ReadOfflinePlan(m.Buffers[md.Buffer].Data)
			require.NoError(t, err)
			return offs
		}
	}
	require.Fail(t, "the model has no offline plan")
	return nil
}

// ethosURelative returns, for every ethos-u operator of m (subgraph 0),
// the offset the plan offs gives each operand from the scratch on
// (scratch, fast scratch, inputs, outputs), minus the scratch's; -1
// operands are left out.
func ethosURelative(m *graph.Model, offs []int32) map[string]int64 {
	out := map[string]int64{}
	for oi, op := range m.Subgraphs[0].Ops {
		if op.Code != graph.Custom || op.CustomName != "ethos-u" {
			continue
		}
		base := offs[op.Inputs[2]]
		for _, t := range append(append([]graph.TensorID{}, op.Inputs[2:]...), op.Outputs...) {
			if offs[t] >= 0 {
				out[graph.OpRef{Op: graph.OpIndex(oi)}.String()+" "+m.Subgraphs[0].Tensors[t].Name] = int64(offs[t]) - int64(base)
			}
		}
	}
	return out
}

// velaTensor is a tensor of a hand-made Vela-like model and its offline
// offset (-1: TFLM places it).
type velaTensor struct {
	name   string
	typ    graph.ElementType
	shape  []int32
	data   []byte
	offset int32
}

// velaModel builds a model of the given tensors and operators with the
// tensors' offsets as its OfflineMemoryAllocation metadata (version 0,
// as Vela writes it).
func velaModel(t *testing.T, tensors []velaTensor, ops []graph.Op, inputs, outputs []graph.TensorID) []byte {
	t.Helper()
	m := &graph.Model{Version: tflite.SchemaVersion, Buffers: []graph.Buffer{{}}, Description: "hand-made Vela-like model"}
	sg := graph.Subgraph{Ops: ops, Inputs: inputs, Outputs: outputs}
	words := []int32{0, 1, int32(len(tensors))}
	for _, vt := range tensors {
		size, err := graph.ByteSize(vt.typ, vt.shape)
		require.NoError(t, err)
		gt := graph.Tensor{Name: vt.name, Type: vt.typ, Shape: vt.shape, Size: size}
		if vt.data != nil {
			gt.Buffer = graph.BufferIndex(len(m.Buffers))
			m.Buffers = append(m.Buffers, graph.Buffer{Data: vt.data})
		}
		sg.Tensors = append(sg.Tensors, gt)
		words = append(words, vt.offset)
	}
	md := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(md[4*i:], uint32(w))
	}
	m.Metadata = []graph.Metadata{{Name: graph.OfflinePlanName, Buffer: graph.BufferIndex(len(m.Buffers))}}
	m.Buffers = append(m.Buffers, graph.Buffer{Data: md})
	m.Subgraphs = []graph.Subgraph{sg}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	return data
}

func ethosU(inputs []graph.TensorID, outputs ...graph.TensorID) graph.Op {
	return graph.Op{Code: graph.Custom, CustomName: "ethos-u", Version: 1, Inputs: inputs, Outputs: outputs}
}

// relu is RELU (builtin 19), an operator the CPU runs.
func relu(in, out graph.TensorID) graph.Op {
	return graph.Op{Code: 19, Version: 1, Inputs: []graph.TensorID{in}, Outputs: []graph.TensorID{out}}
}

// velaModels are hand-made Vela-like models: the layout of the second
// Vela model the audit saw (output at 0, input at 8,960, scratch and fast
// scratch at 0), alone; the same between CPU operators, with tensors the
// model's plan leaves to TFLM around it and one live across it; two
// ethos-u operators sharing one scratch; and a scratch that lies above
// its operands.
func velaModels(t *testing.T) map[string][]byte {
	return velaModelsWith(t, 8960)
}

// velaModelsWith is velaModels with the lone operator's input at ifm.
func velaModelsWith(t *testing.T, ifm int32) map[string][]byte {
	cs := velaTensor{"cmd", graph.Uint8, []int32{64}, make([]byte, 64), -1}
	wt := velaTensor{"flash", graph.Uint8, []int32{128}, make([]byte, 128), -1}
	scratch := velaTensor{"scratch", graph.Uint8, []int32{12000}, nil, 0}
	fast := velaTensor{"scratch_fast", graph.Uint8, []int32{12000}, nil, 0}
	return map[string][]byte{
		"alone": velaModel(t, []velaTensor{
			{"out", graph.Int8, []int32{1, 8}, nil, 0}, cs, wt, scratch, fast,
			{"in", graph.Int8, []int32{1, 16, 16, 4}, nil, ifm},
		}, []graph.Op{ethosU([]graph.TensorID{1, 2, 3, 4, 5}, 0)}, []graph.TensorID{5}, []graph.TensorID{0}),
		"scratch above its operands": velaModel(t, []velaTensor{
			{"out", graph.Int8, []int32{1, 8}, nil, 0}, cs, wt,
			{"scratch", graph.Uint8, []int32{4096}, nil, 2048},
			{"scratch_fast", graph.Uint8, []int32{4096}, nil, 6144},
			{"in", graph.Int8, []int32{1, 16, 16, 4}, nil, 1024},
		}, []graph.Op{ethosU([]graph.TensorID{1, 2, 3, 4, 5}, 0)}, []graph.TensorID{5}, []graph.TensorID{0}),
		"between CPU operators": velaModel(t, []velaTensor{
			{"x", graph.Int8, []int32{1, 16, 16, 4}, nil, -1},
			{"ifm", graph.Int8, []int32{1, 16, 16, 4}, nil, 8960},
			cs, wt, scratch, fast,
			{"ofm", graph.Int8, []int32{1, 8}, nil, 0},
			{"y", graph.Int8, []int32{1, 8}, nil, -1},
			{"z", graph.Int8, []int32{1, 16, 16, 4}, nil, -1},
		}, []graph.Op{
			relu(0, 1),
			relu(0, 8), // z, live across the ethos-u operator
			ethosU([]graph.TensorID{2, 3, 4, 5, 1}, 6),
			relu(6, 7),
		}, []graph.TensorID{0}, []graph.TensorID{7, 8}),
		"two operators, one scratch": velaModel(t, []velaTensor{
			{"x", graph.Int8, []int32{1, 16, 16, 4}, nil, 4096},
			cs, wt, scratch, fast,
			{"mid", graph.Int8, []int32{1, 64}, nil, 0},
			{"mid2", graph.Int8, []int32{1, 64}, nil, 2048},
			{"y", graph.Int8, []int32{1, 8}, nil, 0},
			{"cmd2", graph.Uint8, []int32{32}, make([]byte, 32), -1},
		}, []graph.Op{
			ethosU([]graph.TensorID{1, 2, 3, 4, 0}, 5),
			relu(5, 6),
			ethosU([]graph.TensorID{8, 2, 3, 4, 6}, 7),
		}, []graph.TensorID{0}, []graph.TensorID{7}),
	}
}

// TestVelaKeepsRelativeOffsets compiles the corpus's Vela model and the
// hand-made ones as the CLI does (in place, memory order), under TFLM's
// rules and without aliasing, with --emit-tflite, and expects every
// ethos-u operand the model's plan places at the model's own offset from
// the operator's scratch: in the plan and in the model written out. The
// summary says so.
func TestVelaKeepsRelativeOffsets(t *testing.T) {
	models := velaModels(t)
	if shared := corpus.SharedDir(); shared != "" {
		for _, e := range corpus.Manifest(t) {
			if e.File == "tflite-micro/person_detect_vela.tflite" {
				data, err := os.ReadFile(filepath.Join(shared, "corpus", e.File))
				require.NoError(t, err)
				models[e.File] = data
			}
		}
		require.Contains(t, models, "tflite-micro/person_detect_vela.tflite")
	} else {
		t.Log("../shared is absent: the corpus's Vela model is skipped")
	}
	noAlias := driver.Config{Liveness: liveness.Options{NoAlias: true}}
	configs := map[string]driver.Config{"cli defaults": referenceConfig(t), "tflm rules": {}, "no alias": noAlias}
	for name, data := range models {
		m, err := tflite.Load(data)
		require.NoError(t, err)
		want := ethosURelative(m, offlinePlanOf(t, m))
		require.NotEmpty(t, want)
		for cname, cfg := range configs {
			t.Run(name+"/"+cname, func(t *testing.T) {
				cfg.ModelName, cfg.Version, cfg.EmitTFLite = "vela", "test", true
				out, err := driver.Compile(context.Background(), data, cfg)
				require.NoError(t, err)
				emitted, err := tflite.Load(out.TFLite.Data)
				require.NoError(t, err)
				assert.Equal(t, want, ethosURelative(emitted, offlinePlanOf(t, emitted)), "the emitted model's offline plan")
				summary := string(emit.Summary(out.Model, out.Plan))
				assert.Contains(t, summary, "at the model's own relative offsets")
				assert.Contains(t, summary, "the operators run in the model's order, which that plan was made for")
				assert.Equal(t, liveness.OrderModel, out.Plan.Schedule.Ordering.Strategy, "the model's plan was made for its order")
			})
		}
	}
}

// TestVelaMovedMemberRejected moves one ethos-u operand of a verified plan
// away from the scratch (its alias bookkeeping kept consistent) and
// expects the verifier to name it.
func TestVelaMovedMemberRejected(t *testing.T) {
	data := velaModels(t)["between CPU operators"]
	out, err := driver.Compile(context.Background(), data, driver.Config{ModelName: "vela", Version: "test"})
	require.NoError(t, err)
	require.Empty(t, verify.Plan(out.Model, out.PlanJSON))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(out.PlanJSON, &doc))
	moved := false
	for _, a := range doc["tensor_allocs"].(map[string]any) {
		a := a.(map[string]any)
		if a["name"] != "ifm" {
			continue
		}
		b := a["binding"].(map[string]any)
		b["offset"] = b["offset"].(float64) + 16
		off, _ := a["alias_offset"].(float64)
		a["alias_offset"] = off + 16
		moved = true
	}
	require.True(t, moved)
	tampered, err := json.Marshal(doc)
	require.NoError(t, err)
	var found []string
	for _, v := range verify.Plan(out.Model, tampered) {
		if v.Kind.String() == "OwnOffset" {
			found = append(found, v.Msg)
		}
	}
	require.Len(t, found, 1)
	assert.Contains(t, found[0], `0:1 (ifm) lies 8976 bytes from 0:4 (scratch)`)
}

// TestVelaMisalignedOwnOffset: an operand the model's plan puts at a
// distance from the scratch that the arena's alignment cannot give fails
// the compile with a message naming the tensor and the operator, rather
// than moving it.
func TestVelaMisalignedOwnOffset(t *testing.T) {
	data := velaModelsWith(t, 8968)["alone"]
	_, err := driver.Compile(context.Background(), data, driver.Config{ModelName: "vela", Version: "test"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `tensor 0:5 "in" must lie 8968 bytes from 0:3, as the model's own offline plan puts it for operator 0:0 (CUSTOM:ethos-u)`)
}

// TestVelaOwnOffsetVariableClash: TFLM looks an is_variable tensor of a
// later subgraph up by its index in subgraph 0, so an ethos-u operand at
// that index cannot keep its offset in the emitted model; --emit-tflite
// says so instead of dropping it.
func TestVelaOwnOffsetVariableClash(t *testing.T) {
	m, err := tflite.Load(velaModels(t)["alone"])
	require.NoError(t, err)
	v := graph.Tensor{Name: "state", Type: graph.Int8, Shape: []int32{4}, Size: 4, IsVariable: true}
	m.Subgraphs = append(m.Subgraphs, graph.Subgraph{Name: "other", Tensors: []graph.Tensor{v}})
	offs := offlinePlanOf(t, m)
	words := append([]int32{0, 2, int32(len(offs) + 1)}, append(offs, -1)...)
	md := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(md[4*i:], uint32(w))
	}
	m.Buffers[m.Metadata[0].Buffer] = graph.Buffer{Data: md}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	out, err := driver.Compile(context.Background(), data, driver.Config{ModelName: "vela", Version: "test"})
	require.NoError(t, err, "the plan itself is fine")
	require.Contains(t, string(emit.Summary(out.Model, out.Plan)), "kept 4 tensor(s) at the model's own relative offsets")
	_, err = driver.Compile(context.Background(), data, driver.Config{ModelName: "vela", Version: "test", EmitTFLite: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tensor 0:0 must keep its offset for operator 0:0 (CUSTOM:ethos-u)")
}

// TestVelaSeparatePlanRejected gives the lone ethos-u operator's operands
// buffers of their own, apart from the scratch, as heliac did before it
// kept the model's offsets, and expects the verifier to name each.
func TestVelaSeparatePlanRejected(t *testing.T) {
	data := velaModels(t)["alone"]
	out, err := driver.Compile(context.Background(), data, driver.Config{ModelName: "vela", Version: "test"})
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(out.PlanJSON, &doc))
	next := 12000.0
	for _, a := range doc["tensor_allocs"].(map[string]any) {
		a := a.(map[string]any)
		if a["alias_of"] == nil {
			continue
		}
		a["alias_of"] = nil
		delete(a, "alias_offset")
		a["binding"].(map[string]any)["offset"] = next
		next += 12000
	}
	separate, err := json.Marshal(doc)
	require.NoError(t, err)
	var found []string
	for _, v := range verify.Plan(out.Model, separate) {
		if v.Kind.String() == "OwnOffset" {
			found = append(found, v.Msg)
		}
	}
	assert.Len(t, found, 3, "the fast scratch, the input and the output")
}

// TestVelaDataOperandsKeptApartInTime: the model's plan lets two ethos-u
// operands other than the scratch regions share bytes only at the step of
// an operator that has both; a plan whose lifetimes make two such
// operands of different operators (mid and y, both at offset 0) live at
// once is an overlap, although both keep the model's offsets.
func TestVelaDataOperandsKeptApartInTime(t *testing.T) {
	data := velaModels(t)["two operators, one scratch"]
	out, err := driver.Compile(context.Background(), data, driver.Config{ModelName: "vela", Version: "test"})
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(out.PlanJSON, &doc))
	doc["tensor_lifetimes"].(map[string]any)["0:7"].(map[string]any)["start_op"] = 1.0
	early, err := json.Marshal(doc)
	require.NoError(t, err)
	var overlaps []string
	for _, v := range verify.Plan(out.Model, early) {
		if v.Kind == verify.Overlap {
			overlaps = append(overlaps, v.Msg)
		}
	}
	require.Len(t, overlaps, 1, "only mid and y")
	assert.Contains(t, overlaps[0], "0:5 (mid)")
	assert.Contains(t, overlaps[0], "0:7 (y)")
}
