package emit

import "fmt"

// runtime defines the module's functions and the state they keep: the
// writable base of every arena (the module's array, or the buffer bound
// to it), the bytes of read-only arenas and every tensor's resolved
// pointer.
func (g *cgen) runtime(w *cwriter) {
	p, P := g.prefix, g.macro
	n := len(g.arenas)
	if n > 0 {
		w.f("\n/* The writable bytes of each arena: the module's own, or the buffer\n"+
			" * %s_bind_arena bound to it; NULL for a read-only arena. */\n", p)
		w.f("static uint8_t *%s_arena_base[%s_ARENA_COUNT] = {\n", p, P)
		for i, a := range g.arenas {
			switch {
			case a.external():
				w.f("\tNULL, /* [%d] %s: bound by %s_bind_arena */\n", i, a.Name, p)
			case a.writable():
				w.f("\t%s, /* [%d] %s */\n", a.sym, i, a.Name)
			default:
				w.f("\tNULL, /* [%d] %s: read-only */\n", i, a.Name)
			}
		}
		w.WriteString("};\n")
		w.f("\n/* The bytes of each read-only arena. */\n")
		w.f("static const uint8_t *const %s_arena_image[%s_ARENA_COUNT] = {\n", p, P)
		for i, a := range g.arenas {
			if a.cold() {
				w.f("\t%s, /* [%d] %s */\n", a.sym, i, a.Name)
			} else {
				w.f("\tNULL, /* [%d] %s */\n", i, a.Name)
			}
		}
		w.WriteString("};\n")
	}
	if len(g.table) > 0 {
		w.f("\n/* Each tensor's bytes, resolved by %s_init. */\n", p)
		w.f("static const uint8_t *%s_tensor_ptr[%s_TENSOR_COUNT];\n", p, P)
	}

	// bind
	w.f("\n%s_status_t %s_bind_arena(%s_arena_t arena, void *data, size_t size)\n{\n", p, p, p)
	if n == 0 {
		w.f("\t(void)arena;\n\t(void)data;\n\t(void)size;\n\treturn %s_ERR_UNKNOWN_ARENA;\n}\n", P)
	} else {
		w.f("\tconst %s_arena_info_t *a;\n", p)
		w.f("\tif ((size_t)arena >= (size_t)%s_ARENA_COUNT) {\n\t\treturn %s_ERR_UNKNOWN_ARENA;\n\t}\n", P, P)
		w.f("\ta = &%s_arenas[arena];\n", p)
		w.f("\tif (!a->external) {\n\t\treturn %s_ERR_INTERNAL_ARENA;\n\t}\n", P)
		w.f("\tif (data == NULL) {\n\t\treturn %s_ERR_NULL;\n\t}\n", P)
		w.f("\tif (size < a->size) {\n\t\treturn %s_ERR_TOO_SMALL;\n\t}\n", P)
		w.f("\tif ((uintptr_t)data %% a->alignment != 0u) {\n\t\treturn %s_ERR_MISALIGNED;\n\t}\n", P)
		w.f("\t%s_arena_base[arena] = (uint8_t *)data;\n\treturn %s_OK;\n}\n", p, P)
	}

	// hydrate
	if g.staged() {
		w.f("\n%s_WEAK void %s_hydrate(%s_arena_t arena, void *dst, const void *src, size_t size)\n{\n", P, p, p)
		w.WriteString("\t(void)arena;\n\tmemcpy(dst, src, size);\n}\n")
	}

	// init
	done := fmt.Sprintf("\treturn %s_OK;\n}\n", P)
	if g.rt.on() {
		// The runtime's kernel init and prepare (<prefix>.tflm.cc).
		w.f("\n/* Runs every kernel's init and prepare (%s.tflm.cc). */\n", p)
		w.f("void %s_runtime_stop(void);\n%s_status_t %s_runtime_start(void);\n", p, p, p)
		done = fmt.Sprintf("\treturn %s_runtime_start();\n}\n", p)
	}
	w.f("\n%s_status_t %s_init(void)\n{\n", p, p)
	stop := func() {
		if g.rt.on() {
			w.f("\t%s_runtime_stop();\n", p)
		}
	}
	if n == 0 {
		stop()
		w.WriteString(done)
	} else {
		w.WriteString("\tsize_t i;\n")
		stop()
		w.f("\tfor (i = 0; i < (size_t)%s_ARENA_COUNT; i++) {\n", P)
		w.f("\t\tif (%s_arenas[i].external && %s_arena_base[i] == NULL) {\n\t\t\treturn %s_ERR_UNBOUND;\n\t\t}\n\t}\n", p, p, P)
		w.f("\tfor (i = 0; i < (size_t)%s_ARENA_COUNT; i++) {\n", P)
		w.f("\t\tif (%s_arenas[i].role == %s_ROLE_PERSISTENT) {\n\t\t\tmemset(%s_arena_base[i], 0, %s_arenas[i].size);\n\t\t}\n\t}\n",
			p, P, p, p)
		for _, a := range g.arenas {
			if a.Staged() {
				w.f("\t%s_hydrate(%s, %s_arena_base[%s], %s, %s);\n", p, a.enum, p, a.enum, a.imageSym(), a.sizeMacro())
			}
		}
		if len(g.table) > 0 {
			w.f("\tfor (i = 0; i < %s_TENSOR_COUNT; i++) {\n", P)
			w.f("\t\tconst %s_tensor_t *t = &%s_tensors[i];\n", p, p)
			w.f("\t\tconst uint8_t *base = %s_arena_base[t->arena];\n", p)
			w.f("\t\tif (base == NULL) {\n\t\t\tbase = %s_arena_image[t->arena];\n\t\t}\n", p)
			w.f("\t\t%s_tensor_ptr[i] = base + t->offset;\n\t}\n", p)
		}
		w.WriteString(done)
	}

	// accessors
	w.f("\nuint8_t *%s_arena_data(%s_arena_t arena)\n{\n", p, p)
	if n == 0 {
		w.WriteString("\t(void)arena;\n\treturn NULL;\n}\n")
	} else {
		w.f("\tif ((size_t)arena >= (size_t)%s_ARENA_COUNT) {\n\t\treturn NULL;\n\t}\n\treturn %s_arena_base[arena];\n}\n", P, p)
	}
	w.f("\nconst uint8_t *%s_tensor_data(size_t index)\n{\n", p)
	if len(g.table) == 0 {
		w.WriteString("\t(void)index;\n\treturn NULL;\n}\n")
	} else {
		w.f("\tif (index >= %s_TENSOR_COUNT) {\n\t\treturn NULL;\n\t}\n\treturn %s_tensor_ptr[index];\n}\n", P, p)
	}
	w.f("\nuint8_t *%s_tensor_mutable_data(size_t index)\n{\n", p)
	if len(g.table) == 0 {
		w.WriteString("\t(void)index;\n\treturn NULL;\n}\n")
	} else {
		w.WriteString("\tuint8_t *base;\n")
		w.f("\tif (index >= %s_TENSOR_COUNT || %s_tensor_ptr[index] == NULL) {\n\t\treturn NULL;\n\t}\n", P, p)
		w.f("\tbase = %s_arena_base[%s_tensors[index].arena];\n", p, p)
		w.f("\tif (base == NULL) {\n\t\treturn NULL;\n\t}\n\treturn base + %s_tensors[index].offset;\n}\n", p)
	}
	w.f("\nuint8_t *%s_kernel_scratch_data(size_t index)\n{\n", p)
	if len(g.kernel) == 0 {
		w.WriteString("\t(void)index;\n\treturn NULL;\n}\n")
	} else {
		w.WriteString("\tuint8_t *base;\n")
		w.f("\tif (index >= %s_KERNEL_SCRATCH_COUNT) {\n\t\treturn NULL;\n\t}\n", P)
		w.f("\tbase = %s_arena_base[%s_kernel_scratch[index].arena];\n", p, p)
		w.f("\tif (base == NULL) {\n\t\treturn NULL;\n\t}\n\treturn base + %s_kernel_scratch[index].offset;\n}\n", p)
	}
}
