package tflite

import (
	"encoding/binary"
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/heliac/heliac/graph"
)

// The flatbuffers Go runtime trusts its input: a bad offset makes it index
// past the end of the byte slice and panic. Before the loader calls a
// generated accessor it checks, with the functions here, that every byte
// that accessor will touch lies inside the file. Each table is described by
// the fields the loader reads (a fieldSpec per field); fields heliac never
// reads are not checked and never touched.

// fieldKind says how a field is stored in its table.
type fieldKind int

const (
	kindScalar    fieldKind = iota + 1 // inline scalar of spec.size bytes
	kindOffset                         // uoffset to a table (checked when visited)
	kindString                         // uoffset to a string
	kindVector                         // uoffset to a vector of spec.size-byte elements
	kindVectorRef                      // uoffset to a vector of uoffsets (tables or strings)
)

// fieldSpec describes one field the loader reads. vt is the field's vtable
// offset as flatc assigns it: 4 + 2*(field id), unions taking two ids.
type fieldSpec struct {
	name string
	vt   flatbuffers.VOffsetT
	kind fieldKind
	size int64
}

// checker validates positions inside one flatbuffer.
//
// It also bounds the loader's work. Flatbuffers may share: many tables can
// point at one vector and a vector can repeat one table, so a small file
// can describe a huge model (a thousand tensors each with the same
// million-entry shape). Every table and vector the checker admits is
// charged against budget, which starts at a small multiple of the file
// size; a well-formed file, where nothing is shared, spends about one
// file size.
//
// It records, in end, where the last byte it checked ends: with a walk of
// the whole model (walkModel), the end of the flatbuffer's content.
type checker struct {
	buf    []byte
	budget int64
	end    int64
}

// Work budget: budgetPerByte units per file byte plus budgetBase, where a
// vector costs its size in bytes and a table costs tableCost.
const (
	budgetPerByte = 8
	budgetBase    = 1 << 16
	tableCost     = 8
)

func newChecker(buf []byte) checker {
	return checker{buf: buf, budget: budgetPerByte*int64(len(buf)) + budgetBase}
}

// saw records that bytes [pos, pos+n), inside the buffer, belong to the
// flatbuffer.
func (c *checker) saw(pos, n int64) {
	c.end = max(c.end, pos+n)
}

// charge spends n units of the work budget, failing once it is exhausted.
func (c *checker) charge(path string, pos, n int64) error {
	c.budget -= n
	if c.budget < 0 {
		return corrupt(path, pos, "model expands to over %d times the file size through shared tables or vectors", budgetPerByte)
	}
	return nil
}

// rootPath is the path of the model table; the paths of its fields leave
// it out (subgraphs[0], not model.subgraphs[0]).
const rootPath = "model"

func fieldPath(table, field string) string {
	if table == rootPath {
		return field
	}
	return table + "." + field
}

// CorruptError reports a malformed model: Path names the field as a
// flatbuffer path (subgraphs[0].tensors[3].shape) and Offset the byte
// offset in the file where the problem was found, or -1 when unknown.
type CorruptError struct {
	Path   string
	Offset int64
	Msg    string
}

func (e *CorruptError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("tflite: %s: %s (at byte %d)", e.Path, e.Msg, e.Offset)
	}
	return fmt.Sprintf("tflite: %s: %s", e.Path, e.Msg)
}

func corrupt(path string, off int64, format string, args ...any) error {
	return &CorruptError{Path: path, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func (c *checker) u32(pos int64) uint32 { return binary.LittleEndian.Uint32(c.buf[pos:]) }
func (c *checker) u16(pos int64) uint16 { return binary.LittleEndian.Uint16(c.buf[pos:]) }

// inside reports whether [pos, pos+n) lies within the buffer.
func (c *checker) inside(pos, n int64) bool {
	return pos >= 0 && n >= 0 && pos <= int64(len(c.buf)) && n <= int64(len(c.buf))-pos
}

// table checks the table at pos, its vtable, and each field in specs that
// the vtable marks present, so that the generated accessors for those
// fields read only bytes inside the file.
func (c *checker) table(pos int64, path string, specs []fieldSpec) error {
	vtable, vtSize, err := c.vtable(pos, path)
	if err != nil {
		return err
	}
	for _, f := range specs {
		if int64(f.vt)+2 > vtSize {
			continue // field absent: the accessor returns the default
		}
		rel := int64(c.u16(vtable + int64(f.vt)))
		if rel == 0 {
			continue
		}
		if err := c.field(pos+rel, fieldPath(path, f.name), f); err != nil {
			return err
		}
	}
	return nil
}

// vtable checks the table at pos, charges it against the budget, and
// returns the position and size of its vtable, which lies inside the file.
func (c *checker) vtable(pos int64, path string) (vtable, vtSize int64, err error) {
	if !c.reachable(pos) {
		return 0, 0, corrupt(path, -1, "table offset %d outside the file (size %d)", pos, len(c.buf))
	}
	if err := c.charge(path, pos, tableCost); err != nil {
		return 0, 0, err
	}
	vtable = pos - int64(int32(c.u32(pos)))
	if !c.inside(vtable, 4) {
		return 0, 0, corrupt(path, pos, "vtable offset %d outside the file (size %d)", vtable, len(c.buf))
	}
	vtSize = int64(c.u16(vtable))
	if vtSize < 4 || vtSize%2 != 0 || !c.inside(vtable, vtSize) {
		return 0, 0, corrupt(path, vtable, "bad vtable size %d", vtSize)
	}
	// The table's inline bytes, as its vtable gives them (padding
	// included), and the vtable.
	c.saw(pos, min(max(4, int64(c.u16(vtable+2))), int64(len(c.buf))-pos))
	c.saw(vtable, vtSize)
	return vtable, vtSize, nil
}

// field checks one present field stored at pos.
func (c *checker) field(pos int64, path string, f fieldSpec) error {
	if f.kind == kindScalar {
		if !c.inside(pos, f.size) {
			return corrupt(path, pos, "%d-byte field runs past the end of the file (size %d)", f.size, len(c.buf))
		}
		c.saw(pos, f.size)
		return nil
	}
	if !c.inside(pos, 4) {
		return corrupt(path, pos, "offset field runs past the end of the file (size %d)", len(c.buf))
	}
	c.saw(pos, 4)
	target := pos + int64(c.u32(pos))
	if !c.reachable(target) {
		return corrupt(path, pos, "offset to %d outside the file (size %d)", target, len(c.buf))
	}
	switch f.kind {
	case kindOffset:
		return nil // the table is checked when the loader visits it
	case kindString:
		return c.vector(target, path, 1, 1)
	case kindVector:
		return c.vector(target, path, f.size, 0)
	case kindVectorRef:
		if err := c.vector(target, path, 4, 0); err != nil {
			return err
		}
		n := int64(c.u32(target))
		for j := int64(0); j < n; j++ {
			el := target + 4 + 4*j
			if t := el + int64(c.u32(el)); !c.reachable(t) {
				return corrupt(fmt.Sprintf("%s[%d]", path, j), el, "offset to %d outside the file (size %d)", t, len(c.buf))
			}
		}
		return nil
	}
	panic(fmt.Sprintf("tflite: unknown field kind %d", f.kind))
}

// reachable reports whether an offset's target leaves room for a table's
// vtable offset or a vector's length, and lies below 2 GiB, where the
// runtime's 32-bit offsets could wrap.
func (c *checker) reachable(target int64) bool {
	return c.inside(target, 4) && target < 1<<31
}

// vector checks a vector (or string, with extra=1 for its terminator) whose
// length word is at pos, a reachable position, and whose elements are elem
// bytes each.
func (c *checker) vector(pos int64, path string, elem, extra int64) error {
	n := int64(c.u32(pos))
	if !c.inside(pos+4, n*elem+extra) {
		if extra > 0 {
			return corrupt(path, pos, "string of %d bytes runs past the end of the file (size %d)", n, len(c.buf))
		}
		return corrupt(path, pos, "vector of %d elements runs past the end of the file (size %d)", n, len(c.buf))
	}
	c.saw(pos, 4+n*elem+extra)
	return c.charge(path, pos, n*elem+extra)
}

// Field specs of the tables the loader reads. Vtable offsets follow the field
// order of schema.fbs (revision 3d).
var (
	modelFields = []fieldSpec{
		{"version", 4, kindScalar, 4},
		{"operator_codes", 6, kindVectorRef, 0},
		{"subgraphs", 8, kindVectorRef, 0},
		{"description", 10, kindString, 0},
		{"buffers", 12, kindVectorRef, 0},
		{"metadata", 16, kindVectorRef, 0},
		{"signature_defs", 18, kindVectorRef, 0},
	}
	operatorCodeFields = []fieldSpec{
		{"deprecated_builtin_code", 4, kindScalar, 1},
		{"custom_code", 6, kindString, 0},
		{"version", 8, kindScalar, 4},
		{"builtin_code", 10, kindScalar, 4},
	}
	subgraphFields = []fieldSpec{
		{"tensors", 4, kindVectorRef, 0},
		{"inputs", 6, kindVector, 4},
		{"outputs", 8, kindVector, 4},
		{"operators", 10, kindVectorRef, 0},
		{"name", 12, kindString, 0},
	}
	tensorFields = []fieldSpec{
		{"shape", 4, kindVector, 4},
		{"type", 6, kindScalar, 1},
		{"buffer", 8, kindScalar, 4},
		{"name", 10, kindString, 0},
		{"quantization", 12, kindOffset, 0},
		{"is_variable", 14, kindScalar, 1},
		{"sparsity", 16, kindOffset, 0},
		{"shape_signature", 18, kindVector, 4},
	}
	quantizationFields = []fieldSpec{
		{"scale", 8, kindVector, 4},
		{"zero_point", 10, kindVector, 8},
		{"details_type", 12, kindScalar, 1},
		{"quantized_dimension", 16, kindScalar, 4},
	}
	operatorFields = []fieldSpec{
		{"opcode_index", 4, kindScalar, 4},
		{"inputs", 6, kindVector, 4},
		{"outputs", 8, kindVector, 4},
		{"builtin_options_type", 10, kindScalar, 1},
		{"builtin_options", 12, kindOffset, 0},
		{"intermediates", 20, kindVector, 4},
		{"builtin_options_2_type", 26, kindScalar, 1},
		{"builtin_options_2", 28, kindOffset, 0},
	}
	bufferFields = []fieldSpec{
		{"data", 4, kindVector, 1},
		{"offset", 6, kindScalar, 8},
		{"size", 8, kindScalar, 8},
	}
	metadataFields = []fieldSpec{
		{"name", 4, kindString, 0},
		{"buffer", 6, kindScalar, 4},
	}
	signatureFields = []fieldSpec{
		{"inputs", 4, kindVectorRef, 0},
		{"outputs", 6, kindVectorRef, 0},
		{"signature_key", 8, kindString, 0},
		{"subgraph_index", 12, kindScalar, 4},
	}
	tensorMapFields = []fieldSpec{
		{"name", 4, kindString, 0},
		{"tensor_index", 6, kindScalar, 4},
	}
	// Subgraph-calling options: two int32 subgraph indices at most.
	twoIndexFields = []fieldSpec{
		{"first_subgraph_index", 4, kindScalar, 4},
		{"second_subgraph_index", 6, kindScalar, 4},
	}
	varHandleFields = []fieldSpec{
		{"container", 4, kindString, 0},
		{"shared_name", 6, kindString, 0},
	}
	conv2DFields = []fieldSpec{
		{"padding", 4, kindScalar, 1},
		{"stride_w", 6, kindScalar, 4},
		{"stride_h", 8, kindScalar, 4},
		{"fused_activation_function", 10, kindScalar, 1},
		{"dilation_w_factor", 12, kindScalar, 4},
		{"dilation_h_factor", 14, kindScalar, 4},
	}
	depthwiseFields = []fieldSpec{
		{"padding", 4, kindScalar, 1},
		{"stride_w", 6, kindScalar, 4},
		{"stride_h", 8, kindScalar, 4},
		{"depth_multiplier", 10, kindScalar, 4},
		{"fused_activation_function", 12, kindScalar, 1},
		{"dilation_w_factor", 14, kindScalar, 4},
		{"dilation_h_factor", 16, kindScalar, 4},
	}
	transposeConvFields = []fieldSpec{
		{"padding", 4, kindScalar, 1},
		{"stride_w", 6, kindScalar, 4},
		{"stride_h", 8, kindScalar, 4},
		{"fused_activation_function", 10, kindScalar, 1},
		{"quantized_bias_type", 12, kindScalar, 1},
	}
	pool2DFields = []fieldSpec{
		{"padding", 4, kindScalar, 1},
		{"stride_w", 6, kindScalar, 4},
		{"stride_h", 8, kindScalar, 4},
		{"filter_width", 10, kindScalar, 4},
		{"filter_height", 12, kindScalar, 4},
		{"fused_activation_function", 14, kindScalar, 1},
	}
	compositeFields = []fieldSpec{
		{"name", 4, kindString, 0},
		{"decomposition_subgraph_index", 6, kindScalar, 4},
	}
)

// shortData says why data, a tensor's buffer, cannot hold the tensor: it
// has fewer bytes than the type and shape need (sub-byte types packed,
// INT4 two to a byte), so kernels would read past it, into whatever the
// plan puts next. Empty data (no constant), types without a fixed size
// (STRING) and zero-size shapes are never short. Load and Encode both
// check it; it returns "" when data is not short.
func shortData(t *graph.Tensor, data []byte) string {
	need, err := graph.ByteSize(t.Type, t.Shape)
	if err != nil || len(data) == 0 || t.Type.Bits() == 0 || int64(len(data)) >= need {
		return "" // a bad shape is reported as such
	}
	return fmt.Sprintf("buffer %d holds %d bytes, but the %s shape %v needs %d", t.Buffer, len(data), t.Type, t.Shape, need)
}
