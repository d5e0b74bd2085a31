package emit

import (
	"fmt"
	"strings"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/kernels/prepared"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// The kernel builds the runtime (<prefix>.tflm.cc) runs under: which
// kernels a plan was made for, what their kernels keep, and the
// preprocessor text that picks the build a file is compiled for and
// refuses the others.

// PlanKernels returns the kernels the runtime of a plan runs: the library
// that sized its kernel scratch (plan.Plan.ScratchSource), narrowed to its
// CPU's code path when the plan names a CPU; TFLM's reference kernels when
// it names no library.
func PlanKernels(p *plan.Plan) (*kernels.Library, error) {
	src := p.ScratchSource
	if src.Library == "" {
		return kernels.Lookup(kernels.TFLMReference)
	}
	lib, err := kernels.Lookup(src.Library)
	if err != nil || src.CPU == "" {
		return lib, err
	}
	t, err := kernels.CPU(src.CPU)
	if err != nil {
		return nil, err
	}
	return lib.On(t.ISA), nil
}

// TFLMKernelBuild is one kernel build the runtime of <prefix>.tflm.cc may
// be compiled against, and what the runtime keeps for its kernels'
// persistent data there.
type TFLMKernelBuild struct {
	// Kernels is one library on one code path: tflm-reference, or
	// cmsis-nn on a path (a member of the plan's library,
	// kernels.Library.Members).
	Kernels *kernels.Library
	// CortexM and Host64 are the bytes of kernel data with 4-byte and
	// 8-byte pointers: what each kernel's Init and Prepare allocate
	// (kernels.Library.TFLMArena), each buffer aligned to 16, but for the
	// Prepared ones. The DSP and MVE paths run on 32-bit Cortex-M CPUs
	// only; their Host64 is what the same kernels would keep with 8-byte
	// pointers.
	CortexM, Host64 int64
	// Prepared are the persistent buffers whose values heliac computed
	// (kernels/prepared), in model order: the runtime keeps them with the
	// constants, in flash, instead of in kernel data.
	Prepared []PreparedBuffer
}

// PreparedBuffer is a persistent buffer a kernel fills in its Prepare
// from the model's constants alone, with the values heliac computed.
type PreparedBuffer struct {
	Op      int // the operator's row in the runtime's kOps (model order)
	Request int // which of the operator's persistent requests in Prepare, from 0
	Content kernels.TFLMContent
	// Nth is which of the operator's buffers of Content, from 0: the
	// same in every build (an LSTM fills eight of kernel sums).
	Nth    int
	Values []int32
}

// arrayName names the flash array of the buffer's values: one per
// operator, content and Nth, shared by every build that keeps it.
func (b PreparedBuffer) arrayName() string {
	name := fmt.Sprintf("prepared_%d_%s", b.Op, preparedSuffix[b.Content])
	if b.Nth > 0 {
		name += fmt.Sprintf("_%d", b.Nth)
	}
	return name
}

// Bytes is the buffer's size.
func (b PreparedBuffer) Bytes() int64 { return 4 * int64(len(b.Values)) }

// PreparedBytes is what a build's Prepared buffers take, each aligned to
// 16 as kernel data would be: the RAM they no longer take.
func (b TFLMKernelBuild) PreparedBytes() int64 {
	var n int64
	for _, p := range b.Prepared {
		n += alignUp(p.Bytes(), 16)
	}
	return n
}

// TFLMKernelState returns, for each kernel build lib stands for (its
// members, in their order), the bytes the runtime of <prefix>.tflm.cc
// keeps for the kernels' persistent data, and the buffers it keeps in
// flash instead. An operator's Prepare writes those into space bytes the
// runtime lends it (PrepareSpace; 0: none), so an operator whose buffers
// do not fit there keeps them in kernel data, as one whose values heliac
// cannot compute does. An operator TFLM refuses, or one heliac has no
// data on for some build, is an error naming it.
func TFLMKernelState(m *graph.Model, lib *kernels.Library, space int64) ([]TFLMKernelBuild, error) {
	var out []TFLMKernelBuild
	for _, mem := range lib.Members() {
		b := TFLMKernelBuild{Kernels: mem}
		row := 0
		for si := range m.Subgraphs {
			for oi := range m.Subgraphs[si].Ops {
				op := &m.Subgraphs[si].Ops[oi]
				if why := kernels.TFLMRefusal(m, graph.SubgraphIndex(si), op); why != "" {
					return nil, fmt.Errorf("emit: runtime: operator %d:%d %s: TFLM cannot run it: %s", si, oi, op.Name(), why)
				}
				for i, ptr := range []int64{4, 8} {
					kd, ok := mem.TFLMArena(m, graph.SubgraphIndex(si), op, kernels.Target{PointerSize: ptr})
					if !ok {
						return nil, fmt.Errorf("emit: runtime: operator %d:%d %s: heliac has no data on what its kernel keeps under %s "+
							"(kernels.Library.TFLMArena), so it cannot size the kernels' persistent data", si, oi, op.Name(), mem)
					}
					prep := preparedBuffers(m, graph.SubgraphIndex(si), op, row, kd, space)
					if i == 0 {
						b.Prepared = append(b.Prepared, prep...)
					}
					var state int64
					for _, a := range kd.Init {
						state += alignUp(a.Bytes, 16)
					}
					for _, s := range kd.Prepare {
						if s.Kind == kernels.TFLMPersistent {
							state += alignUp(s.Alloc.Bytes, 16)
						}
					}
					for _, p := range prep {
						state -= alignUp(p.Bytes(), 16)
					}
					if ptr == 4 {
						b.CortexM += state
					} else {
						b.Host64 += state
					}
				}
				row++
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// preparedBuffers returns the persistent buffers of the Prepare kd
// describes (operator op, row row of kOps) whose values heliac computes,
// when they fit in space bytes together (each aligned to 16, from a start
// the runtime aligns to 16); none when some buffer's values cannot be
// computed, so that an operator's buffers all move or none does.
func preparedBuffers(m *graph.Model, s graph.SubgraphIndex, op *graph.Op, row int, kd kernels.TFLMKernel, space int64) []PreparedBuffer {
	var out []PreparedBuffer
	var need int64
	k := 0
	nth := map[kernels.TFLMContent]int{}
	for _, st := range kd.Prepare {
		if st.Kind != kernels.TFLMPersistent {
			continue
		}
		if st.Content != kernels.TFLMUnknown {
			n := nth[st.Content]
			nth[st.Content]++
			v, err := prepared.Values(m, s, op, st.Content, n)
			if err != nil || 4*int64(len(v)) != st.Alloc.Bytes {
				return nil
			}
			out = append(out, PreparedBuffer{Op: row, Request: k, Content: st.Content, Nth: n, Values: v})
			need += alignUp(st.Alloc.Bytes, 16)
		}
		k++
	}
	if need > space {
		return nil
	}
	return out
}

// PrepareSpace is the arena of p whose bytes the runtime lends kernels'
// Prepare to write the buffers heliac computed, before it checks them
// and points the kernel at heliac's (the largest scratch arena the module
// owns: nothing lies in it until the first invoke), and the bytes it
// offers, less 15 for aligning their start to 16; nil and 0 for none.
func PrepareSpace(p *plan.Plan) (*plan.Arena, int64) {
	var best *plan.Arena
	var bytes int64
	for i := range p.Arenas {
		a := &p.Arenas[i]
		if a.Role == liveness.Scratch && a.Provider == plan.Owned && a.Size-15 > bytes {
			best, bytes = a, a.Size-15
		}
	}
	return best, bytes
}

// preparedText writes the buffers heliac computed (every build's, each
// once), each build's kPrepared rows, and where Prepare writes them.
func (t *tflmGen) preparedText() {
	w, p := t.w, t.prefix
	w.WriteString("\n// Persistent buffers kernels fill in Prepare from the model's constants\n" +
		"// alone (per-channel multipliers and shifts, CMSIS-NN's kernel sums), as\n" +
		"// heliac computed them (kernels/prepared): kept here, with the constants,\n" +
		"// instead of in kernel_state. Prepare still computes them, in bytes of a\n" +
		"// scratch arena lent to it (PrepareSpace), and the runtime checks they are\n" +
		"// these before it points the kernel at these.\n")
	written := map[string]bool{}
	perOp := 1
	for _, b := range t.builds {
		count := map[int]int{}
		for _, pb := range b.Prepared {
			count[pb.Op]++
			perOp = max(perOp, count[pb.Op])
			name := pb.arrayName()
			if written[name] {
				continue // another build's buffer of the same values
			}
			written[name] = true
			w.f("alignas(16) const int32_t %s[%d] HELIAC_PREPARED_ATTR = {\n", name, len(pb.Values))
			for vs := pb.Values; len(vs) > 0; {
				n := min(len(vs), 8)
				w.f("\t%s,\n", joinInts(vs[:n]))
				vs = vs[n:]
			}
			w.WriteString("};\n")
		}
	}
	for i, b := range t.builds {
		kb, _ := buildOf(b.Kernels)
		kw := "#elif"
		if i == 0 {
			kw = "#if"
		}
		w.f("%s HELIAC_KERNEL_BUILD == %d /* %s */\n", kw, kb.id, b.Kernels)
		w.f("constexpr size_t kPreparedCount = %d;\n", len(b.Prepared))
		w.f("const PreparedInfo kPrepared[%d] = {\n", max(len(b.Prepared), 1))
		for _, pb := range b.Prepared {
			w.f("    {%d, %d, %s, %d},\n", pb.Op, pb.Request, pb.arrayName(), pb.Bytes())
		}
		if len(b.Prepared) == 0 {
			w.WriteString("    {-1, 0, nullptr, 0},\n")
		}
		w.WriteString("};\n")
	}
	w.WriteString("#else\nconstexpr size_t kPreparedCount = 0;\nconst PreparedInfo kPrepared[1] = {{-1, 0, nullptr, 0}};\n#endif\n")
	w.f("// The most buffers of one operator heliac computed.\nconstexpr int kPreparedPerOp = %d;\n", perOp)
	arena, bytes := PrepareSpace(t.p)
	if arena == nil {
		w.WriteString("uint8_t* PrepareSpace() { return nullptr; }\nconstexpr size_t kPrepareSpaceBytes = 0;\n")
		return
	}
	w.f("// Arena %s: nothing lies in it until the first invoke.\n", commentText(arena.Name))
	w.f("uint8_t* PrepareSpace() { return %s_arena_data(%s); }\nconstexpr size_t kPrepareSpaceBytes = %d;\n",
		p, t.arenas[t.byID[arena.ID]].enum, bytes)
}

// preparedSuffix names a computed buffer's array by its content.
var preparedSuffix = map[kernels.TFLMContent]string{
	kernels.TFLMMultipliers: "multipliers", kernels.TFLMShifts: "shifts", kernels.TFLMKernelSums: "kernel_sums",
}

// scratchHandles is how many scratch requests the kernels of any build of
// lib may make in all (each takes a handle of the runtime's; a request of
// 0 bytes takes one too), and at least rows, the plan's kernel scratch
// rows: a set's plan may give an operator fewer rows than its kernels
// make requests (kernels.Library.Scratch).
func scratchHandles(m *graph.Model, lib *kernels.Library, rows int) int {
	most := rows
	for _, mem := range lib.Members() {
		n := 0
		for si := range m.Subgraphs {
			for oi := range m.Subgraphs[si].Ops {
				sizes, _ := mem.Scratch(m, graph.SubgraphIndex(si), &m.Subgraphs[si].Ops[oi], kernels.CortexM)
				n += len(sizes)
			}
		}
		most = max(most, n)
	}
	return most
}

// kernelBuild is a kernel build as <prefix>.tflm.cc's preprocessor tells
// it: HELIAC_KERNEL_BUILD's value, and what it is.
type kernelBuild struct {
	id    int
	cmsis bool        // TFLM's CMSIS-NN kernels (else its reference kernels)
	path  kernels.ISA // CMSIS-NN's code path
	why   string      // the macros that make the preprocessor pick it
}

// kernelBuilds are the builds HELIAC_KERNEL_BUILD tells apart, in the
// order its #if tests them: TFLM's CMSIS-NN build defines CMSIS_NN
// (tensorflow/lite/micro/tools/make/ext_libs/cmsis_nn.inc @90b983c), and
// CMSIS-NN then runs the code path cmsisMVE and cmsisDSP say.
var kernelBuilds = []kernelBuild{
	{id: 0, why: "it does not define CMSIS_NN"},
	{id: 3, cmsis: true, path: kernels.MVE, why: "ARM_MATH_MVEI, from __ARM_FEATURE_MVE"},
	{id: 2, cmsis: true, path: kernels.DSP, why: "ARM_MATH_DSP, from __ARM_FEATURE_DSP, without MVE"},
	{id: 1, cmsis: true, path: kernels.NoDSP, why: "neither __ARM_FEATURE_DSP nor __ARM_FEATURE_MVE"},
}

// test is the #if expression of the build, given that the builds before
// it in kernelBuilds did not match.
func (b kernelBuild) test() string {
	switch {
	case !b.cmsis:
		return "!defined(CMSIS_NN)"
	case b.path == kernels.MVE:
		return cmsisMVE
	case b.path == kernels.DSP:
		return cmsisDSP
	}
	return ""
}

// describe says what the build is, for comments: "TFLM's reference
// kernels", "TFLM's CMSIS-NN kernels, their mve code".
func (b kernelBuild) describe() string {
	if !b.cmsis {
		return "TFLM's reference kernels"
	}
	return "TFLM's CMSIS-NN kernels, their " + b.path.PathName() + " code"
}

// buildOf returns the build a library on one code path is.
func buildOf(l *kernels.Library) (kernelBuild, bool) {
	path, onPath := l.Path()
	for _, b := range kernelBuilds {
		if (l.Name == kernels.TFLMReference && !b.cmsis) || (l.Name == kernels.CMSISNN && b.cmsis && onPath && b.path == path) {
			return b, true
		}
	}
	return kernelBuild{}, false
}

// kernelBuildText writes the macro HELIAC_KERNEL_BUILD, the kernel build
// the file is compiled for, and an #error for every build the plan was
// not made for, which says why.
func (t *tflmGen) kernelBuildText() {
	w, file := t.w, t.prefix+TFLMSuffix
	w.WriteString(`
// The kernel build this file is compiled for. TFLM's CMSIS-NN build defines
// CMSIS_NN (tensorflow/lite/micro/tools/make/ext_libs/cmsis_nn.inc @90b983c);
// CMSIS-NN runs its MVE code where ARM_MATH_MVEI is defined, else its DSP code
// where ARM_MATH_DSP is, else its portable C, and defines those from the
// compiler's __ARM_FEATURE_MVE & 1 (or ARM_MATH_HELIUM) and
// __ARM_FEATURE_DSP == 1 (Include/arm_nn_math_types.h @4ab83cc, lines 55-66
// and 88-98). Each build's kernels keep their own data and ask for their own
// scratch.
`)
	for i, b := range kernelBuilds {
		switch {
		case i == 0:
			w.f("#if %s\n", b.test())
		case b.test() == "":
			w.WriteString("#else\n")
		default:
			w.f("#elif %s\n", b.test())
		}
		w.f("#define HELIAC_KERNEL_BUILD %d /* %s */\n", b.id, b.describe())
	}
	w.WriteString("#endif\n")
	planned := map[int]bool{}
	cmsis := false
	for _, mem := range t.lib.Members() {
		if b, ok := buildOf(mem); ok {
			planned[b.id] = true
			cmsis = cmsis || b.cmsis
		}
	}
	for _, b := range kernelBuilds {
		if planned[b.id] {
			continue
		}
		var why string
		switch {
		case !b.cmsis:
			why = fmt.Sprintf("planned for %s, but this build links TFLM's reference kernels (%s), which keep other data and ask for other scratch: "+
				"build with -DCMSIS_NN against TFLM's CMSIS-NN library, or run heliac with --kernels any or tflm-reference", t.lib, b.why)
		case !cmsis:
			why = fmt.Sprintf("planned for %s, but this build defines CMSIS_NN (TFLM's CMSIS-NN kernels), which keep other data and ask for other scratch: "+
				"build without CMSIS_NN against TFLM's reference library, or run heliac with --kernels any or cmsis-nn", t.lib)
		default:
			why = fmt.Sprintf("planned for %s, but CMSIS-NN runs its %s code in this build (%s): run heliac with --cpu naming this CPU (generic for a host)",
				t.lib, b.path.PathName(), b.why)
		}
		w.f("#if HELIAC_KERNEL_BUILD == %d\n#error \"%s: %s\"\n#endif\n", b.id, file, errorText(why))
	}
}

// kernelStateText writes kKernelStateBytes: each planned build's kernel
// data (TFLMKernelState) for its pointer size.
func (t *tflmGen) kernelStateText() {
	w := t.w
	w.WriteString("\n// The kernels' persistent data: what heliac's data on the build's kernels\n" +
		"// says their Init and Prepare keep (kernels.Library.TFLMArena), each buffer\n" +
		"// aligned to 16, for 4-byte and 8-byte pointers.\n")
	for i, s := range t.builds {
		b, _ := buildOf(s.Kernels)
		kw := "#elif"
		if i == 0 {
			kw = "#if"
		}
		w.f("%s HELIAC_KERNEL_BUILD == %d /* %s */\n", kw, b.id, s.Kernels)
		w.f("#if UINTPTR_MAX == 0xffffffffu\nconstexpr size_t kKernelStateBytes = %d;\n#else\nconstexpr size_t kKernelStateBytes = %d;\n#endif\n",
			s.CortexM, s.Host64)
	}
	w.WriteString("#else\nconstexpr size_t kKernelStateBytes = 0; // a build the plan is not for: refused above\n#endif\n")
}

// TFLMRuntimeText says, for the summary, which kernels the runtime runs
// and what it keeps for their persistent data (TFLMKernelState's builds):
// "runs the model with TFLM's reference kernels on the plan; their
// persistent data: 144 bytes on Cortex-M, 192 on a 64-bit host (and 512
// computed by heliac, in flash), besides the arenas".
func TFLMRuntimeText(builds []TFLMKernelBuild) string {
	figures := func(b TFLMKernelBuild, unit string) string {
		var f string
		if path, _ := b.Kernels.Path(); b.Kernels.Name == kernels.CMSISNN && path != kernels.NoDSP {
			f = fmt.Sprintf("%d%s on Cortex-M", b.CortexM, unit)
		} else {
			f = fmt.Sprintf("%d%s on Cortex-M, %d on a 64-bit host", b.CortexM, unit, b.Host64)
		}
		if n := b.PreparedBytes(); n > 0 {
			f += fmt.Sprintf(" (and %d computed by heliac, in flash)", n)
		}
		return f
	}
	if len(builds) == 1 {
		b := builds[0]
		what := "TFLM's reference kernels"
		if b.Kernels.Name == kernels.CMSISNN {
			what = "TFLM's CMSIS-NN kernels (their " + b.Kernels.PathName() + " code)"
		}
		return fmt.Sprintf("runs the model with %s on the plan; their persistent data: %s, besides the arenas", what, figures(b, " bytes"))
	}
	each := make([]string, len(builds))
	for i, b := range builds {
		each[i] = b.Kernels.String() + " " + figures(b, " B")
	}

	return "runs the model on the plan with whichever of its kernel builds the application links; their persistent data, besides the arenas: " +
		strings.Join(each, "; ")
}

// scratchText writes how the runtime hands out the plan's kernel scratch
// rows (tflm_runtime.cc.in, RequestScratchBufferInArena). A plan for one
// kernel build lists each operator's requests as that build makes them,
// one row each: a request takes its operator's next row and must match
// its size exactly (a mismatch is a heliac bug, or a plan for other
// kernels). A plan for several builds gives an operator rows that hold
// the requests of each build (kernels.Library.Scratch: the same rows when
// every build asks the same, else one row as large as the most any build's
// requests take, each rounded up to 16), so a build may ask for fewer or
// smaller buffers, or for several where the plan has one row: requests
// are packed into the operator's rows in order, each at a multiple of 16
// bytes from its row's start. A request of 0 bytes takes no row.
func (t *tflmGen) scratchText() {
	w := t.w
	w.WriteString("\n// How scratch requests take the operator's kernel-scratch rows: exact (a plan\n" +
		"// for one kernel build: each request the next row, of its size) or packed (a\n" +
		"// plan for several: one after another, at multiples of 16, within the rows).\n")
	w.f("constexpr bool kScratchExact = %t;\n", len(t.builds) == 1)
	w.WriteString("// Scratch requests the kernels of any planned build make in all (at least\n// one per row).\n")
	w.f("constexpr size_t kScratchHandleCount = %d;\n", t.handles)
}

// buildNames lists builds by name: "tflm-reference, cmsis-nn (portable)".
func buildNames(builds []TFLMKernelBuild) string {
	names := make([]string, len(builds))
	for i, b := range builds {
		names[i] = b.Kernels.String()
	}
	return strings.Join(names, ", ")
}
