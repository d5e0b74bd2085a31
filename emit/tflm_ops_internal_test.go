package emit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/tflite"
)

// opsModel is a model whose operators the tests map.
type opsModel struct {
	name string
	m    *graph.Model
	// noKernel names the operators TFLM found no registration for, as
	// ../shared/bench/tflm-reference.tsv records them ("TOPK_V2",
	// "CUSTOM:ethos-u"); nil for a model TFLM registered every operator of.
	noKernel map[string]bool
}

// opsModels returns the bundled models and the corpus
// (when ../shared is there), each with what TFLM said of it.
func opsModels(t *testing.T) []opsModel {
	t.Helper()
	paths, err := filepath.Glob("../testdata/models/*.tflite")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	sort.Strings(paths)
	var out []opsModel
	load := func(name, path string) *graph.Model {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		m, err := tflite.Load(data)
		require.NoError(t, err, name)
		return m
	}
	for _, p := range paths {
		out = append(out, opsModel{name: filepath.Base(p), m: load(filepath.Base(p), p)})
	}
	dir := corpus.SharedDir()
	if dir == "" {
		return out
	}
	rows, err := corpus.ReadTSV(filepath.Join(dir, "bench", "tflm-reference.tsv"))
	require.NoError(t, err)
	missing := map[string]map[string]bool{}
	for _, r := range rows {
		missing[r["model"]] = unregistered(r["unsupported_or_error"])
	}
	for _, e := range corpus.Manifest(t) {
		out = append(out, opsModel{name: e.File, m: load(e.File, e.Path), noKernel: missing[e.File]})
	}
	return out
}

// opName matches an operator name as tflm-reference.tsv lists those TFLM
// found no registration for, before its error message.
var opName = regexp.MustCompile(`^([A-Z][A-Z0-9_]*|CUSTOM:\S+)$`)

// unregistered reads the operator names that lead a
// tflm-reference.tsv unsupported_or_error field.
func unregistered(field string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(field) {
		if !opName.MatchString(w) {
			break
		}
		out[w] = true
	}
	return out
}

// TestTFLMOpsOfModels maps every operator of the bundled models and the
// corpus: an operator TFLM registered (per tflm_run's record) maps, one it
// found no registration for is refused naming it; then every definition
// the mapped operators give is compiled in one C++ translation unit with
// TFLM's headers, and linked against TFLM's host library.
func TestTFLMOpsOfModels(t *testing.T) {
	type def struct{ typ, init, register string }
	seen := map[def]bool{}
	var defs []def
	var customs [][]byte
	headers := map[string]bool{}
	mapped := 0
	for _, om := range opsModels(t) {
		for si := range om.m.Subgraphs {
			for oi := range om.m.Subgraphs[si].Ops {
				op := &om.m.Subgraphs[si].Ops[oi]
				got, err := tflmOpOf(om.m, graph.SubgraphIndex(si), op)
				where := fmt.Sprintf("%s op %d:%d %s", om.name, si, oi, op.Name())
				if om.noKernel[op.Name()] {
					if assert.Error(t, err, where) {
						assert.Equal(t, fmt.Sprintf("operator %d:%d %s: TFLM has no kernel for it", si, oi, op.Name()), err.Error())
					}
					continue
				}
				if !assert.NoError(t, err, where) {
					continue
				}
				mapped++
				assert.Equal(t, got.ParamsType == "", got.ParamsInit == "", where)
				if op.Code == graph.Custom {
					assert.Equal(t, op.CustomOptions, got.Custom, where)
					if len(got.Custom) > 0 {
						customs = append(customs, got.Custom)
					}
				} else {
					assert.Nil(t, got.Custom, where)
				}
				for _, h := range got.Headers {
					headers[h] = true
				}
				d := def{got.ParamsType, got.ParamsInit, got.Register}
				if !seen[d] {
					seen[d] = true
					defs = append(defs, d)
				}
			}
		}
	}
	t.Logf("%d operators mapped, %d distinct definitions", mapped, len(defs))

	var src strings.Builder
	src.WriteString("#ifndef TF_LITE_STATIC_MEMORY\n#error TF_LITE_STATIC_MEMORY\n#endif\n#include <cstdarg>\n#include <cstdint>\n#include <cstdio>\n")
	var hs []string
	for h := range headers {
		hs = append(hs, h)
	}
	sort.Strings(hs)
	for _, h := range hs {
		fmt.Fprintf(&src, "#include %q\n", h)
	}
	for i, d := range defs {
		if d.typ != "" {
			fmt.Fprintf(&src, "static %s op%d = %s;\n", d.typ, i, d.init)
		}
	}
	for i, c := range customs {
		fmt.Fprintf(&src, "static const uint8_t custom%d[] = {", i)
		for j, b := range c {
			if j > 0 {
				src.WriteString(", ")
			}
			fmt.Fprintf(&src, "%d", b)
		}
		src.WriteString("};\n")
	}
	src.WriteString("static int use(const volatile void *p) { return p != nullptr; }\nint touch(void) {\n  int n = 0;\n")
	for i, d := range defs {
		fmt.Fprintf(&src, "  { TFLMRegistration r = %s; n += r.invoke != nullptr; }\n", d.register)
		if d.typ != "" {
			fmt.Fprintf(&src, "  n += use(&op%d);\n", i)
		}
	}
	for i := range customs {
		fmt.Fprintf(&src, "  n += custom%d[0];\n", i)
	}
	src.WriteString("  return n;\n}\n")
	src.WriteString(`extern "C" void DebugLog(const char* format, va_list args) { vfprintf(stderr, format, args); }
extern "C" int DebugVsnprintf(char* buf, size_t n, const char* format, va_list args) { return vsnprintf(buf, n, format, args); }
int main() { return touch() > 0 ? 0 : 1; }
`)
	if os.Getenv("HELIAC_DUMP_OPS") != "" {
		_ = os.WriteFile(os.Getenv("HELIAC_DUMP_OPS"), []byte(src.String()), 0o644)
	}
	compileAndLink(t, src.String(), "host-x86_64")
}

// compileAndLink compiles src with g++, TFLM's headers and defines,
// warnings as errors, and links it against TFLM's host library lib (a
// directory of ../shared/tflm/lib).
func compileAndLink(t *testing.T, src, lib string, defines ...string) {
	t.Helper()
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not on PATH")
	}
	dir := corpus.SharedDir()
	if dir == "" {
		t.Skip("../shared not found")
	}
	tflm := filepath.Join(dir, "tflm")
	archive := filepath.Join(tflm, "lib", lib, "libtflm.a")
	if _, err := os.Stat(archive); err != nil {
		t.Skipf("no TFLM library: %v", err)
	}
	work := t.TempDir()
	cc := filepath.Join(work, "ops.cc")
	require.NoError(t, os.WriteFile(cc, []byte(src), 0o644))
	gxx := func(args ...string) {
		t.Helper()
		out, err := exec.Command("g++", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("g++ %s: %v\n%s\n--- source:\n%s", strings.Join(args, " "), err, out, src)
		}
	}
	obj := filepath.Join(work, "ops.o")
	gxx(append([]string{"-std=c++17", "-fno-rtti", "-fno-exceptions", "-DTF_LITE_STATIC_MEMORY", "-Wall", "-Wextra", "-Werror",
		"-I", filepath.Join(tflm, "include"), "-c", cc, "-o", obj}, defines...)...)
	gxx(obj, archive, "-lm", "-o", filepath.Join(work, "ops"))
	out, err := exec.Command(filepath.Join(work, "ops")).CombinedOutput()
	require.NoError(t, err, "%s", out)
}
