package emit

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/heliac/heliac/graph"
)

// PlanInfo is what a model heliac writes with its plan records about the
// plan in its graph.PlanInfoName metadata entry, so that the file says
// which kernels it computes the model's outputs with.
type PlanInfo struct {
	Generator string // "heliac <version>"
	PlanHash  string // plan.json's plan_hash
	// Kernels and KernelsPath are plan.json's kernels and kernels_path:
	// the library ("any", "tflm-reference", "cmsis-nn") and its code path
	// ("" for every path).
	Kernels     string
	KernelsPath string
	// Builds are the kernel builds the plan holds for, each a library on
	// a code path ("cmsis-nn (mve)").
	Builds []string
	// TFLMTarget is the target TFLM's arena figure was computed for
	// ("cortex-m", "host64").
	TFLMTarget string
}

// planInfoKeys are the entry's keys, in the order they are written.
var planInfoKeys = []string{"generator", "plan_hash", "kernels", "kernels_path", "kernel_builds", "tflm_target"}

// Bytes is the metadata entry's data.
func (i PlanInfo) Bytes() []byte {
	var b bytes.Buffer
	for k, v := range i.fields() {
		if v != "" {
			fmt.Fprintf(&b, "%s=%s\n", planInfoKeys[k], v)
		}
	}
	return b.Bytes()
}

// fields are the entry's values by key.
func (i PlanInfo) fields() []string {
	return []string{i.Generator, i.PlanHash, i.Kernels, i.KernelsPath, strings.Join(i.Builds, "; "), i.TFLMTarget}
}

// Text says what the entry records, for heliac inspect and verify.
func (i PlanInfo) Text() string {
	k := i.Kernels
	if i.KernelsPath != "" {
		k += " (" + i.KernelsPath + ")"
	}
	return fmt.Sprintf("planned by %s for kernels %s: %s; TFLM target %s; plan %s",
		i.Generator, k, strings.Join(i.Builds, ", "), i.TFLMTarget, i.PlanHash)
}

// ReadPlanInfo returns the PlanInfo a model records (nil when it has
// none), or an error naming what is wrong with the entry.
func ReadPlanInfo(m *graph.Model) (*PlanInfo, error) {
	for _, md := range m.Metadata {
		if md.Name != graph.PlanInfoName {
			continue
		}
		if md.Buffer < 0 || int(md.Buffer) >= len(m.Buffers) {
			return nil, fmt.Errorf("%s: buffer %d does not exist", graph.PlanInfoName, md.Buffer)
		}
		var i PlanInfo
		vals := map[string]*string{"generator": &i.Generator, "plan_hash": &i.PlanHash, "kernels": &i.Kernels,
			"kernels_path": &i.KernelsPath, "tflm_target": &i.TFLMTarget}
		for n, line := range strings.Split(strings.TrimSuffix(string(m.Buffers[md.Buffer].Data), "\n"), "\n") {
			k, v, ok := strings.Cut(line, "=")
			switch {
			case !ok:
				return nil, fmt.Errorf("%s: line %d is not key=value", graph.PlanInfoName, n+1)
			case k == "kernel_builds":
				i.Builds = strings.Split(v, "; ")
			case vals[k] != nil:
				*vals[k] = v
			}
		}
		return &i, nil
	}
	return nil, nil
}
