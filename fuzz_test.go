package heliac_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMakeFuzzCoversEveryTarget checks that the Makefile's FUZZ_TARGETS
// names every fuzz target of the tree, so make fuzz runs them all.
func TestMakeFuzzCoversEveryTarget(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)FUZZ_TARGETS := (.*?)\n\n`).FindSubmatch(mk)
	require.NotNil(t, m, "Makefile has no FUZZ_TARGETS")
	listed := strings.Fields(strings.ReplaceAll(string(m[1]), "\\", " "))
	var found []string
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			if name := funcName(decl); strings.HasPrefix(name, "Fuzz") {
				found = append(found, filepath.ToSlash(filepath.Dir(path))+":"+name)
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.ElementsMatch(t, found, listed)
}

func funcName(d ast.Decl) string {
	if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
		return fd.Name.Name
	}
	return ""
}
