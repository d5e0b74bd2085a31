package verify

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/heliac/heliac/graph"
)

// PlanInfo checks what a model heliac wrote with a plan (--emit-tflite)
// records about that plan, in its graph.PlanInfoName metadata entry
// ("key=value" lines), against the plan: the same plan_hash, kernels and
// kernels_path. A model that computes its outputs right only under the
// kernels its plan was made for must say which, and say it truly. It
// returns the entry's lines for a report ("" when the model records
// nothing) and the violations.
func PlanInfo(m *graph.Model, planJSON []byte) (string, []Violation) {
	var r report
	var data []byte
	found := false
	for _, md := range m.Metadata {
		if md.Name == graph.PlanInfoName {
			found = true
			if md.Buffer >= 0 && int(md.Buffer) < len(m.Buffers) {
				data = m.Buffers[md.Buffer].Data
			}
		}
	}
	if !found {
		return "", nil
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			r.add(ModelMismatch, "metadata %q: %q is not key=value", graph.PlanInfoName, line)
			continue
		}
		got[k] = v
	}
	kernels := got["kernels"]
	if p := got["kernels_path"]; p != "" {
		kernels += " (" + p + ")"
	}
	text := fmt.Sprintf("kernels %s: %s; TFLM target %s; plan %s; by %s", kernels, got["kernel_builds"], got["tflm_target"],
		got["plan_hash"], got["generator"])
	var want struct {
		PlanHash    string `json:"plan_hash"`
		Kernels     string `json:"kernels"`
		KernelsPath string `json:"kernels_path"`
	}
	if err := json.Unmarshal(planJSON, &want); err != nil {
		r.add(Malformed, "plan: %v", err)
		return text, r
	}
	for _, c := range []struct{ key, want string }{{"plan_hash", want.PlanHash}, {"kernels", want.Kernels}, {"kernels_path", want.KernelsPath}} {
		if c.key != "plan_hash" && want.Kernels == "" {
			continue // no in-place write: the plan names no kernels
		}
		if g := got[c.key]; g != c.want {
			r.add(ModelMismatch, "metadata %q records %s %q, but the plan's is %q", graph.PlanInfoName, c.key, g, c.want)
		}
	}
	return text, r
}
