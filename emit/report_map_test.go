package emit_test

import (
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/graph"
)

var (
	svgRE      = regexp.MustCompile(`(?s)<svg class="map".*?</svg>`)
	byteTickRE = regexp.MustCompile(`<text class="axis" x="[\d.]+" y="[\d.]+" text-anchor="end">([\d.]+) (B|KiB|MiB)</text>`)
	stepTickRE = regexp.MustCompile(`<text class="axis" x="[\d.]+" y="\d+" text-anchor="middle">(\d+)</text>`)
	rectRE     = regexp.MustCompile(`<rect class="alloc \w+" x="[\d.]+" y="([-\d.]+)" width="([\d.]+)" height="([\d.]+)" data-detail="([^"]*)"`)
	frameRE    = regexp.MustCompile(`<rect class="frame" x="\d+" y="0" width="\d+" height="(\d+)"/>`)
	labelRE    = regexp.MustCompile(`<text class="label"[^>]*>([^<]*)</text>`)
)

// round reports whether v is 1, 2 or 5 times a power of ten.
func round(v float64) bool {
	if v <= 0 {
		return false
	}
	m := v / math.Pow(10, math.Floor(math.Log10(v)+1e-9))
	return math.Abs(m-1) < 1e-9 || math.Abs(m-2) < 1e-9 || math.Abs(m-5) < 1e-9
}

// checkTicks checks one map's axes: address ticks from 0 in equal round
// steps of one unit, step ticks from 0 in equal round steps.
func checkTicks(t *testing.T, svg string, steps int) {
	t.Helper()
	bt := byteTickRE.FindAllStringSubmatch(svg, -1)
	require.GreaterOrEqual(t, len(bt), 2, "an address axis with ticks: %s", svg[:min(len(svg), 400)])
	var prev, step float64
	for i, m := range bt {
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		assert.Equal(t, bt[0][2], m[2], "one unit per axis")
		switch i {
		case 0:
			assert.Zero(t, v, "the axis starts at 0")
		case 1:
			step = v
			assert.True(t, round(step), "a round step: %v %s", step, m[2])
		default:
			assert.InDelta(t, step, v-prev, 1e-9, "equal steps")
		}
		prev = v
	}
	st := stepTickRE.FindAllStringSubmatch(svg, -1)
	require.NotEmpty(t, st, "a step axis with ticks")
	for i, m := range st {
		v, _ := strconv.Atoi(m[1])
		assert.Less(t, v, max(steps, 1))
		if i == 0 {
			assert.Zero(t, v)
		} else if i == 1 {
			assert.True(t, round(float64(v)), "a round step: %d", v)
		}
	}
	assert.LessOrEqual(t, len(st), 13, "few enough to read")
}

// checkBoxes checks that every box of a map is at least 2 units wide and
// high, and inside the frame.
func checkBoxes(t *testing.T, svg string) {
	t.Helper()
	frame := frameRE.FindStringSubmatch(svg)
	require.NotNil(t, frame)
	mh, _ := strconv.ParseFloat(frame[1], 64)
	for _, box := range rectRE.FindAllStringSubmatch(svg, -1) {
		var v [3]float64
		for i := range v {
			f, err := strconv.ParseFloat(box[i+1], 64)
			require.NoError(t, err)
			v[i] = f
		}
		y, w, h := v[0], v[1], v[2]
		assert.GreaterOrEqual(t, w, 2.0, "box %s", box[4])
		assert.GreaterOrEqual(t, h, 2.0, "box %s", box[4])
		assert.True(t, y >= 0 && y+h <= mh+1e-9, "box %s at y %v, %v high, in a frame %v high", box[4], y, h, mh)
	}
}

// TestReportMapAxes: every map of every bundled model's report has round
// ticks on both axes and draws every box at least 2 units wide and high.
func TestReportMapAxes(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "models", "*.tflite"))
	require.NoError(t, err)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			m := readModel(t, f)
			p := buildPlan(t, m)
			r := string(emit.Report(m, p, emit.Meta{ModelName: emit.ModelName(f), Version: "test"}))
			maps := svgRE.FindAllString(r, -1)
			require.Len(t, maps, len(p.Arenas))
			for _, svg := range maps {
				checkTicks(t, svg, p.Schedule.Steps)
				checkBoxes(t, svg)
			}
		})
	}
}

// spikeModel is a 16-byte input, a 1 MiB intermediate and a 16-byte
// output, each made by a custom operator.
func spikeModel() *graph.Model {
	return &graph.Model{
		Buffers: []graph.Buffer{{}},
		Subgraphs: []graph.Subgraph{{
			Tensors: []graph.Tensor{
				tensor("in", graph.Int8, []int32{16}, 0),
				tensor("model/block_1/spike", graph.Int8, []int32{1 << 20}, 0),
				tensor("out", graph.Int8, []int32{16}, 0),
			},
			Ops: []graph.Op{
				{Code: graph.Custom, CustomName: "GROW", Inputs: []graph.TensorID{0}, Outputs: []graph.TensorID{1}},
				{Code: graph.Custom, CustomName: "SHRINK", Inputs: []graph.TensorID{1}, Outputs: []graph.TensorID{2}},
			},
			Inputs:  []graph.TensorID{0},
			Outputs: []graph.TensorID{2},
		}},
	}
}

// TestReportMapSpike: beside a 1 MiB spike, the 16-byte tensors are still
// drawn (2 units high, after the spike, so on top of anything it covers);
// the spike's box carries its id and short name, the small ones none;
// addresses are in KiB.
func TestReportMapSpike(t *testing.T) {
	m := spikeModel()
	p := buildPlan(t, m)
	r := string(emit.Report(m, p, emit.Meta{ModelName: "spike", Version: "test"}))
	svg := svgRE.FindString(r)
	require.NotEmpty(t, svg)
	checkTicks(t, svg, p.Schedule.Steps)
	assert.Contains(t, svg, ">1000 KiB</text>", "the top tick of a 1 MiB arena, in steps of 200 KiB")

	checkBoxes(t, svg)
	boxes := rectRE.FindAllStringSubmatch(svg, -1)
	require.Len(t, boxes, 3)
	assert.True(t, strings.HasPrefix(boxes[0][4], "0:1 "), "the spike first: %s", boxes[0][4])
	for _, b := range boxes[1:] {
		h, _ := strconv.ParseFloat(b[3], 64)
		assert.Equal(t, 2.0, h, "a 16-byte tensor beside the spike is 2 units high: %s", b[4])
	}
	var labels []string
	for _, l := range labelRE.FindAllStringSubmatch(svg, -1) {
		labels = append(labels, l[1])
	}
	assert.Equal(t, []string{"0:1 block_1/spike"}, labels, "the large box is labelled with its id and short name")
}
