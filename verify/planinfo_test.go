package verify_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/verify"
)

// TestPlanInfo: what a written model records about its plan must be the
// plan's hash, kernels and code path; each difference is a violation,
// and a model that records nothing is not checked.
func TestPlanInfo(t *testing.T) {
	withInfo := func(text string) *graph.Model {
		return &graph.Model{Buffers: []graph.Buffer{{}, {Data: []byte(text)}},
			Metadata: []graph.Metadata{{Name: graph.PlanInfoName, Buffer: 1}}}
	}
	plan := []byte(`{"plan_hash": "abc", "kernels": "any", "kernels_path": "mve"}`)
	good := "generator=heliac test\nplan_hash=abc\nkernels=any\nkernels_path=mve\nkernel_builds=tflm-reference; cmsis-nn (mve)\ntflm_target=cortex-m\n"
	tests := []struct {
		name, info string
		plan       []byte
		want       []string
	}{
		{"the plan's", good, plan, nil},
		{"another plan", "plan_hash=abd\nkernels=any\nkernels_path=mve\n", plan,
			[]string{`ModelMismatch: metadata "heliac_plan" records plan_hash "abd", but the plan's is "abc"`}},
		{"other kernels", "plan_hash=abc\nkernels=tflm-reference\n", plan, []string{
			`ModelMismatch: metadata "heliac_plan" records kernels "tflm-reference", but the plan's is "any"`,
			`ModelMismatch: metadata "heliac_plan" records kernels_path "", but the plan's is "mve"`}},
		{"no in-place write: kernels not compared", "plan_hash=abc\nkernels=cmsis-nn\n", []byte(`{"plan_hash": "abc"}`), nil},
		{"not key=value", "plan_hash=abc\nkernels any\n", []byte(`{"plan_hash": "abc"}`),
			[]string{`ModelMismatch: metadata "heliac_plan": "kernels any" is not key=value`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, v := verify.PlanInfo(withInfo(tt.info), tt.plan)
			var got []string
			for _, x := range v {
				got = append(got, x.String())
			}
			assert.Equal(t, tt.want, got)
			assert.NotEmpty(t, text)
		})
	}
	text, v := verify.PlanInfo(withInfo(good), plan)
	assert.Empty(t, v)
	assert.Equal(t, "kernels any (mve): tflm-reference; cmsis-nn (mve); TFLM target cortex-m; plan abc; by heliac test", text)
	text, v = verify.PlanInfo(&graph.Model{}, plan)
	assert.Empty(t, text, "a model that records nothing")
	assert.Empty(t, v)
}
