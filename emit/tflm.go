package emit

import (
	"fmt"
	"math"
	"strconv"
)

// Percent formats how far n is from base, in percent of base, with its
// sign: to one decimal ("-33.3%", and "+0.0%" for n == base), or to two
// significant digits where one decimal would round a difference to zero
// ("+0.0014%"), so that a plan a few bytes larger never reads "+0.0%".
// base 0 gives "-".
func Percent(n, base int64) string {
	if base == 0 {
		return "-"
	}
	p := 100 * float64(n-base) / float64(base)
	if n == base || math.Abs(p) >= 0.05 {
		return fmt.Sprintf("%+.1f%%", p)
	}
	sign := ""
	if p > 0 {
		sign = "+"
	}
	return sign + strconv.FormatFloat(p, 'g', 2, 64) + "%"
}

// Difference formats n - base in bytes and percent of base:
// "-18416 B (-33.3%)", "+16 B (+0.0014%)", "+0 B (+0.0%)".
func Difference(n, base int64) string {
	return fmt.Sprintf("%+d B (%s)", n-base, Percent(n, base))
}

// TFLMHeads compares a plan's head with TFLM's own planner's for the same
// model (driver.TFLM), as the summary and the report show it.
type TFLMHeads struct {
	OwnHead int64 // TFLM's head when it plans the model itself
	Head    int64 // the plan's scratch arena: TFLM's head running the plan
	// Kept is "heliac", or whose placement the plan keeps because
	// heliac's own needed more: "tflm" or "model" (driver.KeptTFLM,
	// driver.KeptModel).
	Kept      string
	Discarded int64 // heliac's own placement's head, when not kept
	// DiscardedBytes is TFLM's whole tensor_arena with heliac's own
	// placement when that arena, not the head, decided (driver.TFLM);
	// 0 otherwise.
	DiscardedBytes int64
	// Target, Bytes and OwnBytes are TFLM's whole tensor_arena (head,
	// persistent tail and temporaries) on Target for the model heliac
	// emits with --emit-tflite and for the original under TFLM's own
	// planner; Target is "" when they were not computed.
	Target          string
	Bytes, OwnBytes int64
	// Members are, for a plan made for a set of kernel libraries, each
	// library's heads (driver.TFLM.Members); nil for one library.
	Members []TFLMMemberHeads
	// Patches is what --patches auto chose (driver.Patches), which the
	// report states before the stripes; nil without --patches auto.
	Patches *Patches
}

// TFLMMemberHeads is one kernel library's heads: TFLM's own, and TFLM's
// when it runs the plan and places that library's scratch.
type TFLMMemberHeads struct {
	Kernels       string
	OwnHead, Head int64
}

// Text is what the summary says: the two heads and the difference, and
// when heliac's own placement was not kept, why.
func (h TFLMHeads) Text() string {
	diff := Difference(h.Head, h.OwnHead)
	if h.Head == h.OwnHead {
		diff = "the same"
	}
	s := fmt.Sprintf("arena head: TFLM's own planner %d B, heliac's plan %d B: %s (tensors and kernel scratch; TFLM's persistent tail comes on top of both)",
		h.OwnHead, h.Head, diff)
	if len(h.Members) > 0 {
		s = fmt.Sprintf("arena head: TFLM's own planner up to %d B, heliac's plan %d B with room for every kernel build's scratch: %s "+
			"(tensors and kernel scratch; TFLM's persistent tail comes on top of both); per build, TFLM's own and TFLM's running the plan:", h.OwnHead, h.Head, diff)
		for _, m := range h.Members {
			d := Difference(m.Head, m.OwnHead)
			if m.Head == m.OwnHead {
				d = "the same"
			}
			s += fmt.Sprintf("\n    %-20s %d B, %d B: %s", m.Kernels+":", m.OwnHead, m.Head, d)
		}
	}
	if kept := h.keptText(); kept != "" {
		s += "\n  " + kept
	}
	return s
}

// keptText says whose placement the plan keeps instead of heliac's, or "".
func (h TFLMHeads) keptText() string {
	whose := ""
	switch h.Kept {
	case "tflm":
		whose = "TFLM's own placement (its greedy planner, the model's order, no in-place writes)"
	case "model":
		whose = "the model's own offline plan, TFLM placing what it leaves out"
	default:
		return ""
	}
	if h.DiscardedBytes > 0 {
		return fmt.Sprintf("kept %s: with heliac's own placement (head %d B) TFLM needs a tensor_arena of %d B, %s over the original model's under TFLM's own planner (%d B)",
			whose, h.Discarded, h.DiscardedBytes, Difference(h.DiscardedBytes, h.OwnBytes), h.OwnBytes)
	}
	return fmt.Sprintf("kept %s: heliac's own placement needed %d B, %s", whose, h.Discarded, Difference(h.Discarded, h.Head))
}
