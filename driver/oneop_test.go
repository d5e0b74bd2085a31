package driver_test

import (
	"github.com/heliac/heliac/graph"
)

// oneOpModel is a model around one operator (a few for control flow and
// resource variables) that a test builds: its name, the family of
// variants it comes from, and the model.
type oneOpModel struct {
	name, family string
	m            *graph.Model
}

// oneOpFamilies are the families of one-operator models, each with the
// builder of its variants: the arena tests' (TestTFLMArenaMathOps,
// TestTFLMArenaShapeOps, TestTFLMArenaDecode, TestTFLMArenaKernelVariants,
// each variant alone), and coreOpVariants and signalVariants, the
// operators the corpus runs.
var oneOpFamilies = []struct {
	name  string
	build func() []oneOpModel
}{
	{"math", func() []oneOpModel { return fromVariants("math", mathOpVariants()) }},
	{"shape", func() []oneOpModel { return fromVariants("shape", shapeVariants()) }},
	{"kernel", func() []oneOpModel {
		// Each alone, and all in one model as TestTFLMArenaKernelVariants
		// runs them (kernel data and scratch rows of many operators).
		return append(fromVariants("kernel", opVariants()),
			oneOpModel{name: "kernel_variants_together", family: "kernel", m: opVariantsModel(opVariants()...)})
	}},
	{"decode", func() []oneOpModel {
		var out []oneOpModel
		for _, v := range decodeVariants() {
			out = append(out, oneOpModel{name: "decode_" + v.name, family: "decode", m: v.m})
		}
		return out
	}},
	{"core", func() []oneOpModel { return fromVariants("core", coreOpVariants()) }},
	{"signal", func() []oneOpModel { return fromVariants("signal", signalVariants()) }},
}

// fromVariants makes one model of each variant, alone.
func fromVariants(family string, vs []opVariant) []oneOpModel {
	out := make([]oneOpModel, len(vs))
	for i, v := range vs {
		out[i] = oneOpModel{name: v.name, family: family, m: opVariantsModel(v)}
	}
	return out
}

// oneOpModels are every family's models, family by family.
func oneOpModels() []oneOpModel {
	var out []oneOpModel
	for _, f := range oneOpFamilies {
		out = append(out, f.build()...)
	}
	return out
}
