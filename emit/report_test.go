package emit_test

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

var boxRE = regexp.MustCompile(`<rect class="alloc (tensor|inplace|view|kscratch|variable|spilled)"`)

// TestReport renders every bundled model's plan: one box per allocation
// with bytes, each arena's map, nothing fetched from elsewhere, the same
// bytes every time.
func TestReport(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "models", "*.tflite"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			m := readModel(t, f)
			p := buildPlan(t, m)
			meta := emit.Meta{ModelName: emit.ModelName(f), Version: "test"}
			r := emit.Report(m, p, meta)
			assert.Equal(t, r, emit.Report(m, p, meta), "deterministic")
			want := 0
			for _, a := range p.Allocs {
				if a.Size > 0 {
					want++
				}
			}
			assert.Len(t, boxRE.FindAll(r, -1), want, "one box per allocation")
			assert.Contains(t, string(r), `data-allocations="`+itoa(want)+`"`)
			for _, a := range p.Arenas {
				assert.Contains(t, string(r), `<h2 id="arena-`+itoa(int(a.ID))+`">`+a.Name)
			}
			for _, bad := range []string{"http://", "https://", " src=", "<link", "@import"} {
				assert.NotContains(t, string(r), bad, "self-contained")
			}
		})
	}
}

// TestReportKinds: kernel scratch and in-place writes get their own
// colours, the bound line and the peak mark are drawn, and a hostile
// tensor name is escaped.
func TestReportKinds(t *testing.T) {
	m := readModel(t, filepath.Join("..", "testdata", "models", "hello_world_int8.tflite"))
	m.Subgraphs[0].Tensors[0].Name = `</title><script>alert(1)</script>`
	p := buildPlanWith(t, m, plan.Options{KernelScratch: []plan.ScratchRequest{{Op: graph.OpRef{Op: 1}, Size: 48}}})
	r := string(emit.Report(m, p, emit.Meta{ModelName: "hello"}))
	assert.Equal(t, 1, strings.Count(r, `<rect class="alloc kscratch"`))
	assert.Contains(t, r, `<line class="bound"`)
	assert.Contains(t, r, `<line class="peak"`)
	assert.Contains(t, r, "<td>constant (cold)</td>", "a constant arena read where it lies, as plan.json's mode says")
	assert.NotContains(t, r, "<script>alert")
	assert.Equal(t, 1, strings.Count(r, "<script>"), "the report's own script only")
	assert.True(t, bytes.Contains([]byte(r), []byte("&lt;/title&gt;&lt;script&gt;")))
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestScheduleTimedOut: an order whose search stopped on its wall clock
// says so in the summary and plan.json; a proven one does not.
func TestScheduleTimedOut(t *testing.T) {
	m := readModel(t, filepath.Join("..", "testdata", "models", "hello_world_int8.tflite"))
	for _, tt := range []struct {
		ordering liveness.Ordering
		summary  string
		json     bool
	}{
		{liveness.Ordering{Strategy: liveness.OrderMemory, TimedOut: true}, "the search stopped on its wall-clock safety net", true},
		{liveness.Ordering{Strategy: liveness.OrderMemory, Proven: true}, "memory order, proven optimal", false},
	} {
		lt, err := liveness.Analyze(m, liveness.Options{Order: liveness.ModelOrder(m), Ordering: tt.ordering})
		require.NoError(t, err)
		p, err := plan.Build(context.Background(), m, lt, plan.Options{})
		require.NoError(t, err)
		assert.Contains(t, string(emit.Summary(m, p)), tt.summary)
		js, err := emit.JSON(m, p, emit.Meta{ModelName: "hello"})
		require.NoError(t, err)
		assert.Equal(t, tt.json, strings.Contains(string(js), `"timed_out": true`))
	}
}
