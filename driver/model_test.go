package driver_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/tflite"
	"github.com/heliac/heliac/verify"
)

// diamondModel is in -> ABS -> a, in -> NEG -> b, (a, b) -> ADD -> out:
// ABS and NEG may run in either order, ADD must come last.
func diamondModel(t *testing.T) []byte {
	t.Helper()
	f32 := func(name string) graph.Tensor {
		return graph.Tensor{Name: name, Type: graph.Float32, Shape: []int32{1, 64}, Size: 256}
	}
	op := func(name string, code graph.Opcode, in, out []graph.TensorID) graph.Op {
		return graph.Op{Code: code, CodeName: name, Version: 1, Inputs: in, Outputs: out}
	}
	m := &graph.Model{Version: 3, Buffers: []graph.Buffer{{}}, Subgraphs: []graph.Subgraph{{
		Tensors: []graph.Tensor{f32("in"), f32("a"), f32("b"), f32("out")},
		Inputs:  []graph.TensorID{0}, Outputs: []graph.TensorID{3},
		Ops: []graph.Op{
			op("ABS", 101, []graph.TensorID{0}, []graph.TensorID{1}),
			op("NEG", 59, []graph.TensorID{0}, []graph.TensorID{2}),
			op("ADD", 0, []graph.TensorID{1, 2}, []graph.TensorID{3}),
		},
	}}}
	data, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	return data
}

type scheduleEntry struct {
	Subgraph int    `json:"subgraph"`
	Operator int    `json:"operator"`
	Name     string `json:"name"`
	StartOp  int    `json:"start_op"`
	EndOp    int    `json:"end_op"`
}

// TestScheduleIsData runs a reordered schedule through the whole pipeline:
// the plan follows the order, plan.json records it, the verifier accepts
// it, and an order that breaks a data dependency is caught.
func TestScheduleIsData(t *testing.T) {
	data := diamondModel(t)
	compile := func(order []graph.OpIndex) (*driver.Output, error) {
		cfg := testConfig("diamond")
		if order != nil {
			cfg.Liveness.Order = [][]graph.OpIndex{order}
		}
		return driver.Compile(context.Background(), data, cfg)
	}
	out, err := compile([]graph.OpIndex{1, 0, 2})
	require.NoError(t, err, "NEG before ABS is a valid order")
	var doc struct {
		Schedule []scheduleEntry `json:"schedule"`
	}
	require.NoError(t, json.Unmarshal(out.PlanJSON, &doc))
	assert.Equal(t, []scheduleEntry{{0, 1, "NEG", 1, 1}, {0, 0, "ABS", 2, 2}, {0, 2, "ADD", 3, 3}}, doc.Schedule)
	b, err := out.Plan.Allocation(plan.TensorIDOf(graph.TensorRef{Tensor: 2}))
	require.NoError(t, err)
	assert.Equal(t, liveness.Interval{First: 1, Last: 3}, b.Live, "b is written by NEG, now at step 1")
	model, err := out.Plan.Allocation(plan.TensorIDOf(graph.TensorRef{Tensor: 0}))
	require.NoError(t, err)
	assert.Equal(t, liveness.Interval{First: 0, Last: 2}, model.Live)

	inModelOrder, err := compile(nil)
	require.NoError(t, err)
	assert.NotEqual(t, inModelOrder.Plan.Hash(), out.Plan.Hash(), "the order is part of the plan's hash")

	_, err = compile([]graph.OpIndex{2, 0, 1})
	var ve *driver.VerifyError
	require.True(t, errors.As(err, &ve), "ADD before its inputs must fail verification: %v", err)
	var kinds []verify.Kind
	for _, v := range ve.Violations {
		kinds = append(kinds, v.Kind)
	}
	assert.Contains(t, kinds, verify.BadSchedule)
}

// TestKernelScratchByHand plans a kernel scratch request through the whole
// pipeline: the planner places it in the scratch arena over its operator's
// span, plan.json and the C module carry it, and the verifier accepts it.
func TestKernelScratchByHand(t *testing.T) {
	data, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	cfg := testConfig("hello_world_int8")
	cfg.Plan.KernelScratch = []plan.ScratchRequest{{Op: graph.OpRef{Op: 1}, Size: 100}, {Op: graph.OpRef{Op: 1}, Size: 20}}
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)

	var scratch []plan.Alloc
	for _, a := range out.Plan.Allocs {
		if a.Kind == plan.KernelScratchAlloc {
			scratch = append(scratch, a)
		}
	}
	require.Len(t, scratch, 2)
	for i, a := range scratch {
		assert.Equal(t, i, a.Index)
		assert.Equal(t, liveness.Scratch, a.Class)
		assert.Equal(t, out.Lifetimes.Schedule.Span(graph.OpRef{Op: 1}), a.Live)
		assert.Equal(t, liveness.Scratch, out.Plan.Arena(a.Arena).Role)
	}
	assert.Equal(t, "FULLY_CONNECTED scratch 0", scratch[0].Name)

	var doc struct {
		KernelScratch []struct {
			Operator int `json:"operator"`
			Index    int `json:"index"`
			Size     int `json:"size"`
		} `json:"kernel_scratch"`
	}
	require.NoError(t, json.Unmarshal(out.PlanJSON, &doc))
	require.Len(t, doc.KernelScratch, 2)
	assert.Equal(t, 100, doc.KernelScratch[0].Size)
	assert.Equal(t, 1, doc.KernelScratch[1].Index)
	assert.Nil(t, verify.Plan(out.Model, out.PlanJSON))

	h := string(out.CFiles[0].Data)
	assert.Contains(t, h, "#define HELLO_WORLD_INT8_KERNEL_SCRATCH_COUNT 2u")
	assert.Contains(t, h, "extern const hello_world_int8_kernel_scratch_t hello_world_int8_kernel_scratch[HELLO_WORLD_INT8_KERNEL_SCRATCH_COUNT];")
	assert.Contains(t, string(out.CFiles[1].Data), "/* [1] FULLY_CONNECTED scratch 1 */")

	cfg.Plan.KernelScratch = []plan.ScratchRequest{{Op: graph.OpRef{Op: 9}, Size: 16}}
	_, err = driver.Compile(context.Background(), data, cfg)
	assert.ErrorContains(t, err, "plan: kernel scratch request 0: operator 0:9 does not exist")
}

// TestBankFieldsDeclaredOnce checks that plan.Bank is the one list of bank
// fields: the JSON Schema's bank object names exactly its JSON keys, and
// the verifier needs every one of them but those added later, which a plan
// written before them lacks (optionalBankKeys).
// optionalBankKeys are the bank keys the verifier reads when present:
// boot_init, and the linker sections the C module places arenas in.
var optionalBankKeys = map[string]bool{"boot_init": true, "section": true, "init_section": true}

func TestBankFieldsDeclaredOnce(t *testing.T) {
	var keys []string
	bt := reflect.TypeOf(plan.Bank{})
	for i := range bt.NumField() {
		k, _, _ := strings.Cut(bt.Field(i).Tag.Get("json"), ",")
		keys = append(keys, k)
	}
	c := loadSchema(t)
	bank := c.root["properties"].(map[string]any)["platform"].(map[string]any)["properties"].(map[string]any)["banks"].(map[string]any)["items"].(map[string]any)
	var props []string
	for k := range bank["properties"].(map[string]any) {
		props = append(props, k)
	}
	for k := range optionalBankKeys {
		assert.Contains(t, keys, k, "an optional bank key is a key of plan.Bank")
	}
	assert.ElementsMatch(t, keys, props, "schema bank properties")
	assert.ElementsMatch(t, keys, asStrings(bank["required"]), "schema bank required keys")

	data, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	out, err := driver.Compile(context.Background(), data, testConfig("hello_world_int8"))
	require.NoError(t, err)
	for _, k := range keys {
		var doc map[string]any
		require.NoError(t, json.Unmarshal(out.PlanJSON, &doc))
		delete(doc["platform"].(map[string]any)["banks"].([]any)[0].(map[string]any), k)
		js, err := json.Marshal(doc)
		require.NoError(t, err)
		got := verify.Plan(out.Model, js)
		if optionalBankKeys[k] {
			assert.Empty(t, got, "%s is optional to the verifier", k)
			continue
		}
		assert.True(t, slices.ContainsFunc(got, func(v verify.Violation) bool {
			return v.Kind == verify.Malformed && strings.Contains(v.Msg, `missing key "`+k+`"`)
		}), "verify must need bank key %q: %v", k, got)
	}
}

// TestEmitTFLiteReplacesVelasPlan: a model that carries an offline plan
// already (Vela writes one) gets heliac's in its place.
func TestEmitTFLiteReplacesVelasPlan(t *testing.T) {
	shared := corpus.Require(t)
	data, err := os.ReadFile(filepath.Join(shared, "corpus", "tflite-micro", "person_detect_vela.tflite"))
	require.NoError(t, err)
	cfg := testConfig("person_detect_vela")
	cfg.EmitTFLite = true
	out, err := driver.Compile(context.Background(), data, cfg)
	require.NoError(t, err)
	require.True(t, out.TFLite.Replaced)
	m, err := tflite.Load(out.TFLite.Data)
	require.NoError(t, err)
	var plans int
	for _, md := range m.Metadata {
		if md.Name == graph.OfflinePlanName {
			plans++
			version, _, offsets, err := graph.ReadOfflinePlan(m.Buffers[md.Buffer].Data)
			require.NoError(t, err)
			assert.Equal(t, 1, version, "heliac's, not Vela's (version 0)")
			assert.Len(t, offsets, len(m.Subgraphs[0].Tensors))
		}
	}
	assert.Equal(t, 1, plans)
	assert.Equal(t, len(out.Model.Subgraphs[0].Tensors), len(m.Subgraphs[0].Tensors))
}
