package emit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/heliac/heliac/plan"
)

// SharedName is the prefix of the shared module of a set of models that
// share their scratch arenas (plan.Share): SharedName.h and SharedName.c.
const SharedName = "heliac_shared"

// SharedModel is one model of a set: its C prefix (as emit.C named its
// module) and its plan, after plan.Share.
type SharedModel struct {
	Prefix string
	Plan   *plan.Plan
}

// SharedC renders the shared module of models that share scratch arenas:
// heliac_shared.h declares one buffer per shared arena name
// (heliac_shared_<arena>, HELIAC_SHARED_<ARENA>_SIZE: the plans' SharedSize,
// aligned to the largest of their alignments, placed in the bank's section
// as the first model's header places it) and heliac_shared_bind();
// heliac_shared.c defines them, and heliac_shared_bind binds each buffer
// to every model's arena of that name with <prefix>_bind_arena, returning
// 0, or 1 + the index of the first model whose binding failed. Call it
// once, before the models' <prefix>_init. It returns nil files when no
// arena is shared.
func SharedC(models []SharedModel, version string) (Files, error) {
	type buf struct {
		name, memory string
		size, align  int64
		users        []int // models, by index
	}
	var bufs []*buf
	byName := map[string]*buf{}
	for i, m := range models {
		if m.Plan == nil || m.Prefix == "" {
			return nil, fmt.Errorf("emit: shared module: model %d has no plan or prefix", i)
		}
		for _, a := range m.Plan.Arenas {
			if a.Provider != plan.Shared {
				continue
			}
			b := byName[a.Name]
			if b == nil {
				b = &buf{name: a.Name, memory: a.Memory}
				byName[a.Name] = b
				bufs = append(bufs, b)
			}
			if b.memory != a.Memory {
				return nil, fmt.Errorf("emit: shared arena %s is in %s for one model and %s for another", a.Name, b.memory, a.Memory)
			}
			b.size, b.align = max(b.size, a.SharedSize), max(b.align, a.Alignment)
			b.users = append(b.users, i)
		}
	}
	if len(bufs) == 0 {
		return nil, nil
	}
	slices.SortFunc(bufs, func(x, y *buf) int { return strings.Compare(x.name, y.name) })
	const P = "HELIAC_SHARED"
	var h, c strings.Builder
	prefixes := make([]string, len(models))
	for i, m := range models {
		prefixes[i] = m.Prefix
	}
	banner := fmt.Sprintf("/* %s: the scratch buffers models %s share (one runs at a time),\n * written by heliac %s. */\n",
		SharedName, strings.Join(prefixes, ", "), commentText(version))
	h.WriteString(cGeneratedLine + banner)
	fmt.Fprintf(&h, "#ifndef %s_H\n#define %s_H\n\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n", P, P)
	for _, b := range bufs {
		up := strings.ToUpper(b.name)
		fmt.Fprintf(&h, "/* %s in %s: the largest of the models' %s arenas. */\n", b.name, commentText(b.memory), b.name)
		fmt.Fprintf(&h, "#define %s_%s_SIZE %du\n#define %s_%s_ALIGNMENT %du\n", P, up, b.size, P, up, b.align)
		fmt.Fprintf(&h, "extern uint8_t %s_%s[%s_%s_SIZE];\n\n", SharedName, b.name, P, up)
	}
	fmt.Fprintf(&h, "/* Binds every shared buffer to each model's arena of its name; call it\n"+
		" * once, before the models' init. Returns 0, or 1 + the index of the first\n"+
		" * model (%s) whose binding failed. */\nint %s_bind(void);\n\n", strings.Join(prefixes, ", "), SharedName)
	fmt.Fprintf(&h, "#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s_H */\n", P)

	first := strings.ToUpper(models[0].Prefix)
	c.WriteString(cGeneratedLine + banner)
	fmt.Fprintf(&c, "#include \"%s.h\"\n", SharedName)
	for _, p := range prefixes {
		fmt.Fprintf(&c, "#include \"%s.h\"\n", p)
	}
	for _, b := range bufs {
		up := strings.ToUpper(b.name)
		bank := strings.ToUpper(plan.CIdent(b.memory))
		fmt.Fprintf(&c, "\n%s_ALIGNAS(%s_%s_ALIGNMENT) %s_PUT_IN_%s uint8_t %s_%s[%s_%s_SIZE];\n",
			first, P, up, first, bank, SharedName, b.name, P, up)
	}
	fmt.Fprintf(&c, "\nint %s_bind(void)\n{\n", SharedName)
	for i, m := range models {
		mp, mP := m.Prefix, strings.ToUpper(m.Prefix)
		for _, b := range bufs {
			if !slices.Contains(b.users, i) {
				continue
			}
			up := strings.ToUpper(b.name)
			fmt.Fprintf(&c, "\tif (%s_bind_arena(%s_ARENA_%s, %s_%s, sizeof %s_%s) != %s_OK) {\n\t\treturn %d;\n\t}\n",
				mp, mP, up, SharedName, b.name, SharedName, b.name, mP, i+1)
		}
	}
	c.WriteString("\treturn 0;\n}\n")
	return Files{{Name: SharedName + ".h", Data: []byte(h.String())}, {Name: SharedName + ".c", Data: []byte(c.String())}}, nil
}
