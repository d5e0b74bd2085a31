package emit

import (
	"fmt"
	"strings"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/plan"
)

// TFLiteAlignment is the alignment of the model array TFLiteC writes:
// TFLM reads the flatbuffer in place, and its examples align models to 16
// bytes (alignas(16) const unsigned char g_model[]).
const TFLiteAlignment = 16

// TFLiteC writes model, the bytes --emit-tflite writes for m planned as p,
// as C for firmware that runs it with a stock TFLM MicroInterpreter.
// "<prefix>.tflite.c" defines the array; "<prefix>.tflite.h" is all a
// TFLM program needs from heliac besides it, and includes nothing of
// heliac's. It declares
//
//	extern const unsigned char <prefix>_tflite[<P>_TFLITE_SIZE];
//
// aligned to TFLiteAlignment bytes (define <P>_TFLITE_ATTR before
// including it to place the array), and defines
//
//   - <P>_TFLM_ARENA_SIZE: TFLM's whole tensor_arena for the pointer size
//     the program is compiled for, picked with UINTPTR_MAX from
//     meta.TFLMTargets, for an application's MicroInterpreter (its planner
//     in the arena: tflmarena.PlannerInArena); left undefined, with
//     heliac's reason, where there is no figure (tflmArenaMacros);
//   - <P>_TFLM_RESOURCE_VARIABLES: the num_variables the figure assumes
//     the application passes to MicroResourceVariables::Create;
//   - <P>_TFLM_OP_COUNT and <P>_TFLM_ADD_OPS(resolver): a
//     MicroMutableOpResolver<<P>_TFLM_OP_COUNT> and the calls that
//     register exactly m's operators on it.
//
// Both files carry the plan's hash as the C module's files do. prefix is
// the C module's (emit.Prefix).
func TFLiteC(prefix string, m *graph.Model, p *plan.Plan, meta Meta, model []byte) Files {
	P := strings.ToUpper(prefix)
	file := prefix + ".tflite.h"
	banner := func(w *cwriter) {
		w.WriteString(cGeneratedLine)
		w.f("/* Memory plan for model %s; plan hash %s. */\n", commentText(meta.ModelName), p.Hash())
	}
	res := tflmResolverOf(m)
	sized := false
	for _, t := range meta.TFLMTargets {
		sized = sized || t.Bytes > 0
	}

	h := &cwriter{}
	banner(h)
	h.f("/*\n * %s.tflite, the model with heliac's plan as TFLM's offline memory plan, as a\n"+
		" * C array aligned to %d bytes (%s.tflite.c), and what a stock TensorFlow Lite\n"+
		" * Micro MicroInterpreter needs to run it. A TFLM program needs only this header\n"+
		" * and %s.tflite.c from heliac (not %s.h or %s.c):\n *\n",
		commentText(prefix), TFLiteAlignment, commentText(prefix), commentText(prefix), commentText(prefix), commentText(prefix))
	if sized {
		h.f(" *   alignas(16) static uint8_t tensor_arena[%s_TFLM_ARENA_SIZE];\n", P)
	}
	h.f(" *   tflite::MicroMutableOpResolver<%s_TFLM_OP_COUNT> resolver;\n"+
		" *   %s_TFLM_ADD_OPS(resolver);\n", P, P)
	if sized {
		h.f(" *   tflite::MicroAllocator* allocator =\n" +
			" *       tflite::MicroAllocator::Create(tensor_arena, sizeof tensor_arena);\n")
	} else {
		h.f(" *   tflite::MicroAllocator* allocator = tflite::MicroAllocator::Create(arena, size);\n")
	}
	vars := "nullptr"
	if len(meta.TFLMTargets) > 0 {
		vars = "variables"
		h.f(" *   tflite::MicroResourceVariables* variables = %s_TFLM_RESOURCE_VARIABLES > 0\n"+
			" *       ? tflite::MicroResourceVariables::Create(allocator, %s_TFLM_RESOURCE_VARIABLES)\n"+
			" *       : nullptr;\n", P, P)
	}
	h.f(" *   tflite::MicroInterpreter interpreter(tflite::GetModel(%s_tflite), resolver,\n"+
		" *                                        allocator, %s);\n */\n", prefix, vars)
	h.f("#ifndef %s_TFLITE_H\n#define %s_TFLITE_H\n\n#include <stdint.h>\n", P, P)
	h.WriteString(kernelGuardText(file, p.Kernels, p.KernelsPath))
	if !sized && len(meta.TFLMTargets) == 0 {
		h.f("\n/* heliac gives no TFLM arena size for this model. */\n")
	}
	tflmArenaMacros(h, P, prefix, file, meta, p.Kernels, p.KernelsPath)

	h.f("\n/* The model's operators: a tflite::MicroMutableOpResolver<%s_TFLM_OP_COUNT> has\n"+
		" * room for them all, and %s_TFLM_ADD_OPS(resolver) registers each once, with\n"+
		" * TFLM's default registration (tensorflow/lite/micro/micro_mutable_op_resolver.h). */\n", P, P)
	if len(res.Custom) > 0 {
		h.f("/* %s_TFLM_OP_COUNT also counts the custom operators TFLM has no method for;\n"+
			" * register each with resolver.AddCustom(name, registration): %s. */\n", P, commentText(strings.Join(res.Custom, ", ")))
	}
	if len(res.Missing) > 0 {
		h.f("/* TFLM has no kernel for %s: stock TFLM cannot run this model. */\n", commentText(strings.Join(res.Missing, ", ")))
	}
	h.define(P+"_TFLM_OP_COUNT", "%du", res.Count())
	h.name(P + "_TFLM_ADD_OPS")
	h.f("#define %s_TFLM_ADD_OPS(resolver) \\\n  do { \\\n", P)
	for _, meth := range res.Methods {
		h.f("    (resolver).%s(); \\\n", meth)
	}
	h.WriteString("  } while (0)\n")

	h.f("\n/* Compiler support: %s_ALIGNAS(n) as %s.h defines it. */\n", P, commentText(prefix))
	h.f("#ifndef %s_ALIGNAS\n"+
		"#if defined(__cplusplus)\n#define %s_ALIGNAS(n) alignas(n)\n"+
		"#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L\n#define %s_ALIGNAS(n) _Alignas(n)\n"+
		"#elif defined(__GNUC__) || defined(__clang__)\n#define %s_ALIGNAS(n) __attribute__((aligned(n)))\n"+
		"#else\n#error \"%s: define %s_ALIGNAS(n) for this compiler (C11 _Alignas, or an aligned attribute)\"\n"+
		"#endif\n#endif\n", P, P, P, P, file, P)

	h.f("\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n")
	h.f("#define %s_TFLITE_SIZE %du\n#define %s_TFLITE_ALIGNMENT %du\n\n", P, len(model), P, TFLiteAlignment)
	h.f("extern const unsigned char %s_tflite[%s_TFLITE_SIZE];\n", prefix, P)
	h.f("\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s_TFLITE_H */\n", P)

	c := &cwriter{}
	c.Grow(len(model)*5 + len(model)/bytesPerLine*2 + 1024)
	banner(c)
	fmt.Fprintf(c, "\n#include \"%s\"\n\n", file)
	fmt.Fprintf(c, "#ifndef %s_TFLITE_ATTR\n#define %s_TFLITE_ATTR\n#endif\n\n", P, P)
	fmt.Fprintf(c, "%s_ALIGNAS(%s_TFLITE_ALIGNMENT) const unsigned char %s_tflite[%s_TFLITE_SIZE] %s_TFLITE_ATTR = {\n",
		P, P, prefix, P, P)
	writeCHex(&c.Buffer, model)
	c.WriteString("};\n")
	return Files{{Name: file, Data: h.Bytes()}, {Name: prefix + ".tflite.c", Data: c.Bytes()}}
}
