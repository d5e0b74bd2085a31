package emit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The runtime tests' precompiled header (driver/testdata/runtime/tflm_pch.h)
// includes every TFLM header a runtime can include, so that no runtime
// compile parses TFLM's headers again.
func TestPCHHasEveryRuntimeHeader(t *testing.T) {
	pch, err := os.ReadFile(filepath.Join("..", "driver", "testdata", "runtime", "tflm_pch.h"))
	require.NoError(t, err)
	headers := append([]string{microOpsHeader, builtinDataHeader}, tflmRuntimeHeaders...)
	for _, k := range tflmCustom {
		headers = append(headers, k.header)
	}
	for _, k := range cmsisSpecialisations {
		headers = append(headers, k.header)
	}
	for _, h := range headers {
		assert.Contains(t, string(pch), "#include \""+h+"\"\n", "tflm_pch.h includes %s", h)
	}
}
