package emit

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/heliac/heliac/kernels"
)

// TestTFLMOpsMatchKernels: the operators the runtime registers are those
// kernels.TFLMRefusals takes TFLM to have kernels for (both read from
// micro_mutable_op_resolver.h @90b983c).
func TestTFLMOpsMatchKernels(t *testing.T) {
	keys := func(m map[string]tflmBuiltin) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	assert.Equal(t, kernels.TFLMBuiltinOps(), keys(tflmBuiltins))
	var custom []string
	for k := range tflmCustom {
		custom = append(custom, k)
	}
	slices.Sort(custom)
	assert.Equal(t, kernels.TFLMCustomOps(), custom)
}
