package emit

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// Report renders a plan as one self-contained HTML page (no network, no
// files beside it): the arena table; per arena a memory map drawn as SVG,
// steps across and addresses up, one box per allocation (tensors,
// in-place and view aliases, kernel scratch and spilled allocations
// told apart by colour, details on hover), the lower bound as a line and
// the peak step marked; where each scratch arena peaks and what is live
// there; and the largest allocations. Its script counts the boxes it
// finds into the body's data-boxes attribute and any script error into
// data-errors, which the tests read back from a headless browser. The
// same plan gives the same bytes.
func Report(m *graph.Model, p *plan.Plan, meta Meta) []byte { return ReportWithTFLM(m, p, meta, nil) }

// ReportWithTFLM is Report led by a short section comparing the plan's
// head with TFLM's own planner's (tflm; none when nil).
func ReportWithTFLM(m *graph.Model, p *plan.Plan, meta Meta, tflm *TFLMHeads) []byte {
	var b bytes.Buffer
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	title := "heliac plan: " + meta.ModelName
	w("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<style>\n%s</style>\n</head>\n",
		esc(title), reportCSS)
	w("<body data-allocations=\"%d\">\n<h1>%s</h1>\n", countBoxes(p), esc(title))
	reportTFLM(&b, tflm)
	moved := p.Schedule.Moved()
	w("<p>Plan %s · %d subgraph(s), %d step(s), %d operator run(s) · platform %s · %s order%s · planner %s",
		esc(p.Hash()[:16]), len(m.Subgraphs), p.Schedule.Steps, len(p.Schedule.Runs), esc(p.Platform.Name),
		esc(p.Schedule.Ordering.Strategy), map[bool]string{true: fmt.Sprintf(" (%d operator(s) moved)", moved)}[moved > 0], esc(p.Planner))
	if p.Kernels != "" {
		w(" · in place under %s", esc(p.Kernels))
	}
	if src := p.ScratchSource; src.Library != "" {
		w(" · kernel scratch of %s", esc(src.Library))
		if src.CPU != "" {
			w(" on %s", esc(src.CPU))
		}
	}
	w("</p>\n")
	reportArenaTable(&b, p)
	reportTraffic(&b, p)
	w("<p class=\"legend\"><span class=\"tensor\"></span>tensor<span class=\"inplace\"></span>written in place<span class=\"view\"></span>view"+
		"<span class=\"kscratch\"></span>kernel scratch<span class=\"variable\"></span>resource variable<span class=\"spilled\"></span>spilled · "+
		"%sdashed red: lower bound · dotted black: peak step</p>\n", map[bool]string{true: "<span class=\"stripe\"></span>stripe (tensors one stripe computes) · "}[len(m.Stripes) > 0])
	var patches *Patches
	if tflm != nil {
		patches = tflm.Patches
	}
	reportStripes(&b, m, patches)
	w("<div id=\"detail\">Point at a box for its details.</div>\n")
	// Scratch arenas first: they are what a plan is about.
	for _, role := range []liveness.Class{liveness.Scratch, liveness.Persistent, liveness.Constant} {
		for i := range p.Arenas {
			if p.Arenas[i].Role == role {
				reportArena(&b, m, p, &p.Arenas[i])
			}
		}
	}
	reportLargest(&b, p)
	w("<script>\n%s</script>\n</body>\n</html>\n", reportJS)
	return b.Bytes()
}

// reportTFLM writes the report's lead: TFLM's own head beside the plan's
// and the difference, and whose placement the plan keeps when heliac's
// own needed more.
func reportTFLM(b *bytes.Buffer, h *TFLMHeads) {
	if h == nil {
		return
	}
	whole := func(n int64) string { return fmt.Sprintf("<td>%d B</td>", n) }
	th, own, ours, diff := "", "", "", ""
	if h.Target != "" {
		th = fmt.Sprintf("<th>whole tensor_arena (%s)</th>", esc(h.Target))
		own, ours, diff = whole(h.OwnBytes), whole(h.Bytes), "<td>"+esc(Difference(h.Bytes, h.OwnBytes))+"</td>"
	}
	fmt.Fprintf(b, "<section id=\"tflm\">\n<h2>Against TFLM's own planner</h2>\n<table>\n<tr><th></th><th>arena head</th>%s</tr>\n"+
		"<tr><td>TFLM's own planner</td><td>%d B</td>%s</tr>\n<tr><td>heliac's plan</td><td>%d B</td>%s</tr>\n"+
		"<tr><td>difference</td><td>%s</td>%s</tr>\n</table>\n", th, h.OwnHead, own, h.Head, ours, esc(Difference(h.Head, h.OwnHead)), diff)
	fmt.Fprintf(b, "<p>The head is what TFLM's planner places: tensors and the kernels' scratch; TFLM's persistent tail comes on top of both.")
	if h.Target != "" {
		fmt.Fprintf(b, " The whole tensor_arena is the smallest (a multiple of 16 bytes) with which TFLM allocates the model: head, persistent tail and temporaries.")
	}
	if kept := h.keptText(); kept != "" {
		fmt.Fprintf(b, " The plan %s.", esc(kept))
	}
	fmt.Fprintf(b, "</p>\n</section>\n")
}

// esc escapes text for HTML, names included (a tensor name may hold any
// byte).
func esc(s string) string { return html.EscapeString(escapeName(s)) }

// countBoxes counts the allocations the report draws: every one with
// bytes.
func countBoxes(p *plan.Plan) int {
	n := 0
	for _, a := range p.Allocs {
		if a.Size > 0 {
			n++
		}
	}
	return n
}

func reportArenaTable(b *bytes.Buffer, p *plan.Plan) {
	fmt.Fprintf(b, "<h2>Arenas</h2>\n<table>\n<tr><th>arena</th><th>role</th><th>memory</th><th>provider</th><th>bytes</th>"+
		"<th>lower bound</th><th>over bound</th><th>allocations</th><th>bank capacity</th></tr>\n")
	for _, a := range p.Arenas {
		lb, over := "–", "–"
		if a.Role == liveness.Scratch {
			lb = fmt.Sprint(a.LowerBound)
			if a.TensorLowerBound != a.LowerBound {
				lb = fmt.Sprintf("%d (tensors alone %d)", a.LowerBound, a.TensorLowerBound)
			}
			if a.LowerBound > 0 {
				over = Percent(a.Size, a.LowerBound)
			}
		}
		role := a.Role.String()
		if a.Staged() {
			role += " (staged from " + a.Source + ")"
		} else if a.Role == liveness.Constant {
			role += " (cold)"
		}
		capacity := "unlimited"
		if a.Capacity > 0 {
			capacity = fmt.Sprint(a.Capacity)
		}
		fmt.Fprintf(b, "<tr><td><a href=\"#arena-%d\">%s</a></td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td></tr>\n",
			a.ID, esc(a.Name), esc(role), esc(a.Memory), a.Provider, a.Size, lb, over, len(allocsOf(p, a.ID)), capacity)
	}
	fmt.Fprintf(b, "</table>\n")
}

// reportTraffic writes each bank's traffic (plan.BankTraffic): bytes read
// and written per inference, and the staging copy's, once.
func reportTraffic(b *bytes.Buffer, p *plan.Plan) {
	banks := p.BankTraffic()
	if len(banks) == 0 {
		return
	}
	fmt.Fprintf(b, "<h2 id=\"traffic\">Traffic per bank</h2>\n<p>Bytes per inference, an estimate from the loops of TFLM's reference kernels, not a measurement "+
		"(each operator run reads its inputs and writes its outputs once, but a convolution reads its filter and bias once per output pixel "+
		"and its input once per window, a fully connected one its filter and bias once per batch row). Staging: the constants copied once, before the first run.</p>\n"+
		"<table>\n<tr><th>bank</th><th>read per inference</th><th>written per inference</th><th>staging: read</th><th>staging: written</th></tr>\n")
	for _, t := range banks {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td></tr>\n",
			esc(t.Bank), t.PerInference.Read, t.PerInference.Written, t.Staging.Read, t.Staging.Written)
	}
	fmt.Fprintf(b, "</table>\n")
}

// allocsOf returns the allocations of arena id with bytes, in plan order.
func allocsOf(p *plan.Plan, id plan.ArenaID) []*plan.Alloc {
	var out []*plan.Alloc
	for i := range p.Allocs {
		if a := &p.Allocs[i]; a.Arena == id && a.Size > 0 {
			out = append(out, a)
		}
	}
	return out
}

// Memory map geometry, in SVG user units.
const (
	mapWidth  = 960
	mapHeight = 320
	mapLeft   = 78 // room for the address axis
	mapBottom = 34 // room for the step axis and its title
	// minBox is the least width and height a box is drawn with, so that a
	// small tensor stays visible beside a spike hundreds of times its size.
	minBox = 2.0
	// labelChar is the width of one character of a box label (11-unit
	// font), labelHeight the least box height a label fits in.
	labelChar   = 6.2
	labelHeight = 13.0
	// minLabelName is the fewest characters of a name a label shows.
	minLabelName = 8
)

// boxKind classes an allocation for its colour; stripes marks the
// tensors of a rewritten model's stripes (stripeTensors).
func boxKind(p *plan.Plan, a *plan.Alloc, stripes map[graph.TensorRef]stripeInfo) string {
	spilled := slices.ContainsFunc(p.Spills, func(s plan.Spill) bool { return s.Key == a.Key })
	_, stripe := stripes[a.Ref]
	switch {
	case spilled:
		return "spilled"
	case a.Kind == plan.KernelScratchAlloc:
		return "kscratch"
	case a.Kind == plan.VariableAlloc:
		return "variable"
	case a.Kind == plan.TensorAlloc && stripe:
		return "stripe"
	case a.InPlace != nil:
		return "inplace"
	case a.AliasOf != nil:
		return "view"
	}
	return "tensor"
}

// niceStep returns a round step, 1, 2 or 5 times a power of ten, that
// divides span into at most n intervals (and at least 1).
func niceStep(span float64, n int) float64 {
	if span <= 0 || n < 1 {
		return 1
	}
	raw := span / float64(n)
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			return m * pow
		}
	}
	return 10 * pow
}

// byteUnit chooses the unit of an address axis up to height bytes: B,
// KiB or MiB, and its size in bytes.
func byteUnit(height int64) (string, int64) {
	switch {
	case height >= 10<<20:
		return "MiB", 1 << 20
	case height >= 10<<10:
		return "KiB", 1 << 10
	}
	return "B", 1
}

// byteTicks returns the addresses of an axis up to height bytes, at a
// round step of its unit (at most n intervals), and their labels.
func byteTicks(height int64, n int) ([]int64, []string) {
	unit, size := byteUnit(height)
	step := int64(niceStep(float64(height)/float64(size), n) * float64(size))
	step = max(step, 1)
	var at []int64
	var labels []string
	for v := int64(0); v <= height; v += step {
		at = append(at, v)
		labels = append(labels, fmt.Sprintf("%s %s", strconv.FormatFloat(float64(v)/float64(size), 'f', -1, 64), unit))
	}
	return at, labels
}

// shortName is the part of a tensor name a label shows: the first of the
// names a converter joins with ';', without its leading scope when it has
// more than two ("model/conv2d_13/Conv2D" is "conv2d_13/Conv2D").
func shortName(name string) string {
	name, _, _ = strings.Cut(name, ";")
	if parts := strings.Split(name, "/"); len(parts) > 2 {
		name = strings.Join(parts[len(parts)-2:], "/")
	}
	return name
}

// boxLabel returns the label that fits a box width units wide: the
// allocation's id and short name, the name cut short with "…", or the id
// alone (the name when minLabelName of its characters fit); "" when not
// even the id fits.
func boxLabel(a *plan.Alloc, width float64) string {
	fits := func(s string) bool { return float64(utf8.RuneCountInString(s))*labelChar+6 <= width }
	id := keyText(a.Key)
	full := id + " " + escapeName(shortName(a.Name))
	switch {
	case a.Name == "" || !fits(id+" "+strings.Repeat("x", minLabelName)+"…"):
		if fits(id) {
			return id
		}
		return ""
	case fits(full):
		return full
	}
	r := []rune(full)
	n := int((width-6)/labelChar) - 1 // room for the ellipsis
	return string(r[:max(n, 0)]) + "…"
}

// boxText is a box's label as SVG and where it lies.
type boxText struct {
	svg string
	at  labelBox
}

// placeLabel labels the box of a at (x, y), w by h units, inside it:
// across when the label fits its width, else up its height when the box
// is tall and narrow (a large tensor live for one step); ok is false when
// neither fits.
func placeLabel(a *plan.Alloc, x, y, w, h float64) (boxText, bool) {
	if label := boxLabel(a, w); label != "" && h >= labelHeight {
		lx, ly := x+3, y+h/2+4
		width := float64(utf8.RuneCountInString(label)) * labelChar
		return boxText{fmt.Sprintf("<text class=\"label\" x=\"%.2f\" y=\"%.2f\">%s</text>\n", lx, ly, html.EscapeString(label)),
			labelBox{lx, ly - 10, lx + width, ly + 2}}, true
	}
	if label := boxLabel(a, h); label != "" && w >= labelHeight {
		cx, cy := x+w/2+4, y+h/2
		width := float64(utf8.RuneCountInString(label)) * labelChar
		return boxText{fmt.Sprintf("<text class=\"label\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" transform=\"rotate(-90 %.2f %.2f)\">%s</text>\n",
			cx, cy, cx, cy, html.EscapeString(label)), labelBox{cx - 10, cy - width/2, cx + 2, cy + width/2}}, true
	}
	return boxText{}, false
}

// labelBox is where a label is drawn, to keep labels apart.
type labelBox struct{ x0, y0, x1, y1 float64 }

func (l labelBox) overlaps(o labelBox) bool {
	return l.x0 < o.x1 && o.x0 < l.x1 && l.y0 < o.y1 && o.y0 < l.y1
}

// reportArena draws one arena's memory map and says where it peaks:
// boxes (the largest drawn first, so that small ones lie on top), each at
// least minBox wide and high, labelled inside when the label fits; the
// address axis with round ticks in B, KiB or MiB and grid lines, the step
// axis with round ticks.
func reportArena(b *bytes.Buffer, m *graph.Model, p *plan.Plan, ar *plan.Arena) {
	allocs := allocsOf(p, ar.ID)
	stripes := stripeTensors(m)
	fmt.Fprintf(b, "<h2 id=\"arena-%d\">%s · %s · %d B</h2>\n", ar.ID, esc(ar.Name), esc(ar.Memory), ar.Size)
	steps := int64(max(p.Schedule.Steps, 1))
	height := max(ar.Size, 1)
	if ar.Role == liveness.Scratch {
		height = max(height, ar.LowerBound)
	}
	// Persistent and constant allocations hold their bytes at every step:
	// a lower map suffices.
	mh, yTicks := int64(mapHeight), 8
	if ar.Role != liveness.Scratch {
		mh, yTicks = mapHeight/3, 3
	}
	x := func(step int64) float64 { return mapLeft + float64(step)*float64(mapWidth)/float64(steps) }
	y := func(addr int64) float64 { return float64(mh) - float64(addr)*float64(mh)/float64(height) }
	fmt.Fprintf(b, "<svg class=\"map\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"memory map of %s\">\n",
		mapLeft+mapWidth+10, mh+mapBottom+6, esc(ar.Name))
	fmt.Fprintf(b, "<rect class=\"frame\" x=\"%d\" y=\"0\" width=\"%d\" height=\"%d\"/>\n", mapLeft, mapWidth, mh)
	at, labels := byteTicks(height, yTicks)
	for i, v := range at {
		yv := y(v)
		if v > 0 {
			fmt.Fprintf(b, "<line class=\"grid\" x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\"/>\n", mapLeft, yv, mapLeft+mapWidth, yv)
		}
		fmt.Fprintf(b, "<line class=\"tick\" x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\"/>", mapLeft-4, yv, mapLeft, yv)
		fmt.Fprintf(b, "<text class=\"axis\" x=\"%d\" y=\"%.2f\" text-anchor=\"end\">%s</text>\n", mapLeft-6, yv+4, labels[i])
	}
	stepTick := max(int64(niceStep(float64(steps), 12)), 1)
	for s := int64(0); s < steps; s += stepTick {
		xs := (x(s) + x(s+1)) / 2 // a step is a column: its tick at its middle
		fmt.Fprintf(b, "<line class=\"tick\" x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\"/>", xs, mh, xs, mh+4)
		fmt.Fprintf(b, "<text class=\"axis\" x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", xs, mh+15, s)
	}
	fmt.Fprintf(b, "<text class=\"axis title\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">step</text>\n", mapLeft+mapWidth/2, mh+30)
	fmt.Fprintf(b, "<text class=\"axis title\" x=\"12\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 12 %d)\">offset</text>\n", mh/2, mh/2)
	// The largest boxes first: a small one drawn later stays on top.
	order := slices.Clone(allocs)
	slices.SortStableFunc(order, func(x, y *plan.Alloc) int { return cmp.Compare(y.Size, x.Size) })
	var texts bytes.Buffer
	var placed []labelBox
	for _, a := range order {
		first, last := int64(0), steps-1
		if ar.Role == liveness.Scratch {
			first, last = int64(a.Live.First), int64(a.Live.Last)
		}
		x0, x1 := x(first), x(last+1)
		y0, y1 := y(a.Offset+a.Size), y(a.Offset)
		w, h := max(x1-x0, minBox), max(y1-y0, minBox)
		top := min(max(y1-h, 0), float64(mh)-h) // a box grown to minBox stays in the frame
		kind := boxKind(p, a, stripes)
		detail := fmt.Sprintf("%s %s: %d B at offset %d, live steps %d–%d (%s)", keyText(a.Key), a.Name, a.Size, a.Offset, first, last, kind)
		if si, ok := stripes[a.Ref]; ok && a.Kind == plan.TensorAlloc {
			detail += "; " + si.label(m)
		}
		if a.InPlace != nil {
			detail += "; written over its input under " + p.Kernels
		} else if a.OwnPlan != nil && a.AliasOf != nil {
			detail += fmt.Sprintf("; %d B from %v, where the model's own offline plan puts it for %s %v", a.AliasOffset, *a.AliasOf,
				escapeName(a.OwnPlan.Operator), a.OwnPlan.Op)
		} else if a.AliasOf != nil {
			detail += fmt.Sprintf("; shares the bytes of %v", *a.AliasOf)
		}
		fmt.Fprintf(b, "<rect class=\"alloc %s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" data-detail=\"%s\"><title>%s</title></rect>\n",
			kind, x0, top, w, h, esc(detail), esc(detail))
		if l, ok := placeLabel(a, x0, top, w, h); ok && !slices.ContainsFunc(placed, l.at.overlaps) {
			// Skipped where a larger box's label (an alias over its
			// root) is already.
			placed = append(placed, l.at)
			texts.WriteString(l.svg)
		}
	}
	// Labels over every box, and not in the way of the pointer (CSS).
	b.Write(texts.Bytes())
	if ar.Role == liveness.Scratch {
		yb := y(ar.LowerBound)
		fmt.Fprintf(b, "<line class=\"bound\" x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\"><title>lower bound %d B</title></line>\n",
			mapLeft, yb, mapLeft+mapWidth, yb, ar.LowerBound)
		xp := (x(int64(ar.PeakStep)) + x(int64(ar.PeakStep)+1)) / 2
		fmt.Fprintf(b, "<line class=\"peak\" x1=\"%.2f\" y1=\"0\" x2=\"%.2f\" y2=\"%d\"><title>peak at step %d</title></line>\n",
			xp, xp, mh, ar.PeakStep)
	}
	fmt.Fprintf(b, "</svg>\n")
	if ar.Role == liveness.Scratch {
		reportPeak(b, m, p, ar)
	}
}

// reportPeak says where a scratch arena peaks and what is live there.
func reportPeak(b *bytes.Buffer, m *graph.Model, p *plan.Plan, ar *plan.Arena) {
	stripes := stripeTensors(m)
	op := ""
	for _, r := range p.Schedule.Runs {
		if r.Span.First == ar.PeakStep {
			op = fmt.Sprintf(", where operator %v %s runs", r.Op, m.Subgraphs[r.Op.Subgraph].Ops[r.Op.Op].Name())
		}
	}
	fmt.Fprintf(b, "<p>Peaks at step %d%s: the lower bound, %d B, is what is live there%s:</p>\n<ul>\n",
		ar.PeakStep, esc(op), ar.LowerBound, map[bool]string{true: " (alias groups by their root, as wide as their live members)"}[p.Kernels != ""])
	for _, k := range ar.Peak {
		a := p.Lookup(k)
		if a == nil {
			continue
		}
		_, block := p.Block(k)
		fmt.Fprintf(b, "<li>%s %s: %d B", esc(keyText(k)), esc(a.Name), a.Size)
		if block != a.Size {
			fmt.Fprintf(b, " (alias group %d B)", block)
		}
		if si, ok := stripes[a.Ref]; ok && a.Kind == plan.TensorAlloc {
			fmt.Fprintf(b, ", %s", esc(si.label(m)))
		}
		fmt.Fprintf(b, "</li>\n")
	}
	fmt.Fprintf(b, "</ul>\n")
}

// reportLargest lists the largest allocations.
func reportLargest(b *bytes.Buffer, p *plan.Plan) {
	var all []*plan.Alloc
	for i := range p.Allocs {
		if p.Allocs[i].Size > 0 {
			all = append(all, &p.Allocs[i])
		}
	}
	slices.SortStableFunc(all, func(x, y *plan.Alloc) int { return int(y.Size - x.Size) })
	all = all[:min(len(all), 12)]
	fmt.Fprintf(b, "<h2>Largest allocations</h2>\n<table>\n<tr><th>allocation</th><th>name</th><th>class</th><th>bytes</th><th>arena</th><th>offset</th><th>live</th></tr>\n")
	for _, a := range all {
		arena := p.Arena(a.Arena)
		name := ""
		if arena != nil {
			name = arena.Name
		}
		live := "always"
		if a.Class == liveness.Scratch {
			live = fmt.Sprintf("steps %d–%d", a.Live.First, a.Live.Last)
		}
		fmt.Fprintf(b, "<tr><td>%s</td><td class=\"name\">%s</td><td>%s</td><td>%d</td><td>%s</td><td>%d</td><td>%s</td></tr>\n",
			esc(keyText(a.Key)), esc(a.Name), a.Class, a.Size, esc(name), a.Offset, live)
	}
	fmt.Fprintf(b, "</table>\n")
}

const reportCSS = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td:first-child,td.name{text-align:left}td.name{max-width:420px;overflow-wrap:anywhere}
svg.map{width:100%;height:auto;background:#fff}
.frame{fill:#fafafa;stroke:#999}.axis{font-size:11px;fill:#555}.axis.title{font-size:12px;fill:#333}
.grid{stroke:#e4e4e4;stroke-width:.6}.tick{stroke:#999}
.label{font-size:11px;fill:#fff;pointer-events:none;paint-order:stroke;stroke:rgba(0,0,0,.35);stroke-width:2px}
rect.alloc{stroke:#fff;stroke-width:.4}rect.alloc:hover{stroke:#000;stroke-width:1.5}
.tensor{fill:#4c78a8;background:#4c78a8}.inplace{fill:#f58518;background:#f58518}.view{fill:#9ecae9;background:#9ecae9}
.kscratch{fill:#54a24b;background:#54a24b}.stripe{fill:#72b7b2;background:#72b7b2}.variable{fill:#b279a2;background:#b279a2}.spilled{fill:#e45756;background:#e45756}
.bound{stroke:#d62728;stroke-dasharray:6 3;stroke-width:1.2}.peak{stroke:#000;stroke-dasharray:2 2}
li{overflow-wrap:anywhere}
#detail{position:sticky;top:0;background:#fffbe6;border:1px solid #e6d9a3;padding:4px 8px;margin:8px 0}
.legend span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}
`

const reportJS = `(function () {
  var body = document.body;
  window.addEventListener('error', function (e) {
    body.setAttribute('data-errors', String(e.message));
  });
  var boxes = document.querySelectorAll('rect.alloc');
  var detail = document.getElementById('detail');
  for (var i = 0; i < boxes.length; i++) {
    boxes[i].addEventListener('mouseover', function (e) {
      detail.textContent = e.target.getAttribute('data-detail');
    });
  }
  body.setAttribute('data-boxes', String(boxes.length));
})();
`
