package kernels

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/tflite/schema"
)

// tflmResolverHeader is where TFLM declares every operator its
// MicroMutableOpResolver registers, one Add* method each.
const tflmResolverHeader = "tensorflow/lite/micro/micro_mutable_op_resolver.h"

// tflmNoArena are registered operators TFLM's arena data may leave out,
// with the reason.
var tflmNoArena = map[string]string{
	// micro_mutable_op_resolver.h AddEthosU registers Register_ETHOSU()
	// under GetString_ETHOSU(), which is null without an Ethos-U NPU
	// build: TFLM cannot run it on these targets.
	"custom ethos-u": "Ethos-U runs on the NPU only",
}

// registeredTFLMOps lists the operators src (micro_mutable_op_resolver.h)
// registers: each AddBuiltin(BuiltinOperator_X, ...) as "X" and each
// AddCustom("Name", ...) or AddCustom(tflite::GetString_NAME(), ...) as
// "custom Name" (GetString_ETHOSU is "ethos-u"), sorted.
func registeredTFLMOps(src string) []string {
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`AddBuiltin\(\s*BuiltinOperator_([A-Z0-9_]+)\s*,`).FindAllStringSubmatch(src, -1) {
		seen[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`AddCustom\(\s*"([^"]+)"`).FindAllStringSubmatch(src, -1) {
		seen["custom "+m[1]] = true
	}
	for _, m := range regexp.MustCompile(`AddCustom\(\s*tflite::GetString_([A-Z0-9_]+)\(\)`).FindAllStringSubmatch(src, -1) {
		name := m[1]
		if name == "ETHOSU" {
			name = "ethos-u" // kernels/ethos_u.h GetString_ETHOSU
		}
		seen["custom "+name] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// tflmProbeTypes are the operand types the probe models try, each a
// function of the operand: input k (k >= 0) or output k (-1-k).
var tflmProbeTypes = []func(operand int) graph.ElementType{
	func(int) graph.ElementType { return graph.Float32 },
	func(int) graph.ElementType { return graph.Int8 },
	func(int) graph.ElementType { return graph.Int16 },
	func(int) graph.ElementType { return graph.Int32 },
	func(int) graph.ElementType { return graph.Bool },
	// A value and int32 indices, axes or shapes.
	func(k int) graph.ElementType {
		if k == 0 || k < 0 {
			return graph.Float32
		}
		return graph.Int32
	},
	// REDUCE_ALL: bool values, int32 axes.
	func(k int) graph.ElementType {
		if k == 0 || k < 0 {
			return graph.Bool
		}
		return graph.Int32
	},
	// ARG_MAX and kin: an int32 output.
	func(k int) graph.ElementType {
		if k == 0 {
			return graph.Float32
		}
		return graph.Int32
	},
	// SELECT_V2: a bool condition.
	func(k int) graph.ElementType {
		if k == 0 {
			return graph.Bool
		}
		return graph.Float32
	},
	// FILL and kin: int32 dims, then a value.
	func(k int) graph.ElementType {
		if k == 0 {
			return graph.Int32
		}
		return graph.Float32
	},
}

// tflmKnows reports whether TFLM's arena data knows the operator named
// (as registeredTFLMOps names it) for at least one probe model: one
// operator with six inputs of shape [1, 4, 4, 4] and three outputs, of
// each of tflmProbeTypes, the inputs variable or constant.
func tflmKnows(t *testing.T, name string) bool {
	t.Helper()
	op := graph.Op{Version: 1}
	if custom, ok := strings.CutPrefix(name, "custom "); ok {
		op.Code, op.CustomName = graph.Custom, custom
	} else {
		code, ok := schema.EnumValuesBuiltinOperator[name]
		require.True(t, ok, "%s: not a builtin operator of the schema", name)
		op.Code, op.CodeName = graph.Opcode(code), name
	}
	for _, types := range tflmProbeTypes {
		for _, constant := range []bool{false, true} {
			m := &graph.Model{Buffers: []graph.Buffer{{}}, Subgraphs: []graph.Subgraph{{}}}
			sg := &m.Subgraphs[0]
			probe := op
			probe.Inputs, probe.Outputs = nil, nil
			add := func(k int) graph.TensorID {
				ty := types(k)
				tn := graph.Tensor{Name: fmt.Sprint(k), Type: ty, Shape: []int32{1, 4, 4, 4}, Size: 64 * max(ty.Bits()/8, 1)}
				if ty == graph.Int8 || ty == graph.Int16 {
					tn.Quantization = &graph.Quantization{Scale: []float32{0.1}, ZeroPoint: []int64{0}}
				}
				if constant && k >= 0 {
					tn.Buffer = graph.BufferIndex(len(m.Buffers))
					m.Buffers = append(m.Buffers, graph.Buffer{Data: make([]byte, tn.Size)})
				}
				sg.Tensors = append(sg.Tensors, tn)
				return graph.TensorID(len(sg.Tensors) - 1)
			}
			for k := range 6 {
				probe.Inputs = append(probe.Inputs, add(k))
			}
			for k := range 3 {
				probe.Outputs = append(probe.Outputs, add(-1-k))
			}
			sg.Ops = []graph.Op{probe}
			for _, ptr := range []int64{8, 4} {
				if _, ok := TFLM(m, 0, &sg.Ops[0], ptr); ok {
					return true
				}
			}
		}
	}
	return false
}

// TestTFLMArenaDataForEveryRegisteredOperator lists the operators TFLM's
// MicroMutableOpResolver registers (../shared/tflm's
// micro_mutable_op_resolver.h: every AddBuiltin and AddCustom of its Add*
// methods) and fails naming each one kernels.TFLM has no arena data for,
// save those tflmNoArena excuses.
func TestTFLMArenaDataForEveryRegisteredOperator(t *testing.T) {
	dir := corpus.SharedDir()
	if dir == "" {
		t.Skip("../shared not found")
	}
	src, err := os.ReadFile(filepath.Join(dir, "tflm", "include", tflmResolverHeader))
	if os.IsNotExist(err) {
		t.Skipf("%s not found", tflmResolverHeader)
	}
	require.NoError(t, err)
	ops := registeredTFLMOps(string(src))
	// A sanity floor: 100 builtins and 18 custom operators at tflmCommit.
	require.GreaterOrEqual(t, len(ops), 118, "parsed too few operators from %s", tflmResolverHeader)
	// tflmRegistered and tflmRegisteredCustom (TFLMRefusal's) are the
	// header's list.
	var listed []string
	for n := range tflmRegistered {
		listed = append(listed, n)
	}
	for n := range tflmRegisteredCustom {
		listed = append(listed, "custom "+n)
	}
	listed = append(listed, "custom ethos-u")
	sort.Strings(listed)
	assert.Equal(t, ops, listed, "tflmRegistered and tflmRegisteredCustom differ from %s", tflmResolverHeader)
	var missing []string
	for _, name := range ops {
		switch {
		case tflmKnows(t, name):
		case tflmNoArena[name] != "":
			t.Logf("%s: no arena data: %s", name, tflmNoArena[name])
		default:
			missing = append(missing, name)
		}
	}
	assert.Empty(t, missing, "registered operators with no TFLM arena data")
}

// TestRegisteredTFLMOps checks the header parsing on a made-up excerpt.
func TestRegisteredTFLMOps(t *testing.T) {
	src := `
  TfLiteStatus AddAbs(const TFLMRegistration& registration = Register_ABS()) {
    return AddBuiltin(BuiltinOperator_ABS, registration, ParseAbs);
  }
  TfLiteStatus AddFilterBankSpectralSubtraction() {
    return AddCustom(
        "SignalFilterBankSpectralSubtraction",
        tflite::tflm_signal::Register_FILTER_BANK_SPECTRAL_SUBTRACTION());
  }
  TfLiteStatus AddEthosU() {
    TFLMRegistration* registration = tflite::Register_ETHOSU();
    if (registration) {
      return AddCustom(tflite::GetString_ETHOSU(), registration);
    }
  }
  TfLiteStatus AddBatchToSpaceNd(
      const TFLMRegistration& registration = Register_BATCH_TO_SPACE_ND()) {
    return AddBuiltin(BuiltinOperator_BATCH_TO_SPACE_ND, registration,
                      ParseBatchToSpaceNd);
  }
  TfLiteStatus AddBuiltin(tflite::BuiltinOperator op,
                          const TFLMRegistration& registration,
                          TfLiteBridgeBuiltinParseFunction parser) {
    if (op == BuiltinOperator_CUSTOM) {
`
	assert.Equal(t, []string{"ABS", "BATCH_TO_SPACE_ND", "custom SignalFilterBankSpectralSubtraction", "custom ethos-u"},
		registeredTFLMOps(src))
}
