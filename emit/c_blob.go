package emit

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/heliac/heliac/liveness"
)

// Constants says how the C module writes the bytes of its constant arenas
// (heliac's --constants flag).
type Constants string

// The ways of writing constants. "" means ConstantsC.
const (
	// ConstantsC writes each constant arena as a hex initializer in
	// <prefix>.c: plain C that any compiler takes, but slow to compile for
	// megabytes (mobilenet_v2's weights make 18 MB of C).
	ConstantsC Constants = "c"
	// ConstantsIncbin writes each constant arena's bytes to
	// <prefix>.<arena>.bin and an assembler stub, <prefix>.constants.S, that
	// defines the arrays with .incbin, in the sections <prefix>.c would
	// use. It needs an ELF toolchain (GNU as or clang) that finds the .bin
	// files: assemble in their directory or pass -Wa,-I<dir>.
	ConstantsIncbin Constants = "incbin"
	// ConstantsEmbed writes each constant arena's bytes to
	// <prefix>.<arena>.bin and defines the arrays in <prefix>.c with C23's
	// #embed, which only recent compilers have (GCC 15, clang 19): <prefix>.c
	// says so with #error on others.
	ConstantsEmbed Constants = "embed"
)

// ConstantsNames lists the ways of writing constants, for flag help.
var ConstantsNames = []Constants{ConstantsC, ConstantsIncbin, ConstantsEmbed}

// check reports a Constants that is none of ConstantsNames; "" becomes c.
func (c *Constants) check() error {
	if *c == "" {
		*c = ConstantsC
	}
	for _, n := range ConstantsNames {
		if *c == n {
			return nil
		}
	}
	names := make([]string, len(ConstantsNames))
	for i, n := range ConstantsNames {
		names[i] = string(n)
	}
	return fmt.Errorf("emit: constants %q is not one of %s", string(*c), strings.Join(names, ", "))
}

// blobName is the binary file that holds the bytes of constant arena a.
func (g *cgen) blobName(a *cArena) string { return g.prefix + "." + a.Name + ".bin" }

// stubName is the assembler stub of ConstantsIncbin.
func (g *cgen) stubName() string { return g.prefix + ".constants.S" }

// blobDecl writes, in <prefix>.c, what stands for constant image sym of
// arena a when its bytes are in a binary file: the #embed definition, or a
// note that the stub defines it.
func (g *cgen) blobDecl(w *cwriter, a *cArena, sym string) error {
	if g.mode == ConstantsIncbin {
		w.f("/* %s is defined by %s, from %s. */\n", sym, g.stubName(), g.blobName(a))
		return nil
	}
	attr, put := a.attrMacro(), a.bank.put
	if a.bank.init != "" && !a.Staged() {
		put = a.bank.init
	}
	if a.Staged() {
		attr, put = a.macro+"_SOURCE_ATTR", a.src.put
	}
	g.attrDefault(w, attr, put)
	w.f("#if !defined(__has_embed)\n#error \"%s.c: this compiler has no #embed (C23); run heliac with --constants incbin or c\"\n#endif\n", g.prefix)
	// #embed's elements are ints: clang 19 warns under -Wsign-conversion
	// when they initialize uint8_t, though every value fits.
	w.f("#if defined(__GNUC__)\n#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored \"-Wsign-conversion\"\n#endif\n")
	w.f("%s_ALIGNAS(%d) const uint8_t %s[%s] %s = {\n#embed \"%s\"\n};\n", g.macro, a.Alignment, sym, a.sizeMacro(), attr, g.blobName(a))
	w.f("#if defined(__GNUC__)\n#pragma GCC diagnostic pop\n#endif\n")
	return nil
}

// blobFiles returns, in the modes that write them, the binary file of every
// constant arena and, for ConstantsIncbin, the stub that includes them.
func (g *cgen) blobFiles() (Files, error) {
	if g.mode == ConstantsC {
		return nil, nil
	}
	var blobs Files
	stub := &bytes.Buffer{}
	stub.WriteString(cGeneratedLine)
	fmt.Fprintf(stub, "/* Memory plan for model %s; plan hash %s. */\n", commentText(g.meta.ModelName), g.hash)
	fmt.Fprintf(stub, "/* The constant arenas of %s.c, from the binary files beside this file: assemble\n"+
		" * it in their directory or with -Wa,-I<dir>. Define <ARENA>_SECTION (or\n"+
		" * <ARENA>_SOURCE_SECTION for a staged arena's image) to place one elsewhere. */\n", g.prefix)
	for i := range g.arenas {
		a := &g.arenas[i]
		if a.Role != liveness.Constant {
			continue
		}
		var img bytes.Buffer
		img.Grow(int(a.Size))
		if err := g.image(i, func(_ int64, _ []cRow, data []byte) { img.Write(data) },
			func(n int64) { img.Write(make([]byte, n)) }); err != nil {
			return nil, err
		}
		blobs = append(blobs, File{Name: g.blobName(a), Data: img.Bytes()})
		sym, macro, bank := a.sym, a.macro+"_SECTION", a.bank
		section, flags := bank.Section, `"aw"`
		if a.bank.init != "" && !a.Staged() {
			section = bank.InitSection
		}
		if a.Staged() {
			sym, macro, bank = a.imageSym(), a.macro+"_SOURCE_SECTION", a.src
			section = bank.Section
		}
		if !bank.Writable {
			flags = `"a"`
		}
		if section == "" {
			section = ".rodata"
			if bank.Writable {
				section = ".data"
			}
		}
		fmt.Fprintf(stub, "\n/* %s arena %s in %s: %d bytes. */\n", a.Role, a.Name, commentText(bank.Name), a.Size)
		fmt.Fprintf(stub, "#ifdef %s\n\t.section %s, %s\n#else\n\t.section \"%s\", %s\n#endif\n", macro, macro, flags, section, flags)
		fmt.Fprintf(stub, "\t.balign %d\n\t.global %s\n\t.type %s, %%object\n%s:\n\t.incbin \"%s\"\n\t.size %s, %d\n",
			a.Alignment, sym, sym, sym, g.blobName(a), sym, a.Size)
	}
	if g.mode == ConstantsIncbin && len(blobs) > 0 {
		blobs = append(Files{{Name: g.stubName(), Data: stub.Bytes()}}, blobs...)
	}
	return blobs, nil
}
