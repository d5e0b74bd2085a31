package emit

import (
	"fmt"
	"strings"
)

// The UINTPTR_MAX values the arena macros pick their figure by: the
// pointer sizes package tflmarena knows (4: cortex-m, 8: host64).
var pointerMax = map[int64]string{4: "0xFFFFFFFFu", 8: "0xFFFFFFFFFFFFFFFFu"}

// TFLMRequireMacro is the suffix of the macro an application defines to
// turn a missing <P>_TFLM_ARENA_SIZE into an #error that gives heliac's
// reason: <P>_TFLM_REQUIRE_ARENA_SIZE.
const TFLMRequireMacro = "_TFLM_REQUIRE_ARENA_SIZE"

// tflmArenaMacros writes the macros that size TFLM's tensor_arena for the
// model --emit-tflite writes, as both <prefix>.h and <prefix>.tflite.h
// give them, in the same words (C and C++ allow a macro's identical
// redefinition, so a program may include both): <P>_TFLM_RESOURCE_VARIABLES,
// then <P>_TFLM_ARENA_SIZE for the pointer size the program is compiled
// for (UINTPTR_MAX, <stdint.h>), from meta.TFLMTargets. A pointer size
// without a figure defines no <P>_TFLM_ARENA_SIZE: a comment gives
// heliac's reason, and the application may define
// <P>_TFLM_REQUIRE_ARENA_SIZE to stop the build there with it. file is
// the header the text goes in (for #error), kernels the plan's kernel
// library and code path (plan.json "kernels", "kernels_path"). It writes
// nothing without TFLMTargets.
func tflmArenaMacros(w *cwriter, P, prefix, file string, meta Meta, kernels, path string) {
	if len(meta.TFLMTargets) == 0 {
		return
	}
	w.f("\n/* TensorFlow Lite Micro (tflite-micro 90b983c): the smallest tensor_arena with\n"+
		" * which an application's MicroInterpreter allocates %s.tflite,\n"+
		" * %s.\n"+
		" * For an interpreter whose GreedyMemoryPlanner lives in the arena, as\n"+
		" * MicroInterpreter(model, resolver, arena, size) and\n"+
		" * MicroAllocator::Create(arena, size) put it: the plan's head (tensors and\n"+
		" * kernel scratch), TFLM's persistent tail and allocation's temporaries; a\n"+
		" * multiple of 16, for an arena aligned to 16. It depends on the pointer size,\n"+
		" * which UINTPTR_MAX tells, and assumes\n"+
		" * MicroResourceVariables::Create(allocator, %s_TFLM_RESOURCE_VARIABLES):\n"+
		" * one slot per VAR_HANDLE operator, and no MicroResourceVariables when 0. */\n",
		commentText(prefix), kernelsPhrase(kernels, path), P)
	w.define(P+"_TFLM_RESOURCE_VARIABLES", "%d", meta.TFLMResourceVariables)
	w.name(P + "_TFLM_ARENA_SIZE")
	kw := "#if"
	for _, t := range meta.TFLMTargets {
		max, ok := pointerMax[t.PointerSize]
		if !ok {
			continue
		}
		w.f("%s UINTPTR_MAX == %s\n", kw, max)
		kw = "#elif"
		if t.Bytes > 0 {
			w.f("/* %d-bit pointers: %s. */\n", 8*t.PointerSize, commentText(t.Target))
			w.f("#define %s_TFLM_ARENA_SIZE %du\n", P, t.Bytes)
			continue
		}
		why := fmt.Sprintf("no TFLM arena size for %s (%d-bit pointers): %s", t.Target, 8*t.PointerSize, t.Reason)
		w.f("/* heliac gives %s. Define %s%s to stop the build here. */\n", commentText(why), P, TFLMRequireMacro)
		w.f("#if defined(%s%s)\n#error \"%s: %s\"\n#endif\n", P, TFLMRequireMacro, file, errorText(why))
	}
	why := "no TFLM arena size for this pointer size: heliac sizes TFLM's arena for 32-bit and 64-bit pointers"
	if kw == "#if" {
		w.WriteString("#if 0\n")
	}
	w.f("#else\n/* heliac gives %s. Define %s%s to stop the build here. */\n", why, P, TFLMRequireMacro)
	w.f("#if defined(%s%s)\n#error \"%s: %s\"\n#endif\n#endif\n", P, TFLMRequireMacro, file, why)
}

// kernelsPhrase says which kernels a figure is for, from plan.json's
// "kernels" and "kernels_path".
func kernelsPhrase(lib, path string) string {
	on := ""
	if path != "" {
		on = " (their " + path + " code)"
	}
	switch lib {
	case kernelsAny:
		return "with TFLM's reference kernels or its CMSIS-NN kernels" + on + ",\n * whichever the build links (the largest of their figures)"
	case kernelsCMSISNN:
		return "with TFLM's CMSIS-NN kernels" + on
	default:
		return "with TFLM's reference kernels"
	}
}

// errorText is s as the text of an #error's string literal: printable
// ASCII, without the quotes, backslashes and "??" a string literal or a
// trigraph would read.
func errorText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteByte('\'')
		case c == '\\' || c < 0x20 || c > 0x7e:
			b.WriteByte(' ')
		case c == '?' && i > 0 && s[i-1] == '?':
			b.WriteByte('.')
		default:
			b.WriteByte(c)
		}
	}
	return strings.ReplaceAll(b.String(), "*/", "* /")
}
