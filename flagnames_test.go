package heliac_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
)

// userFacing are the packages whose strings reach a user of the heliac
// command: its errors, hints, help and summary.
var userFacing = []string{".", "cmd/heliac", "driver", "plan", "emit", "config", "zoo", "tflmarena"}

// TestMessagesNameFlags: no string of the packages a user of the heliac
// command reads (errors, hints, help, summary) names a field of
// heliac.Options, the Go layer under the flags, as fieldPattern finds
// them: the message names the flag (--one-scratch-bank, not
// OneScratchBank).
func TestMessagesNameFlags(t *testing.T) {
	named := fieldPattern()
	require.Contains(t, named.String(), "OneScratchBank")
	require.Contains(t, named.String(), "TFLMTarget")
	require.Contains(t, named.String(), "Strict")

	found := 0
	for _, dir := range userFacing {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, dir)
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, file, src, 0)
			require.NoError(t, err)
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				found++
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					s = lit.Value
				}
				if m := named.FindString(s); m != "" {
					t.Errorf("%s: %q names %s; name the flag", fset.Position(lit.Pos()), s, m)
				}
				return true
			})
		}
	}
	assert.Greater(t, found, 1000, "the strings were read")
}

// fieldPattern matches, in a string, a field of heliac.Options (found
// by reflection) named as Go code names it: bare where the name is a Go
// identifier (two capitals or more, not an acronym such as CPU; a word
// such as Strict or Report may open a sentence), and any field after a
// selector (Options.Strict, cfg.Report).
func fieldPattern() *regexp.Regexp {
	var bare, selector []string
	typ := reflect.TypeOf(heliac.Options{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		selector = append(selector, regexp.QuoteMeta(f.Name))
		upper := 0
		for _, r := range f.Name {
			if unicode.IsUpper(r) {
				upper++
			}
		}
		if upper >= 2 && strings.ToUpper(f.Name) != f.Name {
			bare = append(bare, regexp.QuoteMeta(f.Name))
		}
	}
	return regexp.MustCompile(`\b(` + strings.Join(bare, "|") + `)\b|\b[A-Za-z]+\.(` + strings.Join(selector, "|") + `)\b`)
}

// TestMessagesNameFlagsCatches: the pattern of TestMessagesNameFlags
// finds a Go field where the old --one-scratch-bank hint had one.
func TestMessagesNameFlagsCatches(t *testing.T) {
	for _, tc := range []struct {
		msg string
		bad bool
	}{
		{"plan them into one bank with --one-scratch-bank (plan.Options.OneScratchBank)", true},
		{"set TFLMTarget to host64", true},
		{"with Options.Strict", true},
		{"plan them into one bank with --one-scratch-bank", false},
		{"the CPU the kernels run on", false},
		{"Name the model", false},
		{"constexpr int kKernelScratchCount", false},
	} {
		assert.Equal(t, tc.bad, fieldPattern().MatchString(tc.msg), tc.msg)
	}
}
