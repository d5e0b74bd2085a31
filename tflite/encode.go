package tflite

import (
	"fmt"
	"strings"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/tflite/schema"
)

// SchemaVersion is the TFLite schema version models declare in
// graph.Model.Version. Encode writes Version as given; model generators
// should set it to this.
const SchemaVersion = 3

// EncodeOptions controls how Encode lays out a model.
type EncodeOptions struct {
	// ExternalBuffers writes the contents of every non-empty buffer after
	// the flatbuffer, in the offset/size form of models over 2 GiB: the
	// Buffer table's data vector is left out, offset holds the absolute
	// file offset (16-byte aligned, always > 1) and size the length.
	// When false only buffers marked graph.Buffer.External are written
	// that way, and the rest inline, as 16-byte aligned data vectors.
	ExternalBuffers bool
}

// Encode writes m as a TFLite flatbuffer (file identifier TFL3). It is the
// inverse of Load: for any file x that Load accepts, Load(Encode(Load(x)))
// equals Load(x), Buffer.External included (each buffer keeps its form
// unless opts.ExternalBuffers moves all of them out). Only a file with
// close to 2 GiB of inline data can fail, for lack of room in one
// flatbuffer; encode it with ExternalBuffers.
//
// Encode writes only what graph.Model holds: an operator's Options,
// Options2 and CustomOptions as they are (an operator without Options gets
// the table its Window, Called or Resource implies, which Load reads back
// as Options), so a model loaded from a real file comes back with every
// operator option but without the large_custom_options form, sparsity,
// min/max quantization ranges or the bytes of custom quantization, and
// with operator_codes rebuilt: one entry per
// (code, custom name, version) in order of first use, with builtin_code and
// deprecated_builtin_code set as the TFLite converter sets them. Fields
// Load derives are not written: Tensor.Size comes from Type and Shape,
// Op.CodeName from Code.
//
// Values that Load reads back differently, so that Load(Encode(m)) differs
// from m:
//   - a Quantization with no Scale, ZeroPoint or HasCustomQuant is read back
//     as nil, and an empty non-nil ShapeSignature as nil;
//   - an empty Buffer is never External;
//   - a VAR_HANDLE with a nil Resource is read back with an empty one,
//     and an empty SharedName is left out (a Container is written when
//     HasContainer says so, even an empty one);
//   - the nil slices that Load returns as empty ones (Shape, the tensor
//     lists of subgraphs and operators, quantization parameters).
//
// Encode checks what Load checks (indices in range, known element types,
// shapes, the call graph), so that its output loads, and returns an error
// rather than writing a model Load would reject.
func Encode(m *graph.Model, opts EncodeOptions) (out []byte, err error) {
	if err := validate(m); err != nil {
		return nil, err
	}
	e := &encoder{m: m, opts: opts, codeIndex: map[opcodeKey]uint32{}}
	inline := e.layout()
	if inline >= maxInline {
		return nil, fmt.Errorf("tflite: encode: %d bytes of inline buffer data exceed the 2 GiB flatbuffer limit; use EncodeOptions.ExternalBuffers", inline)
	}
	defer func() {
		// The flatbuffers builder panics when the tables themselves
		// outgrow 2 GiB; that is a property of the input, not a bug.
		if r := recover(); r != nil {
			if s, ok := r.(string); ok && strings.Contains(s, "2 gigabytes") {
				out, err = nil, fmt.Errorf("tflite: encode: model tables exceed the 2 GiB flatbuffer limit")
				return
			}
			panic(r)
		}
	}()
	e.b = flatbuffers.NewBuilder(int(inline) + e.sizeHint())
	return e.encode(), nil
}

// maxInline bounds the inline buffer data of one flatbuffer, whose
// 32-bit offsets reach 2 GiB; the tables need some room too.
const maxInline = 1<<31 - 1<<20

// externalAlign is the alignment of buffer data, inline (the schema's
// force_align: 16) or after the flatbuffer.
const externalAlign = 16

// externalPlaceholder is written as the offset of an external buffer and
// replaced, once the flatbuffer's size is known, by the real offset. It is
// not the default 0, so the field is present and can be patched in place.
const externalPlaceholder = 1

type opcodeKey struct {
	code    graph.Opcode
	custom  string
	version int32
}

type encoder struct {
	m         *graph.Model
	opts      EncodeOptions
	b         *flatbuffers.Builder
	codes     []opcodeKey
	codeIndex map[opcodeKey]uint32
	external  []bool // external[i]: buffer i's data goes after the flatbuffer
}

// layout assigns operator code indices in order of first use, decides
// which buffers are external, and returns the bytes of inline data.
func (e *encoder) layout() int64 {
	for _, sg := range e.m.Subgraphs {
		for i := range sg.Ops {
			k := opKey(&sg.Ops[i])
			if _, ok := e.codeIndex[k]; !ok {
				e.codeIndex[k] = uint32(len(e.codes))
				e.codes = append(e.codes, k)
			}
		}
	}
	var inline int64
	e.external = make([]bool, len(e.m.Buffers))
	for i, b := range e.m.Buffers {
		if len(b.Data) == 0 {
			continue
		}
		if e.opts.ExternalBuffers || b.External {
			e.external[i] = true
			continue
		}
		inline += int64(len(b.Data)) + externalAlign
	}
	return inline
}

// sizeHint estimates the bytes of everything but inline buffer data, so
// that the builder rarely grows.
func (e *encoder) sizeHint() int {
	n := 1024 + 32*len(e.m.Buffers) + 64*len(e.codes)
	for _, sg := range e.m.Subgraphs {
		n += 64 * (len(sg.Tensors) + len(sg.Ops))
		for _, t := range sg.Tensors {
			n += 4*(len(t.Shape)+len(t.ShapeSignature)) + len(t.Name)
		}
		for _, op := range sg.Ops {
			n += 4 * (len(op.Inputs) + len(op.Outputs) + len(op.Intermediates))
		}
	}
	return n
}

func opKey(op *graph.Op) opcodeKey {
	return opcodeKey{code: op.Code, custom: op.CustomName, version: op.Version}
}

func (e *encoder) encode() []byte {
	b := e.b
	// Buffers first: the builder writes back to front, so their data
	// ends up at the end of the flatbuffer, as the TFLite converter has it.
	buffers := e.tables(len(e.m.Buffers), e.buffer)
	codes := e.tables(len(e.codes), e.opcode)
	subgraphs := e.tables(len(e.m.Subgraphs), e.subgraph)
	var metadata, signatures, desc flatbuffers.UOffsetT
	if len(e.m.Metadata) > 0 {
		metadata = e.tables(len(e.m.Metadata), e.metadata)
	}
	if len(e.m.Signatures) > 0 {
		signatures = e.tables(len(e.m.Signatures), e.signature)
	}
	desc = e.str(e.m.Description)
	schema.ModelStart(b)
	schema.ModelAddVersion(b, e.m.Version)
	schema.ModelAddOperatorCodes(b, codes)
	schema.ModelAddSubgraphs(b, subgraphs)
	if desc != 0 {
		schema.ModelAddDescription(b, desc)
	}
	schema.ModelAddBuffers(b, buffers)
	if metadata != 0 {
		schema.ModelAddMetadata(b, metadata)
	}
	if signatures != 0 {
		schema.ModelAddSignatureDefs(b, signatures)
	}
	b.FinishWithFileIdentifier(schema.ModelEnd(b), []byte(Identifier))
	return e.appendExternal(b.FinishedBytes())
}

// appendExternal returns fb followed by the data of the external buffers,
// each 16-byte aligned, with their offsets patched into fb's Buffer
// tables. Without external buffers it returns fb itself.
func (e *encoder) appendExternal(fb []byte) []byte {
	size := int64(len(fb))
	offsets := make([]int64, len(e.m.Buffers))
	found := false
	for i, ext := range e.external {
		if ext {
			found = true
			offsets[i] = alignUp(size, externalAlign)
			size = offsets[i] + int64(len(e.m.Buffers[i].Data))
		}
	}
	if !found {
		return fb
	}
	out := make([]byte, size)
	copy(out, fb)
	root := schema.GetRootAsModel(out, 0)
	var buf schema.Buffer
	for i, ext := range e.external {
		if !ext {
			continue
		}
		root.Buffers(&buf, i)
		if !buf.MutateOffset(uint64(offsets[i])) {
			panic(fmt.Sprintf("tflite: encode: buffers[%d] has no offset field to patch", i))
		}
		copy(out[offsets[i]:], e.m.Buffers[i].Data)
	}
	return out
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// tables writes n tables with write and returns a vector of them.
func (e *encoder) tables(n int, write func(int) flatbuffers.UOffsetT) flatbuffers.UOffsetT {
	offs := make([]flatbuffers.UOffsetT, n)
	for i := range offs {
		offs[i] = write(i)
	}
	return e.b.CreateVectorOfTables(offs)
}

// str writes s and returns its offset, or 0 (absent) when s is empty.
func (e *encoder) str(s string) flatbuffers.UOffsetT {
	if s == "" {
		return 0
	}
	return e.b.CreateString(s)
}

func (e *encoder) int32s(v []int32) flatbuffers.UOffsetT {
	e.b.StartVector(4, len(v), 4)
	for i := len(v) - 1; i >= 0; i-- {
		e.b.PrependInt32(v[i])
	}
	return e.b.EndVector(len(v))
}

func (e *encoder) ids(v []graph.TensorID) flatbuffers.UOffsetT {
	e.b.StartVector(4, len(v), 4)
	for i := len(v) - 1; i >= 0; i-- {
		e.b.PrependInt32(int32(v[i]))
	}
	return e.b.EndVector(len(v))
}

func (e *encoder) buffer(i int) flatbuffers.UOffsetT {
	b := e.b
	d := e.m.Buffers[i].Data
	var data flatbuffers.UOffsetT
	if len(d) > 0 && !e.external[i] {
		// Align the contents, not just the length word, to 16 bytes
		// from the end; Finish pads the whole file to a multiple of 16,
		// so they are aligned from the start too.
		b.Prep(externalAlign, len(d))
		data = b.CreateByteVector(d)
	}
	schema.BufferStart(b)
	if data != 0 {
		schema.BufferAddData(b, data)
	}
	if e.external[i] {
		schema.BufferAddOffset(b, externalPlaceholder)
		schema.BufferAddSize(b, uint64(len(d)))
	}
	return schema.BufferEnd(b)
}

func (e *encoder) opcode(i int) flatbuffers.UOffsetT {
	b := e.b
	k := e.codes[i]
	custom := e.str(k.custom)
	// Codes above 127 do not fit the old int8 field, which then holds
	// PLACEHOLDER_FOR_GREATER_OP_CODES, as the TFLite converter writes it.
	dep := min(k.code, graph.Opcode(schema.BuiltinOperatorPLACEHOLDER_FOR_GREATER_OP_CODES))
	schema.OperatorCodeStart(b)
	schema.OperatorCodeAddDeprecatedBuiltinCode(b, int8(dep))
	if custom != 0 {
		schema.OperatorCodeAddCustomCode(b, custom)
	}
	schema.OperatorCodeAddVersion(b, k.version)
	schema.OperatorCodeAddBuiltinCode(b, schema.BuiltinOperator(k.code))
	return schema.OperatorCodeEnd(b)
}

func (e *encoder) subgraph(si int) flatbuffers.UOffsetT {
	b := e.b
	sg := &e.m.Subgraphs[si]
	tensors := e.tables(len(sg.Tensors), func(i int) flatbuffers.UOffsetT { return e.tensor(&sg.Tensors[i]) })
	inputs := e.ids(sg.Inputs)
	outputs := e.ids(sg.Outputs)
	ops := e.tables(len(sg.Ops), func(i int) flatbuffers.UOffsetT { return e.operator(&sg.Ops[i]) })
	name := e.str(sg.Name)
	schema.SubGraphStart(b)
	schema.SubGraphAddTensors(b, tensors)
	schema.SubGraphAddInputs(b, inputs)
	schema.SubGraphAddOutputs(b, outputs)
	schema.SubGraphAddOperators(b, ops)
	if name != 0 {
		schema.SubGraphAddName(b, name)
	}
	return schema.SubGraphEnd(b)
}

func (e *encoder) tensor(t *graph.Tensor) flatbuffers.UOffsetT {
	b := e.b
	shape := e.int32s(t.Shape)
	var sig flatbuffers.UOffsetT
	if len(t.ShapeSignature) > 0 {
		sig = e.int32s(t.ShapeSignature)
	}
	name := e.str(t.Name)
	var quant flatbuffers.UOffsetT
	if t.Quantization != nil {
		quant = e.quantization(t.Quantization)
	}
	schema.TensorStart(b)
	schema.TensorAddShape(b, shape)
	schema.TensorAddType(b, schema.TensorType(t.Type))
	schema.TensorAddBuffer(b, uint32(t.Buffer))
	if name != 0 {
		schema.TensorAddName(b, name)
	}
	if quant != 0 {
		schema.TensorAddQuantization(b, quant)
	}
	schema.TensorAddIsVariable(b, t.IsVariable)
	if sig != 0 {
		schema.TensorAddShapeSignature(b, sig)
	}
	return schema.TensorEnd(b)
}

func (e *encoder) quantization(q *graph.Quantization) flatbuffers.UOffsetT {
	b := e.b
	var scale, zero, details flatbuffers.UOffsetT
	if len(q.Scale) > 0 {
		b.StartVector(4, len(q.Scale), 4)
		for i := len(q.Scale) - 1; i >= 0; i-- {
			b.PrependFloat32(q.Scale[i])
		}
		scale = b.EndVector(len(q.Scale))
	}
	if len(q.ZeroPoint) > 0 {
		b.StartVector(8, len(q.ZeroPoint), 8)
		for i := len(q.ZeroPoint) - 1; i >= 0; i-- {
			b.PrependInt64(q.ZeroPoint[i])
		}
		zero = b.EndVector(len(q.ZeroPoint))
	}
	if q.HasCustomQuant {
		// The scheme's bytes are not in the IR: an empty one marks it.
		schema.CustomQuantizationStart(b)
		details = schema.CustomQuantizationEnd(b)
	}
	schema.QuantizationParametersStart(b)
	if scale != 0 {
		schema.QuantizationParametersAddScale(b, scale)
	}
	if zero != 0 {
		schema.QuantizationParametersAddZeroPoint(b, zero)
	}
	if details != 0 {
		schema.QuantizationParametersAddDetailsType(b, schema.QuantizationDetailsCustomQuantization)
		schema.QuantizationParametersAddDetails(b, details)
	}
	schema.QuantizationParametersAddQuantizedDimension(b, q.QuantizedDim)
	return schema.QuantizationParametersEnd(b)
}

func (e *encoder) operator(op *graph.Op) flatbuffers.UOffsetT {
	b := e.b
	inputs := e.ids(op.Inputs)
	outputs := e.ids(op.Outputs)
	var inter flatbuffers.UOffsetT
	if len(op.Intermediates) > 0 {
		inter = e.ids(op.Intermediates)
	}
	// Options and Options2, when set, are written with Window, Called and
	// Resource winning over their fields of the same meaning
	// (graph.Op.Resolved); the one not set comes from those alone.
	var optType schema.BuiltinOptions
	var opts, opts2 flatbuffers.UOffsetT
	opt2Type := schema.BuiltinOptions2StableHLOCompositeOptions
	if second := op.Code == graph.StablehloComposite; (second && op.Options2 == nil) || (!second && op.Options == nil) {
		optType, opts, opts2 = e.options(op)
	}
	if o := op.Options; o != nil {
		if op.Code != graph.StablehloComposite {
			o = op.Resolved()
		}
		var t byte
		t, opts = e.optionsTable("BuiltinOptions", o)
		optType = schema.BuiltinOptions(t)
	}
	if o := op.Options2; o != nil {
		if op.Code == graph.StablehloComposite {
			o = op.Resolved()
		}
		var t byte
		t, opts2 = e.optionsTable("BuiltinOptions2", o)
		opt2Type = schema.BuiltinOptions2(t)
	}
	var custom flatbuffers.UOffsetT
	if op.CustomOptions != nil {
		custom = b.CreateByteVector(op.CustomOptions)
	}
	schema.OperatorStart(b)
	schema.OperatorAddOpcodeIndex(b, e.codeIndex[opKey(op)])
	schema.OperatorAddInputs(b, inputs)
	schema.OperatorAddOutputs(b, outputs)
	if opts != 0 {
		schema.OperatorAddBuiltinOptionsType(b, optType)
		schema.OperatorAddBuiltinOptions(b, opts)
	}
	if custom != 0 {
		schema.OperatorAddCustomOptions(b, custom)
	}
	if inter != 0 {
		schema.OperatorAddIntermediates(b, inter)
	}
	if opts2 != 0 {
		schema.OperatorAddBuiltinOptions2Type(b, opt2Type)
		schema.OperatorAddBuiltinOptions2(b, opts2)
	}
	return schema.OperatorEnd(b)
}

// options writes the options that carry Op.Called, Op.Resource and
// Op.Window: a builtin_options table and its type, or a builtin_options_2
// table.
func (e *encoder) options(op *graph.Op) (schema.BuiltinOptions, flatbuffers.UOffsetT, flatbuffers.UOffsetT) {
	b := e.b
	if w := op.Window; w != nil {
		switch op.Code {
		case graph.Conv2D:
			schema.Conv2DOptionsStart(b)
			schema.Conv2DOptionsAddPadding(b, schema.Padding(w.Padding))
			schema.Conv2DOptionsAddStrideW(b, w.StrideW)
			schema.Conv2DOptionsAddStrideH(b, w.StrideH)
			schema.Conv2DOptionsAddDilationWFactor(b, w.DilationW)
			schema.Conv2DOptionsAddDilationHFactor(b, w.DilationH)
			return schema.BuiltinOptionsConv2DOptions, schema.Conv2DOptionsEnd(b), 0
		case graph.DepthwiseConv2D:
			schema.DepthwiseConv2DOptionsStart(b)
			schema.DepthwiseConv2DOptionsAddPadding(b, schema.Padding(w.Padding))
			schema.DepthwiseConv2DOptionsAddStrideW(b, w.StrideW)
			schema.DepthwiseConv2DOptionsAddStrideH(b, w.StrideH)
			schema.DepthwiseConv2DOptionsAddDepthMultiplier(b, w.DepthMultiplier)
			schema.DepthwiseConv2DOptionsAddDilationWFactor(b, w.DilationW)
			schema.DepthwiseConv2DOptionsAddDilationHFactor(b, w.DilationH)
			return schema.BuiltinOptionsDepthwiseConv2DOptions, schema.DepthwiseConv2DOptionsEnd(b), 0
		case graph.TransposeConv:
			schema.TransposeConvOptionsStart(b)
			schema.TransposeConvOptionsAddPadding(b, schema.Padding(w.Padding))
			schema.TransposeConvOptionsAddStrideW(b, w.StrideW)
			schema.TransposeConvOptionsAddStrideH(b, w.StrideH)
			return schema.BuiltinOptionsTransposeConvOptions, schema.TransposeConvOptionsEnd(b), 0
		case graph.AveragePool2D, graph.MaxPool2D:
			schema.Pool2DOptionsStart(b)
			schema.Pool2DOptionsAddPadding(b, schema.Padding(w.Padding))
			schema.Pool2DOptionsAddStrideW(b, w.StrideW)
			schema.Pool2DOptionsAddStrideH(b, w.StrideH)
			schema.Pool2DOptionsAddFilterWidth(b, w.FilterW)
			schema.Pool2DOptionsAddFilterHeight(b, w.FilterH)
			return schema.BuiltinOptionsPool2DOptions, schema.Pool2DOptionsEnd(b), 0
		}
	}
	switch op.Code {
	case graph.While:
		schema.WhileOptionsStart(b)
		schema.WhileOptionsAddCondSubgraphIndex(b, int32(op.Called[0]))
		schema.WhileOptionsAddBodySubgraphIndex(b, int32(op.Called[1]))
		return schema.BuiltinOptionsWhileOptions, schema.WhileOptionsEnd(b), 0
	case graph.If:
		schema.IfOptionsStart(b)
		schema.IfOptionsAddThenSubgraphIndex(b, int32(op.Called[0]))
		schema.IfOptionsAddElseSubgraphIndex(b, int32(op.Called[1]))
		return schema.BuiltinOptionsIfOptions, schema.IfOptionsEnd(b), 0
	case graph.CallOnce:
		schema.CallOnceOptionsStart(b)
		schema.CallOnceOptionsAddInitSubgraphIndex(b, int32(op.Called[0]))
		return schema.BuiltinOptionsCallOnceOptions, schema.CallOnceOptionsEnd(b), 0
	case graph.StablehloComposite:
		schema.StableHLOCompositeOptionsStart(b)
		schema.StableHLOCompositeOptionsAddDecompositionSubgraphIndex(b, int32(op.Called[0]))
		return 0, 0, schema.StableHLOCompositeOptionsEnd(b)
	case graph.VarHandle:
		var r graph.ResourceName
		if op.Resource != nil {
			r = *op.Resource
		}
		var container flatbuffers.UOffsetT
		if r.HasContainer {
			container = e.b.CreateString(r.Container) // "" too: TFLM reads it as a name
		}
		shared := e.str(r.SharedName)
		schema.VarHandleOptionsStart(b)
		if container != 0 {
			schema.VarHandleOptionsAddContainer(b, container)
		}
		if shared != 0 {
			schema.VarHandleOptionsAddSharedName(b, shared)
		}
		return schema.BuiltinOptionsVarHandleOptions, schema.VarHandleOptionsEnd(b), 0
	}
	return 0, 0, 0
}

func (e *encoder) metadata(i int) flatbuffers.UOffsetT {
	md := e.m.Metadata[i]
	name := e.str(md.Name)
	schema.MetadataStart(e.b)
	if name != 0 {
		schema.MetadataAddName(e.b, name)
	}
	schema.MetadataAddBuffer(e.b, uint32(md.Buffer))
	return schema.MetadataEnd(e.b)
}

func (e *encoder) signature(i int) flatbuffers.UOffsetT {
	b := e.b
	sig := &e.m.Signatures[i]
	inputs := e.tables(len(sig.Inputs), func(j int) flatbuffers.UOffsetT { return e.tensorMap(sig.Inputs[j]) })
	outputs := e.tables(len(sig.Outputs), func(j int) flatbuffers.UOffsetT { return e.tensorMap(sig.Outputs[j]) })
	key := e.str(sig.Key)
	schema.SignatureDefStart(b)
	schema.SignatureDefAddInputs(b, inputs)
	schema.SignatureDefAddOutputs(b, outputs)
	if key != 0 {
		schema.SignatureDefAddSignatureKey(b, key)
	}
	schema.SignatureDefAddSubgraphIndex(b, uint32(sig.Subgraph))
	return schema.SignatureDefEnd(b)
}

func (e *encoder) tensorMap(st graph.SignatureTensor) flatbuffers.UOffsetT {
	name := e.str(st.Name)
	schema.TensorMapStart(e.b)
	if name != 0 {
		schema.TensorMapAddName(e.b, name)
	}
	schema.TensorMapAddTensorIndex(e.b, uint32(st.Tensor))
	return schema.TensorMapEnd(e.b)
}
