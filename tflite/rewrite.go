package tflite

import (
	"errors"
	"fmt"
	"math/bits"
	"reflect"
	"sort"
	"strings"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/heliac/heliac/tflite/schema"
)

// SetMetadata returns a copy of model in which the metadata entry name
// holds data, in a buffer of its own, inline in the flatbuffer and
// 16-byte aligned: TFLM reads OfflineMemoryAllocation through
// buffer->data() as uint32 values. An entry with exactly that name is
// replaced and replaced is true; when the model has several, all of them
// are pointed at the new data. The replaced entry's old buffer is reused
// when nothing else (a tensor, another metadata entry, metadata_buffer)
// refers to it, and otherwise a buffer is appended; an old buffer of a
// duplicate entry that nothing refers to any more is emptied. Without
// such an entry, an entry and a buffer are appended. No buffer is ever
// renumbered. name must not be empty.
//
// Everything else of the model is kept, as Repack keeps it.
func SetMetadata(model []byte, name string, data []byte) (out []byte, replaced bool, err error) {
	return SetMetadataAndOrder(model, name, data, nil)
}

// setMetadata is SetMetadata without the recover, for fuzzing.
func setMetadata(model []byte, name string, data []byte) ([]byte, bool, error) {
	return rewrite(model, name, data, nil)
}

// SetMetadataAndOrder is SetMetadata that also writes each subgraph's
// operators in a new order: order[s] lists the operators of subgraph s,
// by their index in model, in the order they are to run (TFLite runs a
// subgraph's operators in the order it lists them). A nil order keeps
// the model's. Nothing else moves: tensors, buffers and the subgraphs
// control-flow operators name keep their indices.
func SetMetadataAndOrder(model []byte, name string, data []byte, order [][]int) (out []byte, replaced bool, err error) {
	defer func() {
		// The checks (load.go, walk.go) are meant to make this
		// unreachable; the recover keeps a missed one from crashing a
		// user's build.
		if r := recover(); r != nil {
			out, replaced, err = nil, false, fmt.Errorf("tflite: internal error rewriting model (please report): %v", r)
		}
	}()
	return rewrite(model, name, data, order)
}

// rewrite sets the metadata entry and the operator order.
func rewrite(model []byte, name string, data []byte, order [][]int) ([]byte, bool, error) {
	if name == "" {
		return nil, false, errors.New("tflite: set metadata: empty name")
	}
	if int64(len(data)) >= maxInline {
		return nil, false, fmt.Errorf("tflite: set metadata %q: %d bytes exceed the 2 GiB flatbuffer limit", name, len(data))
	}
	o, err := unpack(model)
	if err != nil {
		return nil, false, err
	}
	if order != nil {
		if err := o.reorder(order); err != nil {
			return nil, false, err
		}
	}
	replaced := o.setMetadata(name, data)
	out, err := o.pack()
	if err != nil {
		return nil, false, err
	}
	return out, replaced, nil
}

// reorder lists each subgraph's operators in the order given, which must
// name each of them once.
func (o *objectModel) reorder(order [][]int) error {
	if len(order) != len(o.m.Subgraphs) {
		return fmt.Errorf("tflite: reorder: the order lists %d subgraphs, the model has %d", len(order), len(o.m.Subgraphs))
	}
	pos := make([][]int, len(order))
	for si, ops := range order {
		old := o.m.Subgraphs[si].Operators
		if len(ops) != len(old) {
			return fmt.Errorf("tflite: reorder: the order of subgraph %d lists %d operators, the subgraph has %d", si, len(ops), len(old))
		}
		pos[si] = make([]int, len(old))
		seen := make([]bool, len(old))
		next := make([]*schema.OperatorT, len(old))
		for i, oi := range ops {
			if oi < 0 || oi >= len(old) || seen[oi] {
				return fmt.Errorf("tflite: reorder: the order of subgraph %d does not list each operator once (operator %d)", si, oi)
			}
			seen[oi] = true
			next[i] = old[oi]
			pos[si][oi] = i
		}
		o.m.Subgraphs[si].Operators = next
	}
	for i := range o.external {
		if e := &o.external[i]; e.buffer < 0 {
			e.op = pos[e.sg][e.op]
		}
	}
	return nil
}

// Repack decodes model with the object API of the flatc bindings and
// encodes it again, changing nothing: every table and field of the schema
// (operator options, custom options, sparsity, quantization, signature
// defs, metadata, external buffer groups, buffers), the file identifier
// and the order of every vector are kept. Buffer data and custom
// quantization stay 16-byte aligned (the schema's force_align). Data in
// the offset/size form of models over 2 GiB (Buffer.offset,
// Operator.large_custom_options_offset) is written after the new
// flatbuffer in its original order, aligned as in the input (up to 4096
// bytes) and to 16 bytes at least, with the offsets rewritten. Bytes
// appended to the file after all that (TFLite Metadata's ZIP of associated
// files) are kept as they are and written last, 16-byte aligned; zero
// bytes right after the model, up to a multiple of 16, are taken as its
// padding. A ZIP's offsets then count from a new start: ZIP readers
// (Python's zipfile, minizip, Go's archive/zip) find it as they find one
// after a self-extractor's code.
//
// The bytes differ from the input's: tables are laid out anew, a table
// or vector that several fields share is written once for each, a scalar
// equal to its default is left out, and deprecated fields, which the
// bindings do not read and no TFLite runtime sees, are left out. A string
// or vector absent from the input stays absent, and an empty one stays
// present (pack.go). Repack of its own output gives the same bytes.
//
// The input is first checked as Load checks it; a model with a field or
// union type this schema (revision 3d) does not know is refused, since the
// object API would drop it.
func Repack(model []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("tflite: internal error rewriting model (please report): %v", r)
		}
	}()
	return repack(model)
}

// repack is Repack without the recover, for fuzzing and tests.
func repack(model []byte) ([]byte, error) {
	o, err := unpack(model)
	if err != nil {
		return nil, err
	}
	return o.pack()
}

// objectModel is a model decoded with the object API, with the data it
// keeps after the flatbuffer (the offset/size form) in external.
type objectModel struct {
	m        *schema.ModelT
	absent   map[fieldRef]bool // the strings the input leaves out (pack.go)
	external []externalData
	// trailing holds the bytes after the model's flatbuffer and external
	// data, which pack writes last, as they are: TFLite Metadata puts a
	// ZIP of associated files (labels, vocabularies) there.
	trailing []byte
	hint     int // a guess of the flatbuffer's size, for the builder
}

// externalData is one piece of data stored after the flatbuffer: the
// data of buffers[buffer] or, when buffer is -1, the large custom options
// of subgraphs[sg].operators[op].
type externalData struct {
	buffer, sg, op int
	data           []byte
	offset         uint64 // in the input, which fixes the order and the alignment
}

// maxExternalAlign caps the alignment external data keeps from the input:
// a page. Beyond it a large power of two in an offset is chance.
const maxExternalAlign = 4096

// unpack checks model as Load does, refuses what the object API would
// drop, and decodes it.
func unpack(model []byte) (*objectModel, error) {
	model = model[:len(model):len(model)]
	if _, err := load(model); err != nil {
		return nil, err
	}
	end, err := walkModelEnd(model, true)
	if err != nil {
		return nil, err
	}
	fb := schema.GetRootAsModel(model, 0)
	o := &objectModel{m: fb.UnPack(), absent: map[fieldRef]bool{}}
	s := tfliteSchema()
	markAbsent(fb.Table(), s.tables[s.root], reflect.ValueOf(o.m), o.absent)
	for i, b := range o.m.Buffers {
		if b.Offset > 1 {
			// load checked that the data lies inside the file.
			o.external = append(o.external, externalData{buffer: i, data: model[b.Offset : b.Offset+b.Size], offset: b.Offset})
		}
	}
	for si, sg := range o.m.Subgraphs {
		for oi, op := range sg.Operators {
			off, size := op.LargeCustomOptionsOffset, op.LargeCustomOptionsSize
			if off <= 1 {
				continue
			}
			if off > uint64(len(model)) || size > uint64(len(model))-off {
				path := fmt.Sprintf("subgraphs[%d].operators[%d].large_custom_options_offset", si, oi)
				return nil, corrupt(path, -1, "custom options at offset %d size %d lie outside the file (size %d)", off, size, len(model))
			}
			o.external = append(o.external, externalData{buffer: -1, sg: si, op: oi, data: model[off : off+size], offset: off})
		}
	}
	sort.SliceStable(o.external, func(i, j int) bool { return o.external[i].offset < o.external[j].offset })
	for _, e := range o.external {
		end = max(end, int64(e.offset)+int64(len(e.data)))
	}
	o.trailing = model[trailingStart(model, end):]
	o.hint = len(model) - len(o.trailing)
	for _, e := range o.external {
		o.hint -= len(e.data)
	}
	return o, nil
}

// trailingStart returns where the bytes appended to model start, given
// the end of what the model itself reaches (its flatbuffer and its data
// in the offset/size form): after the zero bytes up to the next multiple
// of 16, which a flatbuffers builder leaves as padding for the alignment
// of what it wrote first (buffer data is 16-byte aligned) and which pack
// writes before the appended bytes. Bytes of a ZIP appended by TFLite
// Metadata's MetadataPopulator (tflite-support,
// tensorflow_lite_support/metadata/python/metadata.py,
// _populate_associated_files) start with "PK" right after the flatbuffer.
func trailingStart(model []byte, end int64) int64 {
	limit := min(alignUp(end, trailingAlign), int64(len(model)))
	for end < limit && model[end] == 0 {
		end++
	}
	return end
}

// trailingAlign is the alignment pack gives the appended bytes.
const trailingAlign = 16

// setMetadata points every metadata entry called name at a buffer holding
// data (see SetMetadata) and reports whether there was one.
func (o *objectModel) setMetadata(name string, data []byte) bool {
	m := o.m
	content := append([]byte{}, data...)
	var entries []*schema.MetadataT
	for _, md := range m.Metadata {
		if md.Name == name {
			entries = append(entries, md)
		}
	}
	if len(entries) == 0 {
		if len(m.Buffers) == 0 {
			// Buffer 0 is the empty sentinel tensors without data use.
			m.Buffers = append(m.Buffers, &schema.BufferT{})
		}
		m.Buffers = append(m.Buffers, &schema.BufferT{Data: content})
		o.hint += len(content)
		m.Metadata = append(m.Metadata, &schema.MetadataT{Name: name, Buffer: uint32(len(m.Buffers) - 1)})
		return false
	}
	// Who else refers to each buffer: tensors, other entries, metadata_buffer.
	others := make([]int, len(m.Buffers))
	for _, sg := range m.Subgraphs {
		for _, t := range sg.Tensors {
			others[t.Buffer]++
		}
	}
	for _, md := range m.Metadata {
		if md.Name != name {
			others[md.Buffer]++
		}
	}
	for _, b := range m.MetadataBuffer {
		if b >= 0 && int(b) < len(others) {
			others[b]++
		}
	}
	target := entries[0].Buffer
	if target == 0 || others[target] > 0 {
		m.Buffers = append(m.Buffers, &schema.BufferT{})
		target = uint32(len(m.Buffers) - 1)
	}
	for _, md := range entries {
		if old := md.Buffer; old != target && old != 0 && others[old] == 0 {
			o.setBuffer(old, nil)
		}
		md.Buffer = target
	}
	o.setBuffer(target, content)
	o.hint += len(content)
	return true
}

// setBuffer makes buffers[i] hold data inline (none when data is nil).
func (o *objectModel) setBuffer(i uint32, data []byte) {
	b := o.m.Buffers[i]
	b.Data, b.Offset, b.Size = data, 0, 0
	for j, e := range o.external {
		if e.buffer == int(i) {
			o.external = append(o.external[:j], o.external[j+1:]...)
			return
		}
	}
}

// pack encodes the model and appends its external data.
func (o *objectModel) pack() (out []byte, err error) {
	defer func() {
		// The builder panics when the flatbuffer outgrows 2 GiB; that is
		// a property of the input, not a bug.
		if r := recover(); r != nil {
			if s, ok := r.(string); ok && strings.Contains(s, "2 gigabytes") {
				out, err = nil, errors.New("tflite: rewrite: the model exceeds the 2 GiB flatbuffer limit")
				return
			}
			panic(r)
		}
	}()
	for _, e := range o.external {
		// A placeholder, not the default 0, so that the field is written
		// and can be patched once the flatbuffer's size is known.
		if e.buffer >= 0 {
			o.m.Buffers[e.buffer].Offset = externalPlaceholder
		} else {
			o.m.Subgraphs[e.sg].Operators[e.op].LargeCustomOptionsOffset = externalPlaceholder
		}
	}
	b := flatbuffers.NewBuilder(min(max(o.hint, 0), maxInline) + 1024)
	b.FinishWithFileIdentifier(packModel(o.m, b, o.absent), []byte(Identifier))
	out = o.appendExternal(b.FinishedBytes())
	if len(o.trailing) > 0 {
		out = append(out, make([]byte, alignUp(int64(len(out)), trailingAlign)-int64(len(out)))...)
		out = append(out, o.trailing...)
	}
	return out, nil
}

// appendExternal returns fb followed by the external data, with their
// offsets patched into fb's tables; fb itself when there is none.
func (o *objectModel) appendExternal(fb []byte) []byte {
	if len(o.external) == 0 {
		return fb
	}
	offsets := make([]uint64, len(o.external))
	size := uint64(len(fb))
	for i, e := range o.external {
		align := uint64(1) << min(bits.TrailingZeros64(e.offset), bits.TrailingZeros64(maxExternalAlign))
		offsets[i] = uint64(alignUp(int64(size), int64(max(align, externalAlign))))
		size = offsets[i] + uint64(len(e.data))
	}
	out := make([]byte, size)
	copy(out, fb)
	root := schema.GetRootAsModel(out, 0)
	var buf schema.Buffer
	var sg schema.SubGraph
	var op schema.Operator
	for i, e := range o.external {
		copy(out[offsets[i]:], e.data)
		if e.buffer >= 0 {
			root.Buffers(&buf, e.buffer)
			mustPatch(buf.MutateOffset(offsets[i]), "buffers[%d].offset", e.buffer)
			continue
		}
		root.Subgraphs(&sg, e.sg)
		sg.Operators(&op, e.op)
		mustPatch(op.MutateLargeCustomOptionsOffset(offsets[i]), "subgraphs[%d].operators[%d].large_custom_options_offset", e.sg, e.op)
	}
	return out
}

func mustPatch(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf("tflite: rewrite: "+format+" has no field to patch", args...))
	}
}
