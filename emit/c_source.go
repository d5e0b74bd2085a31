package emit

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/heliac/heliac/liveness"
)

// bytesPerLine is how many array elements one line of a constant arena holds.
const bytesPerLine = 16

// source renders <prefix>.c.
func (g *cgen) source() ([]byte, error) {
	w := &cwriter{}
	w.Grow(g.sourceSizeHint())
	w.WriteString(cGeneratedLine)
	w.f("/* Memory plan for model %s; plan hash %s. */\n\n", commentText(g.meta.ModelName), g.hash)
	w.f("#include <string.h>\n\n#include \"%s.h\"\n", g.prefix)
	for i := range g.arenas {
		if err := g.arenaDef(w, i); err != nil {
			return nil, err
		}
	}
	g.tableDefs(w)
	g.runtime(w)
	if err := w.err(g.prefix + ".c"); err != nil {
		return nil, err
	}
	return w.Bytes(), nil
}

// sourceSizeHint estimates the size of <prefix>.c so that a multi-megabyte
// constant arena is written without regrowing the buffer.
func (g *cgen) sourceSizeHint() int {
	n := 8192 + 160*len(g.table) + 128*len(g.sched.runs)
	for _, a := range g.arenas {
		if a.Role == liveness.Constant && g.mode == ConstantsC {
			n += int(a.Size)*5 + int(a.Size)/bytesPerLine*2 + 64*len(g.table)
		}
	}
	return n
}

// arenaDef defines arena i: a zeroed array for scratch and persistent
// arenas, the weights image for a constant arena (and for a staged one, its
// zeroed copy), each in its bank's section. An external arena has no
// storage. A constant image goes to a binary file in the modes that write
// one (blobDef).
func (g *cgen) arenaDef(w *cwriter, i int) error {
	a := &g.arenas[i]
	used := ""
	if a.Used != a.Size {
		used = fmt.Sprintf(", %d used", a.Used)
	}
	how := ""
	switch {
	case a.external():
		how = fmt.Sprintf("; external: the application binds its buffer (%s_bind_arena)", g.prefix)
	case a.Staged():
		how = fmt.Sprintf("; %s_init copies its image from %s", g.prefix, commentText(a.Source))
	}
	w.f("\n/* %s arena in %s: %d bytes%s%s. */\n", a.Role, commentText(a.Memory), a.Size, used, how)
	if a.writable() && !a.external() {
		g.attrDefault(w, a.attrMacro(), a.bank.put)
		w.f("%s_ALIGNAS(%d) uint8_t %s[%s] %s;\n", g.macro, a.Alignment, a.sym, a.sizeMacro(), a.attrMacro())
	}
	if a.Role != liveness.Constant {
		return nil
	}
	sym, attr, put := a.sym, a.attrMacro(), a.bank.put
	if a.bank.init != "" && !a.Staged() {
		put = a.bank.init // constants in RAM the start-up code fills
	}
	if a.Staged() {
		sym, attr, put = a.imageSym(), a.macro+"_SOURCE_ATTR", a.src.put
		w.f("\n/* The image %s_init copies into %s from %s. */\n", g.prefix, a.Name, commentText(a.Source))
	}
	if g.mode != ConstantsC {
		return g.blobDecl(w, a, sym)
	}
	g.attrDefault(w, attr, put)
	w.f("%s_ALIGNAS(%d) const uint8_t %s[%s] %s = {\n", g.macro, a.Alignment, sym, a.sizeMacro(), attr)
	if err := g.constantImage(&w.Buffer, i); err != nil {
		return err
	}
	w.WriteString("};\n")
	return nil
}

// attrDefault writes the default of an arena's placement macro: its bank's.
func (g *cgen) attrDefault(w *cwriter, macro, put string) {
	w.f("#ifndef %s\n", macro)
	w.define(macro, "%s", put)
	w.WriteString("#endif\n")
}

// constantImage writes the initializer of constant arena i: every tensor's
// buffer at its offset, cZeros between, up to the arena's size. Tensors that
// share a model buffer share an offset and are written once.
func (g *cgen) constantImage(b *bytes.Buffer, i int) error {
	return g.image(i, func(off int64, rows []cRow, data []byte) {
		for _, r := range rows {
			fmt.Fprintf(b, "\t/* 0x%06x: tensor %d:%d %s (%d bytes) */\n", off, r.Ref.Subgraph, r.Ref.Tensor,
				commentText(r.Name), len(data))
		}
		writeCHex(b, data)
	}, func(n int64) { writeCZeros(b, n) })
}

// image walks constant arena i in offset order, calling data for each
// model buffer (with the tensors that share it) and zeros for the padding
// before it and after the last, up to the arena's size.
func (g *cgen) image(i int, data func(off int64, rows []cRow, data []byte), zeros func(n int64)) error {
	a := &g.arenas[i]
	var rows []cRow
	for _, r := range g.table {
		if r.arena == i {
			rows = append(rows, r)
		}
	}
	slices.SortStableFunc(rows, func(x, y cRow) int { return cmp.Compare(x.Offset, y.Offset) })
	var end int64
	for k := 0; k < len(rows); {
		first := rows[k]
		off := first.Offset
		bytes0, err := g.constantData(first)
		if err != nil {
			return err
		}
		if off < end {
			return fmt.Errorf("emit: constant tensor %v %s at offset %d overlaps the data before it, which ends at %d",
				first.Ref, quoted(first.Name), off, end)
		}
		zeros(off - end)
		j := k
		for ; j < len(rows) && rows[j].Offset == off; j++ {
			same, err := g.constantData(rows[j])
			if err != nil {
				return err
			}
			if !bytes.Equal(same, bytes0) {
				return fmt.Errorf("emit: constant tensors %v and %v share offset %d but not their data", first.Ref, rows[j].Ref, off)
			}
		}
		data(off, rows[k:j], bytes0)
		k = j
		end = off + int64(len(bytes0))
	}
	zeros(a.Size - end)
	return nil
}

// constantData returns the model buffer behind a constant tensor.
func (g *cgen) constantData(r cRow) ([]byte, error) {
	t := g.m.Tensor(r.Ref.Subgraph, r.Ref.Tensor)
	if !g.m.HasData(t) {
		return nil, fmt.Errorf("emit: constant tensor %v %s has no data in the model", r.Ref, quoted(r.Name))
	}
	data := g.m.Buffers[t.Buffer].Data
	if int64(len(data)) != r.Size {
		return nil, fmt.Errorf("emit: constant tensor %v %s is planned as %d bytes but its buffer holds %d", r.Ref, quoted(r.Name), r.Size, len(data))
	}
	return data, nil
}

// writeCHex writes data as array elements, bytesPerLine to a line
// ("\t0x1f,0x00,...,\n"). It formats by hand: fmt per byte is far too slow
// for multi-megabyte models.
func writeCHex(b *bytes.Buffer, data []byte) {
	const digits = "0123456789abcdef"
	var line [1 + 5*bytesPerLine + 1]byte
	line[0] = '\t'
	for len(data) > 0 {
		n := min(len(data), bytesPerLine)
		k := 1
		for _, c := range data[:n] {
			line[k], line[k+1], line[k+2], line[k+3], line[k+4] = '0', 'x', digits[c>>4], digits[c&15], ','
			k += 5
		}
		line[k] = '\n'
		b.Write(line[:k+1])
		data = data[n:]
	}
}

var cZeros [64 * bytesPerLine]byte

func writeCZeros(b *bytes.Buffer, n int64) {
	for n > 0 {
		k := min(n, int64(len(cZeros)))
		writeCHex(b, cZeros[:k])
		n -= k
	}
}

// tableDefs defines <prefix>_arenas, <prefix>_tensors, <prefix>_dims, the
// schedule's tables and <prefix>_kernel_scratch.
func (g *cgen) tableDefs(w *cwriter) {
	p, P := g.prefix, g.macro
	if len(g.arenas) > 0 {
		w.f("\nconst %s_arena_info_t %s_arenas[%s_ARENA_COUNT] = {\n", p, p, P)
		w.WriteString("\t/* size, alignment, role, external */\n")
		for i, a := range g.arenas {
			w.f("\t{%s, %du, %s, %du}, /* [%d] %s */\n", a.sizeMacro(), a.Alignment, g.cRole(a.Role),
				map[bool]int{true: 1}[a.external()], i, a.Name)
		}
		w.WriteString("};\n")
	}
	if len(g.table) > 0 {
		w.f("\nconst %s_tensor_t %s_tensors[%s_TENSOR_COUNT] = {\n", p, p, P)
		w.WriteString("\t/* subgraph, tensor, arena, type, rank, offset, size, dims */\n")
		for i, r := range g.table {
			t := g.m.Tensor(r.Ref.Subgraph, r.Ref.Tensor)
			w.f("\t{%du, %du, %s, %s_TYPE_%s, %du, %du, %du, %du}, /* [%d] %s */\n", r.Ref.Subgraph, r.Ref.Tensor,
				g.arenas[r.arena].enum, P, t.Type, len(t.Shape), r.Offset, r.Size, r.dims, i, commentText(r.Name))
		}
		w.WriteString("};\n")
	}
	if g.dimCount() > 0 {
		w.f("\nconst int32_t %s_dims[%s_DIM_COUNT] = {\n", p, P)
		for _, r := range g.table {
			t := g.m.Tensor(r.Ref.Subgraph, r.Ref.Tensor)
			if len(t.Shape) == 0 {
				continue
			}
			w.WriteString("\t")
			for _, d := range t.Shape {
				w.f("%s, ", cInt32(d))
			}
			w.f("/* [%d] tensor %d:%d */\n", r.dims, r.Ref.Subgraph, r.Ref.Tensor)
		}
		w.WriteString("};\n")
	}
	g.scheduleDefs(w)
	if len(g.kernel) > 0 {
		w.f("\nconst %s_kernel_scratch_t %s_kernel_scratch[%s_KERNEL_SCRATCH_COUNT] = {\n", p, p, P)
		w.WriteString("\t/* subgraph, op, index, arena, offset, size */\n")
		for i, r := range g.kernel {
			w.f("\t{%du, %du, %du, %s, %du, %du}, /* [%d] %s */\n", r.Op.Subgraph, r.Op.Op, r.Index, g.arenas[r.arena].enum,
				r.Offset, r.Size, i, commentText(r.Name))
		}
		w.WriteString("};\n")
	}
}

// cInt32 writes a dimension as a C int literal; INT32_MIN has none.
func cInt32(d int32) string {
	if d == -1<<31 {
		return "(-2147483647 - 1)"
	}
	return fmt.Sprint(d)
}
