package heliac_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/heliac/heliac/"

// allowed lists, for each package, the heliac packages its non-test files
// may import. Data flows one way: schema -> graph -> liveness -> plan ->
// emit -> driver -> cmd, with plan/dsa below plan, config (files -> plan
// options) between plan and cmd, kernels (the kernel libraries' contracts,
// data read from their sources) between graph and liveness, order (the
// operators' order, which liveness takes) beside liveness on graph alone,
// verify beside the planner, sharing nothing with it but graph and
// kernels, and the root package (the Go entry point: options -> driver
// config) and zoo (many models at once) between driver and cmd. The bench
// command compiles as the CLI does, through the root package's options.
var allowed = map[string][]string{
	"graph":                     {},
	"tflite/schema":             {},
	"tflite":                    {"graph", "tflite/schema"},
	"kernels":                   {"graph", "internal/flexbuf"},
	"liveness":                  {"graph", "kernels"},
	"order":                     {"graph"},
	"traffic":                   {"graph", "kernels", "liveness"},
	"plan/dsa":                  {},
	"plan":                      {"graph", "kernels", "liveness", "plan/dsa", "traffic"},
	"config":                    {"kernels", "plan", "internal/inputfile"},
	"kernels/prepared":          {"graph", "kernels"},
	"emit":                      {"graph", "kernels", "kernels/prepared", "liveness", "plan"},
	"verify":                    {"graph", "kernels"},
	"tflmarena":                 {"graph", "kernels"},
	"stripe":                    {"graph"},
	"driver":                    {"graph", "kernels", "tflite", "liveness", "order", "plan", "plan/dsa", "emit", "verify", "tflmarena", "stripe", "internal/inputfile"},
	".":                         {"driver", "emit", "kernels", "plan", "tflmarena"},
	"zoo":                       {"driver", "internal/inputfile"},
	"cmd/heliac":                {".", "config", "driver", "emit", "graph", "kernels", "liveness", "plan", "plan/dsa", "tflite", "tflmarena", "zoo", "internal/inputfile"},
	"internal/corpus":           {},
	"internal/inputfile":        {},
	"internal/flexbuf":          {},
	"internal/randmodel":        {"graph"},
	"internal/validmodel":       {"graph"},
	"internal/tflmrun":          {"internal/corpus"},
	"internal/cmd/skips":        {"internal/corpus", "internal/tflmrun"},
	"internal/cmd/testprogress": {},
	"internal/cmd/boardsize":    {"config"},
	"internal/exampletest":      {"internal/corpus"},
	"internal/cmd/bench":        {".", "internal/corpus", "internal/tflmrun", "tflite", "graph", "liveness", "kernels", "plan", "plan/dsa", "emit", "driver", "tflmarena"},
}

// stdlibOnly lists the packages that may import nothing outside heliac but
// the standard library. File formats (YAML, flatbuffers) stay out of them:
// config reads YAML for plan, tflite reads flatbuffers for graph.
var stdlibOnly = map[string]bool{"graph": true, "kernels": true, "liveness": true, "order": true, "plan/dsa": true, "plan": true, "tflmarena": true, "stripe": true, "traffic": true}

func TestDependencies(t *testing.T) {
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		rules, known := allowed[pkg]
		if !assert.True(t, known, "package %s has no dependency rule in deps_test.go", pkg) {
			return nil
		}
		seen[pkg] = true
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == strings.TrimSuffix(module, "/") {
				p = module + "." // the root package, heliac's Go entry point
			}
			if !strings.HasPrefix(p, module) {
				if stdlibOnly[pkg] {
					assert.NotContains(t, p, ".", "%s: %s may use only the standard library, not %s", path, pkg, p)
				}
				continue
			}
			dep := strings.TrimPrefix(p, module)
			assert.Contains(t, rules, dep, "%s: package %s must not import %s", path, pkg, dep)
		}
		return nil
	})
	require.NoError(t, err)
	var missing []string
	for pkg := range allowed {
		if !seen[pkg] {
			missing = append(missing, pkg)
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "rules for packages that do not exist")
}
