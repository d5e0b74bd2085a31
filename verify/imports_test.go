package verify

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImports keeps the verifier independent of the planner: its non-test
// code may import the standard library, graph and kernels (the contracts
// as data, which the TFLM runs prove), nothing else.
func TestImports(t *testing.T) {
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	fset := token.NewFileSet()
	files := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		files++
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			first, _, _ := strings.Cut(path, "/")
			std := !strings.Contains(first, ".")
			assert.True(t, std || path == "github.com/heliac/heliac/graph" || path == "github.com/heliac/heliac/kernels",
				"%s imports %s; verify may import only the standard library, graph and kernels", name, path)
		}
	}
	assert.NotZero(t, files)
}
