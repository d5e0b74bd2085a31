// Package tflite reads TFLite flatbuffer models into heliac's graph IR and,
// for tests and tools, writes them back.
//
// Input: the bytes of a .tflite file. Output: a validated *graph.Model.
// Encode (encode.go) is the inverse, writing a *graph.Model as a .tflite
// file that Load reads back unchanged. SetMetadata and Repack (rewrite.go)
// rewrite a .tflite file itself, through the object API of the bindings,
// keeping every table and field of the schema: SetMetadata adds or replaces
// one metadata entry (OfflineMemoryAllocation for TFLM), Repack changes
// nothing.
// It is the only package that imports the flatc bindings in tflite/schema,
// and it hides the schema's quirks (builtin_code versus
// deprecated_builtin_code, the offset/size buffer form) from the rest of
// heliac. It must not import liveness, plan, emit or verify.
//
// The flatbuffers runtime panics on corrupt input, so every offset, length
// and index is checked (see check.go) before a generated accessor reads it,
// and every other table of the schema is checked too (walk.go), so that
// the object API of the bindings can read the whole model. The model must
// also make sense: a constant's buffer holds at least the bytes its type
// and shape need (shortData), so no kernel reads past it.
// A malformed file yields an error naming the field path and byte offset,
// never a panic.
package tflite

import (
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/tflite/schema"
)

// Identifier is the flatbuffer file identifier of TFLite models.
const Identifier = "TFL3"

// Load parses and validates a TFLite model. The returned model's constant
// buffers alias data, which must not be modified afterwards.
func Load(data []byte) (m *graph.Model, err error) {
	defer func() {
		// The checks in this package are meant to make this unreachable;
		// the recover keeps a missed check from crashing a user's build.
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("tflite: internal error reading model (please report): %v", r)
		}
	}()
	return load(data)
}

// load is Load without the recover, so that fuzzing finds missed checks.
func load(data []byte) (*graph.Model, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("tflite: file is %d bytes, too short for a flatbuffer", len(data))
	}
	if id := string(data[4:8]); id != Identifier {
		return nil, fmt.Errorf("tflite: not a TFLite model: file identifier is %q, want %q", id, Identifier)
	}
	l := &loader{c: newChecker(data), data: data}
	root := int64(flatbuffers.GetUOffsetT(data))
	if err := l.c.table(root, rootPath, modelFields); err != nil {
		return nil, err
	}
	l.fb = schema.GetRootAsModel(data, 0)
	m, err := l.model()
	if err != nil {
		return nil, err
	}
	// The fields heliac does not read (options of other operators,
	// sparsity, custom quantization, ...) must be sound too: tools that
	// rewrite the model read them all (walk.go).
	if err := walkModel(data, false); err != nil {
		return nil, err
	}
	// Checked, every operator's options can be read generically.
	l.allOptions()
	return m, nil
}

type loader struct {
	c    checker
	data []byte
	fb   *schema.Model
	m    *graph.Model
	ops  []opcode
}

type opcode struct {
	code    graph.Opcode
	name    string
	custom  string
	version int32
}

func (l *loader) model() (*graph.Model, error) {
	l.m = &graph.Model{Version: l.fb.Version(), Description: string(l.fb.Description())}
	if err := l.buffers(); err != nil {
		return nil, err
	}
	if err := l.opcodes(); err != nil {
		return nil, err
	}
	n := l.fb.SubgraphsLength()
	if n == 0 {
		return nil, corrupt("subgraphs", -1, "model has no subgraphs")
	}
	l.m.Subgraphs = make([]graph.Subgraph, n)
	for i := 0; i < n; i++ {
		var sg schema.SubGraph
		l.fb.Subgraphs(&sg, i)
		if err := l.subgraph(i, &sg); err != nil {
			return nil, err
		}
	}
	if err := l.metadata(); err != nil {
		return nil, err
	}
	if err := l.signatures(); err != nil {
		return nil, err
	}
	if err := checkCalls(l.m); err != nil {
		return nil, err
	}
	for si := range l.m.Subgraphs {
		if err := l.checkOutputs(fmt.Sprintf("subgraphs[%d]", si), &l.m.Subgraphs[si]); err != nil {
			return nil, err
		}
	}
	return l.m, nil
}

func (l *loader) buffers() error {
	n := l.fb.BuffersLength()
	l.m.Buffers = make([]graph.Buffer, n)
	for i := 0; i < n; i++ {
		path := fmt.Sprintf("buffers[%d]", i)
		var b schema.Buffer
		l.fb.Buffers(&b, i)
		if err := l.c.table(int64(b.Table().Pos), path, bufferFields); err != nil {
			return err
		}
		if off := b.Offset(); off > 1 {
			size := b.Size()
			if off > uint64(len(l.data)) || size > uint64(len(l.data))-off {
				return corrupt(path, -1, "data at offset %d size %d lies outside the file (size %d)", off, size, len(l.data))
			}
			if size > 0 {
				l.m.Buffers[i] = graph.Buffer{Data: l.data[off : off+size : off+size], External: true}
			}
			continue
		}
		if d := b.DataBytes(); len(d) > 0 {
			l.m.Buffers[i] = graph.Buffer{Data: d[:len(d):len(d)]}
		}
	}
	return nil
}

func (l *loader) opcodes() error {
	n := l.fb.OperatorCodesLength()
	l.ops = make([]opcode, n)
	for i := 0; i < n; i++ {
		path := fmt.Sprintf("operator_codes[%d]", i)
		var oc schema.OperatorCode
		l.fb.OperatorCodes(&oc, i)
		if err := l.c.table(int64(oc.Table().Pos), path, operatorCodeFields); err != nil {
			return err
		}
		// As TFLM's GetBuiltinCode: the larger of the two fields wins, since
		// old files set only the byte and new ones set both.
		code := schema.BuiltinOperator(oc.DeprecatedBuiltinCode())
		if oc.BuiltinCode() > code {
			code = oc.BuiltinCode()
		}
		if code < 0 {
			return corrupt(path+".builtin_code", -1, "negative builtin operator code %d", code)
		}
		// A code newer than this schema loads with an empty name (shown
		// as BUILTIN_<code>): planning needs no operator semantics.
		name := schema.EnumNamesBuiltinOperator[code]
		l.ops[i] = opcode{code: graph.Opcode(code), name: name, custom: string(oc.CustomCode()), version: oc.Version()}
	}
	return nil
}

func (l *loader) subgraph(si int, sg *schema.SubGraph) error {
	path := fmt.Sprintf("subgraphs[%d]", si)
	if err := l.c.table(int64(sg.Table().Pos), path, subgraphFields); err != nil {
		return err
	}
	out := &l.m.Subgraphs[si]
	out.Name = string(sg.Name())
	nt := sg.TensorsLength()
	out.Tensors = make([]graph.Tensor, nt)
	for i := 0; i < nt; i++ {
		var t schema.Tensor
		sg.Tensors(&t, i)
		if err := l.tensor(fmt.Sprintf("%s.tensors[%d]", path, i), &t, &out.Tensors[i]); err != nil {
			return err
		}
	}
	var err error
	if out.Inputs, err = tensorList(path+".inputs", sg.InputsLength(), sg.Inputs, nt, false); err != nil {
		return err
	}
	if out.Outputs, err = tensorList(path+".outputs", sg.OutputsLength(), sg.Outputs, nt, false); err != nil {
		return err
	}
	no := sg.OperatorsLength()
	out.Ops = make([]graph.Op, no)
	for i := 0; i < no; i++ {
		var op schema.Operator
		sg.Operators(&op, i)
		if err := l.operator(fmt.Sprintf("%s.operators[%d]", path, i), &op, nt, &out.Ops[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkOutputs rejects an operator output that has constant data: the
// planner would place it with the constants, in read-only memory, where
// the kernel cannot write it. A variable tensor's data is its initial
// value, and its bytes are writable state, so it may be written.
func (l *loader) checkOutputs(path string, sg *graph.Subgraph) error {
	for oi := range sg.Ops {
		op := &sg.Ops[oi]
		for k, id := range op.Outputs {
			t := &sg.Tensors[id]
			if t.IsVariable || !l.m.HasData(t) {
				continue
			}
			return corrupt(fmt.Sprintf("%s.operators[%d].outputs[%d]", path, oi, k), -1,
				"operator %d (%s) writes tensor %d %q, which has constant data (buffers[%d], %d bytes): an output cannot be read-only",
				oi, op.Name(), id, t.Name, t.Buffer, len(l.m.Buffers[t.Buffer].Data))
		}
	}
	return nil
}

func (l *loader) tensor(path string, t *schema.Tensor, out *graph.Tensor) error {
	if err := l.c.table(int64(t.Table().Pos), path, tensorFields); err != nil {
		return err
	}
	out.Name = string(t.Name())
	out.Type = graph.ElementType(t.Type())
	if !out.Type.Valid() {
		return corrupt(path+".type", -1, "unknown tensor type %d", int(t.Type()))
	}
	out.Shape = make([]int32, t.ShapeLength())
	for i := range out.Shape {
		out.Shape[i] = t.Shape(i)
	}
	if n := t.ShapeSignatureLength(); n > 0 {
		out.ShapeSignature = make([]int32, n)
		for i := range out.ShapeSignature {
			out.ShapeSignature[i] = t.ShapeSignature(i)
		}
	}
	buf := t.Buffer()
	if int64(buf) >= int64(len(l.m.Buffers)) {
		return corrupt(path+".buffer", -1, "index %d out of range [0, %d)", buf, len(l.m.Buffers))
	}
	out.Buffer = graph.BufferIndex(buf)
	out.IsVariable = t.IsVariable()
	size, err := graph.ByteSize(out.Type, out.Shape)
	if err != nil {
		return corrupt(path+".shape", -1, "%v", err)
	}
	if out.Type.Bits() == 0 {
		size = int64(len(l.m.Buffers[buf].Data)) // STRING and the like: the data says
	}
	out.Size = size
	// A sparse tensor's buffer holds only its non-zero values.
	if msg := shortData(out, l.m.Buffers[buf].Data); msg != "" && t.Sparsity(nil) == nil {
		return corrupt(path, -1, "%s", msg)
	}
	if q := t.Quantization(nil); q != nil {
		if err := l.c.table(int64(q.Table().Pos), path+".quantization", quantizationFields); err != nil {
			return err
		}
		if q.ScaleLength() > 0 || q.ZeroPointLength() > 0 || q.DetailsType() != 0 {
			out.Quantization = &graph.Quantization{
				Scale:          make([]float32, q.ScaleLength()),
				ZeroPoint:      make([]int64, q.ZeroPointLength()),
				QuantizedDim:   q.QuantizedDimension(),
				HasCustomQuant: q.DetailsType() != 0,
			}
			for i := range out.Quantization.Scale {
				out.Quantization.Scale[i] = q.Scale(i)
			}
			for i := range out.Quantization.ZeroPoint {
				out.Quantization.ZeroPoint[i] = q.ZeroPoint(i)
			}
		}
	}
	return nil
}

func (l *loader) operator(path string, op *schema.Operator, nt int, out *graph.Op) error {
	if err := l.c.table(int64(op.Table().Pos), path, operatorFields); err != nil {
		return err
	}
	idx := op.OpcodeIndex()
	if int64(idx) >= int64(len(l.ops)) {
		return corrupt(path+".opcode_index", -1, "index %d out of range [0, %d)", idx, len(l.ops))
	}
	oc := l.ops[idx]
	out.Code, out.CodeName, out.CustomName, out.Version = oc.code, oc.name, oc.custom, oc.version
	var err error
	if out.Inputs, err = tensorList(path+".inputs", op.InputsLength(), op.Inputs, nt, true); err != nil {
		return err
	}
	if out.Outputs, err = tensorList(path+".outputs", op.OutputsLength(), op.Outputs, nt, false); err != nil {
		return err
	}
	if out.Intermediates, err = tensorList(path+".intermediates", op.IntermediatesLength(), op.Intermediates, nt, false); err != nil {
		return err
	}
	return l.options(path, op, out)
}

// options reads the builtin options heliac needs: the subgraphs that
// control-flow operators call, the name of a resource variable and a
// sliding window's geometry.
func (l *loader) options(path string, op *schema.Operator, out *graph.Op) error {
	var want schema.BuiltinOptions
	switch out.Code {
	case graph.Conv2D, graph.DepthwiseConv2D, graph.AveragePool2D, graph.MaxPool2D, graph.TransposeConv:
		return l.window(path, op, out)
	case graph.While:
		want = schema.BuiltinOptionsWhileOptions
	case graph.If:
		want = schema.BuiltinOptionsIfOptions
	case graph.CallOnce:
		want = schema.BuiltinOptionsCallOnceOptions
	case graph.VarHandle:
		want = schema.BuiltinOptionsVarHandleOptions
	case graph.StablehloComposite:
		return l.composite(path, op, out)
	default:
		return nil
	}
	var tab flatbuffers.Table
	if op.BuiltinOptionsType() != want || !op.BuiltinOptions(&tab) {
		if out.Code == graph.VarHandle {
			out.Resource = &graph.ResourceName{}
			return nil
		}
		return corrupt(path+".builtin_options", -1, "%s needs %s", out.CodeName, schema.EnumNamesBuiltinOptions[want])
	}
	opath := path + ".builtin_options"
	if out.Code == graph.VarHandle {
		if err := l.c.table(int64(tab.Pos), opath, varHandleFields); err != nil {
			return err
		}
		var v schema.VarHandleOptions
		v.Init(tab.Bytes, tab.Pos)
		c := v.Container() // nil when absent, empty when ""
		out.Resource = &graph.ResourceName{Container: string(c), SharedName: string(v.SharedName()), HasContainer: c != nil}
		return nil
	}
	if err := l.c.table(int64(tab.Pos), opath, twoIndexFields); err != nil {
		return err
	}
	switch out.Code {
	case graph.While:
		var w schema.WhileOptions
		w.Init(tab.Bytes, tab.Pos)
		out.Called = []graph.SubgraphIndex{graph.SubgraphIndex(w.CondSubgraphIndex()), graph.SubgraphIndex(w.BodySubgraphIndex())}
	case graph.If:
		var w schema.IfOptions
		w.Init(tab.Bytes, tab.Pos)
		out.Called = []graph.SubgraphIndex{graph.SubgraphIndex(w.ThenSubgraphIndex()), graph.SubgraphIndex(w.ElseSubgraphIndex())}
	case graph.CallOnce:
		var w schema.CallOnceOptions
		w.Init(tab.Bytes, tab.Pos)
		out.Called = []graph.SubgraphIndex{graph.SubgraphIndex(w.InitSubgraphIndex())}
	}
	return l.checkCalled(opath, out)
}

// window reads a sliding-window operator's options into out.Window. A
// model without them (TFLite would refuse it) leaves Window nil: heliac
// needs them only for in-place contracts, which then do not apply.
func (l *loader) window(path string, op *schema.Operator, out *graph.Op) error {
	var want schema.BuiltinOptions
	var fields []fieldSpec
	switch out.Code {
	case graph.Conv2D:
		want, fields = schema.BuiltinOptionsConv2DOptions, conv2DFields
	case graph.DepthwiseConv2D:
		want, fields = schema.BuiltinOptionsDepthwiseConv2DOptions, depthwiseFields
	case graph.TransposeConv:
		want, fields = schema.BuiltinOptionsTransposeConvOptions, transposeConvFields
	default:
		want, fields = schema.BuiltinOptionsPool2DOptions, pool2DFields
	}
	var tab flatbuffers.Table
	if op.BuiltinOptionsType() != want || !op.BuiltinOptions(&tab) {
		return nil
	}
	if err := l.c.table(int64(tab.Pos), path+".builtin_options", fields); err != nil {
		return err
	}
	switch out.Code {
	case graph.Conv2D:
		var o schema.Conv2DOptions
		o.Init(tab.Bytes, tab.Pos)
		out.Window = &graph.Window{Padding: graph.Padding(o.Padding()), StrideW: o.StrideW(), StrideH: o.StrideH(),
			DilationW: o.DilationWFactor(), DilationH: o.DilationHFactor()}
	case graph.DepthwiseConv2D:
		var o schema.DepthwiseConv2DOptions
		o.Init(tab.Bytes, tab.Pos)
		out.Window = &graph.Window{Padding: graph.Padding(o.Padding()), StrideW: o.StrideW(), StrideH: o.StrideH(),
			DilationW: o.DilationWFactor(), DilationH: o.DilationHFactor(), DepthMultiplier: o.DepthMultiplier()}
	case graph.TransposeConv:
		var o schema.TransposeConvOptions
		o.Init(tab.Bytes, tab.Pos)
		out.Window = &graph.Window{Padding: graph.Padding(o.Padding()), StrideW: o.StrideW(), StrideH: o.StrideH(),
			DilationW: 1, DilationH: 1}
	default:
		var o schema.Pool2DOptions
		o.Init(tab.Bytes, tab.Pos)
		out.Window = &graph.Window{Padding: graph.Padding(o.Padding()), StrideW: o.StrideW(), StrideH: o.StrideH(),
			DilationW: 1, DilationH: 1, FilterW: o.FilterWidth(), FilterH: o.FilterHeight()}
	}
	return nil
}

func (l *loader) composite(path string, op *schema.Operator, out *graph.Op) error {
	var tab flatbuffers.Table
	opath := path + ".builtin_options_2"
	if op.BuiltinOptions2Type() != schema.BuiltinOptions2StableHLOCompositeOptions || !op.BuiltinOptions2(&tab) {
		return corrupt(opath, -1, "STABLEHLO_COMPOSITE needs StableHLOCompositeOptions")
	}
	if err := l.c.table(int64(tab.Pos), opath, compositeFields); err != nil {
		return err
	}
	var c schema.StableHLOCompositeOptions
	c.Init(tab.Bytes, tab.Pos)
	out.Called = []graph.SubgraphIndex{graph.SubgraphIndex(c.DecompositionSubgraphIndex())}
	return l.checkCalled(opath, out)
}

func (l *loader) checkCalled(path string, out *graph.Op) error {
	n := l.fb.SubgraphsLength()
	for _, s := range out.Called {
		if s < 0 || int(s) >= n {
			return corrupt(path, -1, "%s calls subgraph %d, out of range [0, %d)", out.CodeName, s, n)
		}
	}
	return nil
}

// tensorList reads a vector of tensor indices, checking each against the
// subgraph's tensor count; optional allows -1 (an omitted input).
func tensorList(path string, n int, at func(int) int32, nt int, optional bool) ([]graph.TensorID, error) {
	ids := make([]graph.TensorID, n)
	for i := 0; i < n; i++ {
		v := at(i)
		if (v < 0 && !(optional && v == -1)) || int(v) >= nt {
			return nil, corrupt(fmt.Sprintf("%s[%d]", path, i), -1, "tensor index %d out of range [0, %d)", v, nt)
		}
		ids[i] = graph.TensorID(v)
	}
	return ids, nil
}

func (l *loader) metadata() error {
	n := l.fb.MetadataLength()
	for i := 0; i < n; i++ {
		path := fmt.Sprintf("metadata[%d]", i)
		var md schema.Metadata
		l.fb.Metadata(&md, i)
		if err := l.c.table(int64(md.Table().Pos), path, metadataFields); err != nil {
			return err
		}
		if int64(md.Buffer()) >= int64(len(l.m.Buffers)) {
			return corrupt(path+".buffer", -1, "index %d out of range [0, %d)", md.Buffer(), len(l.m.Buffers))
		}
		l.m.Metadata = append(l.m.Metadata, graph.Metadata{Name: string(md.Name()), Buffer: graph.BufferIndex(md.Buffer())})
	}
	return nil
}

func (l *loader) signatures() error {
	n := l.fb.SignatureDefsLength()
	for i := 0; i < n; i++ {
		path := fmt.Sprintf("signature_defs[%d]", i)
		var sd schema.SignatureDef
		l.fb.SignatureDefs(&sd, i)
		if err := l.c.table(int64(sd.Table().Pos), path, signatureFields); err != nil {
			return err
		}
		si := sd.SubgraphIndex()
		if int64(si) >= int64(len(l.m.Subgraphs)) {
			return corrupt(path+".subgraph_index", -1, "index %d out of range [0, %d)", si, len(l.m.Subgraphs))
		}
		nt := len(l.m.Subgraphs[si].Tensors)
		sig := graph.Signature{Key: string(sd.SignatureKey()), Subgraph: graph.SubgraphIndex(si)}
		var err error
		if sig.Inputs, err = l.tensorMaps(path+".inputs", sd.InputsLength(), sd.Inputs, nt); err != nil {
			return err
		}
		if sig.Outputs, err = l.tensorMaps(path+".outputs", sd.OutputsLength(), sd.Outputs, nt); err != nil {
			return err
		}
		l.m.Signatures = append(l.m.Signatures, sig)
	}
	return nil
}

func (l *loader) tensorMaps(path string, n int, at func(*schema.TensorMap, int) bool, nt int) ([]graph.SignatureTensor, error) {
	out := make([]graph.SignatureTensor, n)
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("%s[%d]", path, i)
		var tm schema.TensorMap
		at(&tm, i)
		if err := l.c.table(int64(tm.Table().Pos), p, tensorMapFields); err != nil {
			return nil, err
		}
		if int64(tm.TensorIndex()) >= int64(nt) {
			return nil, corrupt(p+".tensor_index", -1, "index %d out of range [0, %d)", tm.TensorIndex(), nt)
		}
		out[i] = graph.SignatureTensor{Name: string(tm.Name()), Tensor: graph.TensorID(tm.TensorIndex())}
	}
	return out, nil
}

// checkCalls rejects call cycles (a subgraph that, through WHILE, IF,
// CALL_ONCE or STABLEHLO_COMPOSITE, calls itself) and calls of the main
// subgraph, which a static plan cannot schedule.
func checkCalls(m *graph.Model) error {
	const (
		unseen = iota
		active
		done
	)
	state := make([]int, len(m.Subgraphs))
	var visit func(s graph.SubgraphIndex) error
	visit = func(s graph.SubgraphIndex) error {
		state[s] = active
		for oi, op := range m.Subgraphs[s].Ops {
			for _, c := range op.Called {
				if c == 0 {
					return corrupt(fmt.Sprintf("subgraphs[%d].operators[%d]", s, oi), -1, "%s calls the main subgraph 0", op.Name())
				}
				if state[c] == active {
					return corrupt(fmt.Sprintf("subgraphs[%d].operators[%d]", s, oi), -1, "%s calls subgraph %d recursively", op.Name(), c)
				}
				if state[c] == unseen {
					if err := visit(c); err != nil {
						return err
					}
				}
			}
		}
		state[s] = done
		return nil
	}
	for s := range m.Subgraphs {
		if state[s] == unseen {
			if err := visit(graph.SubgraphIndex(s)); err != nil {
				return err
			}
		}
	}
	return nil
}
