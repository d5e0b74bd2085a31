package emit

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/internal/corpus"
)

// TestResolverMethods reads MicroMutableOpResolver's AddXxx methods from
// ../shared/tflm's micro_mutable_op_resolver.h (TFLM @90b983c) and checks
// that tflmResolverBuiltins and tflmResolverCustom name each method for
// the operator it registers, and miss none but AddEthosU.
func TestResolverMethods(t *testing.T) {
	shared := corpus.SharedDir()
	if shared == "" {
		t.Skip("../shared not found")
	}
	src, err := os.ReadFile(filepath.Join(shared, "tflm", "include", "tensorflow", "lite", "micro", "micro_mutable_op_resolver.h"))
	if os.IsNotExist(err) {
		t.Skip("../shared/tflm/include not found")
	}
	require.NoError(t, err)
	builtins, custom := map[string]string{}, map[string]string{}
	method := regexp.MustCompile(`(?s)TfLiteStatus (Add\w+)\((.*?)\n  \}`)
	for _, m := range method.FindAllStringSubmatch(string(src), -1) {
		name, body := m[1], m[2]
		if name == "AddBuiltin" || name == "AddCustom" || name == "AddEthosU" {
			continue
		}
		if b := regexp.MustCompile(`BuiltinOperator_(\w+)`).FindStringSubmatch(body); b != nil {
			builtins[b[1]] = name
		} else if c := regexp.MustCompile(`AddCustom\(\s*"(\w+)"`).FindStringSubmatch(body); c != nil {
			custom[c[1]] = name
		} else {
			t.Errorf("%s registers neither a builtin nor a named custom operator", name)
		}
	}
	require.Greater(t, len(builtins), 90, "the header's methods were read")
	assert.Equal(t, builtins, tflmResolverBuiltins)
	assert.Equal(t, custom, tflmResolverCustom)
}
