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
	w.f("#include \"%s.h\"\n", g.prefix)
	for i := range g.arenas {
		if err := g.arenaDef(w, i); err != nil {
			return nil, err
		}
	}
	if g.staged() {
		g.stageFunc(w)
	}
	if len(g.table) > 0 {
		g.tableDef(w)
	}
	if len(g.kernel) > 0 {
		g.kernelScratchDef(w)
	}
	return w.Bytes(), nil
}

// sourceSizeHint estimates the size of <prefix>.c so that a multi-megabyte
// constant arena is written without regrowing the buffer.
func (g *cgen) sourceSizeHint() int {
	n := 4096 + 128*len(g.table)
	for _, a := range g.arenas {
		if a.Role == liveness.Constant {
			n += int(a.Size)*5 + int(a.Size)/bytesPerLine*2 + 64*len(g.table)
		}
	}
	return n
}

// arenaDef defines arena i: a zeroed array for scratch and persistent
// arenas, the weights image for a constant arena (as a separate source
// array when staged).
func (g *cgen) arenaDef(w *cwriter, i int) error {
	a := &g.arenas[i]
	used := ""
	if a.Used != a.Size {
		used = fmt.Sprintf(", %d used", a.Used)
	}
	w.f("\n/* %s arena in %s: %d bytes%s. */\n", a.Role, commentText(a.Memory), a.Size, used)
	cAttrDefault(w, a.attrMacro())
	align := a.Alignment
	if a.writable() {
		w.f("_Alignas(%d) uint8_t %s[%s] %s;\n", align, a.sym, a.sizeMacro(), a.attrMacro())
	}
	if a.Role != liveness.Constant {
		return nil
	}
	sym, attr := a.sym, a.attrMacro()
	if a.Staged() {
		sym, attr = a.sym+"_source", a.macro+"_SOURCE_ATTR"
		w.f("\n/* The image copied into %s from %s by %s_stage_constants. */\n", a.sym, commentText(a.Source), g.prefix)
		cAttrDefault(w, attr)
		w.f("static _Alignas(%d) const uint8_t %s[%s] %s = {\n", align, sym, a.sizeMacro(), attr)
	} else {
		w.f("_Alignas(%d) const uint8_t %s[%s] %s = {\n", align, sym, a.sizeMacro(), attr)
	}
	if err := g.constantImage(w, i); err != nil {
		return err
	}
	w.WriteString("};\n")
	return nil
}

func cAttrDefault(w *cwriter, macro string) {
	w.f("#ifndef %s\n#define %s\n#endif\n", macro, macro)
}

// constantImage writes the initializer of constant arena i: every tensor's
// buffer at its offset, cZeros between, up to the arena's size. Tensors that
// share a model buffer share an offset and are written once.
func (g *cgen) constantImage(w *cwriter, i int) error {
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
		data, err := g.constantData(first)
		if err != nil {
			return err
		}
		if off < end {
			return fmt.Errorf("emit: constant tensor %v %s at offset %d overlaps the data before it, which ends at %d",
				first.Ref, quoted(first.Name), off, end)
		}
		writeCZeros(&w.Buffer, off-end)
		for ; k < len(rows) && rows[k].Offset == off; k++ {
			same, err := g.constantData(rows[k])
			if err != nil {
				return err
			}
			if !bytes.Equal(same, data) {
				return fmt.Errorf("emit: constant tensors %v and %v share offset %d but not their data", first.Ref, rows[k].Ref, off)
			}
			w.f("\t/* 0x%06x: tensor %d:%d %s (%d bytes) */\n", off, rows[k].Ref.Subgraph, rows[k].Ref.Tensor,
				commentText(rows[k].Name), len(data))
		}
		writeCHex(&w.Buffer, data)
		end = off + int64(len(data))
	}
	writeCZeros(&w.Buffer, a.Size-end)
	return nil
}

// constantData returns the model buffer behind a constant tensor.
func (g *cgen) constantData(r cRow) ([]byte, error) {
	if r.Ref.Subgraph < 0 || int(r.Ref.Subgraph) >= len(g.m.Subgraphs) ||
		r.Ref.Tensor < 0 || int(r.Ref.Tensor) >= len(g.m.Subgraphs[r.Ref.Subgraph].Tensors) {
		return nil, fmt.Errorf("emit: constant tensor %v is not in the model", r.Ref)
	}
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

// stageFunc defines <prefix>_stage_constants.
func (g *cgen) stageFunc(w *cwriter) {
	w.f("\nvoid %s_stage_constants(void)\n{\n\tsize_t i;\n", g.prefix)
	for _, a := range g.arenas {
		if a.Staged() {
			w.f("\tfor (i = 0; i < %s; i++) {\n\t\t%s[i] = %s_source[i];\n\t}\n", a.sizeMacro(), a.sym, a.sym)
		}
	}
	w.WriteString("}\n")
}

// tableDef defines <prefix>_tensors.
func (g *cgen) tableDef(w *cwriter) {
	w.f("\nconst %s_tensor_t %s_tensors[%s_TENSOR_COUNT] = {\n", g.prefix, g.prefix, g.macro)
	w.WriteString("\t/* subgraph, tensor, arena, offset, size */\n")
	for i, r := range g.table {
		w.f("\t{%du, %du, %s, %du, %du}, /* [%d] %s */\n", r.Ref.Subgraph, r.Ref.Tensor, g.arenas[r.arena].enum,
			r.Offset, r.Size, i, commentText(r.Name))
	}
	w.WriteString("};\n")
}

// kernelScratchDef defines <prefix>_kernel_scratch.
func (g *cgen) kernelScratchDef(w *cwriter) {
	w.f("\nconst %s_kernel_scratch_t %s_kernel_scratch[%s_KERNEL_SCRATCH_COUNT] = {\n", g.prefix, g.prefix, g.macro)
	w.WriteString("\t/* subgraph, op, index, arena, offset, size */\n")
	for i, r := range g.kernel {
		w.f("\t{%du, %du, %du, %s, %du, %du}, /* [%d] %s */\n", r.Op.Subgraph, r.Op.Op, r.Index, g.arenas[r.arena].enum,
			r.Offset, r.Size, i, commentText(r.Name))
	}
	w.WriteString("};\n")
}
