// Package randmodel generates random but well-formed TFLite models, as
// graph.Model values, for property tests of the liveness analysis, the
// planner and the verifier.
//
// Input: a seed and a Config. Output: a *graph.Model, the same for the same
// seed and Config. Its non-test code imports only the standard library and
// graph; tests write the model with tflite.Encode and read it back with
// tflite.Load before using it. CallChain builds, instead, one hostile
// model: a chain of subgraphs each calling the next several times, for
// tests of the limits on work.
//
// # What a model holds
//
// Subgraph 0 ("main") has one to three inputs and a run of operators; other
// subgraphs are only ever created as callees, always with a larger index
// than their caller, so calls never form a cycle:
//
//   - ordinary operators (ADD, MUL, CONV_2D, FULLY_CONNECTED, … and now and
//     then a CUSTOM one) read one to three earlier tensors, constants or
//     is_variable tensors, with optional inputs sometimes omitted (-1), and
//     write one or two new tensors, occasionally with an intermediate;
//     many outputs are never read;
//   - view operators (RESHAPE, SQUEEZE, EXPAND_DIMS, BITCAST) whose output
//     has the same byte size as their first input, including views of
//     views, views of subgraph inputs and views of constants;
//   - values written again: by an operator whose output is its own input
//     (LOGISTIC(t) -> t) or by a second operator, often with a view of the
//     value made before the write and read after it;
//   - WHILE (cond: n inputs, one BOOL output; body: n inputs, n outputs of
//     the same types and shapes; the operator n operands and n results),
//     IF (operand 0 a BOOL, then n values; both branches n inputs and n
//     outputs) and CALL_ONCE (no operands; an init subgraph without inputs
//     or outputs that assigns constants to resource variables), nested a
//     few levels deep, and now and then one callee called by two operators;
//   - resource variables: VAR_HANDLE operators naming variables from a
//     small per-model pool (so names repeat across subgraphs), RESOURCE
//     handle tensors, READ_VARIABLE and ASSIGN_VARIABLE in main, in callees
//     and in CALL_ONCE init subgraphs; handles are sometimes passed into
//     WHILE and IF subgraphs;
//   - zero-size tensors (a dimension of 0), dynamic shape signatures, the
//     odd STRING tensor, quantized tensors, a model input that is also an
//     output, subgraph outputs that pass an input straight through;
//   - sometimes an extra subgraph that no operator calls, the entry point of
//     a second signature.
//
// Buffers: buffer 0 is the empty sentinel; every constant has a buffer of
// its own, or one shared with another constant of the same byte size,
// holding exactly Size bytes; other tensors use buffer 0 or an empty buffer
// of their own, as the TFLite converter writes them.
//
// The model is built exactly as tflite.Load would return it, so that
// Load(Encode(m)) deep-equals m: Tensor.Size is graph.ByteSize of the type
// and shape (for a STRING constant, the length of its data), empty lists
// are empty rather than nil slices, and VAR_HANDLE operators always carry a
// Resource.
package randmodel

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/heliac/heliac/graph"
)

// Config bounds the size of a generated model. Zero fields take defaults.
type Config struct {
	// Subgraphs is the most subgraphs a model has, main included
	// (default 6).
	Subgraphs int
	// Ops is the most operators main generates directly (default 8);
	// called subgraphs get about half as many. Operators that produce
	// values other operators need (a BOOL for IF, a value for ASSIGN_VARIABLE
	// or a subgraph output) come on top.
	Ops int
	// MaxElements is the most elements of one tensor (default 64).
	MaxElements int
	// MaxDepth is how deeply calls nest: 1 lets only main call subgraphs
	// (default 3).
	MaxDepth int
	// HostileNames gives every name of the model (tensors, subgraphs,
	// custom operators, resource variables, signatures, the description)
	// bytes that plain text cannot carry as they are: invalid UTF-8,
	// control characters, terminal escapes, C comment ends. The model is
	// otherwise the one the seed gives without it.
	HostileNames bool
}

// Defaults for zero Config fields.
const (
	DefaultSubgraphs   = 6
	DefaultOps         = 8
	DefaultMaxElements = 64
	DefaultMaxDepth    = 3
)

func (c Config) withDefaults() Config {
	if c.Subgraphs <= 0 {
		c.Subgraphs = DefaultSubgraphs
	}
	if c.Ops <= 0 {
		c.Ops = DefaultOps
	}
	if c.MaxElements <= 0 {
		c.MaxElements = DefaultMaxElements
	}
	if c.MaxDepth <= 0 {
		c.MaxDepth = DefaultMaxDepth
	}
	return c
}

// Preset is a named Config.
type Preset struct {
	Name   string
	Config Config
}

// Presets returns the configurations property tests sweep: the defaults,
// larger models, deeply nested calls over many subgraphs, and long runs of
// operators over tiny tensors (where views and equal sizes abound).
func Presets() []Preset {
	return []Preset{
		{"default", Config{}},
		{"large", Config{Subgraphs: 12, Ops: 24, MaxElements: 512, MaxDepth: 4}},
		{"deep", Config{Subgraphs: 20, Ops: 6, MaxElements: 4096, MaxDepth: 6}},
		{"long", Config{Subgraphs: 3, Ops: 40, MaxElements: 8}},
	}
}

// SchemaVersion is the TFLite schema version generated models declare.
const SchemaVersion = 3

// Generate returns a random model, the same for the same seed and cfg.
func Generate(seed int64, cfg Config) *graph.Model {
	cfg = cfg.withDefaults()
	g := &gen{
		r:       rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)),
		names:   rand.New(rand.NewPCG(uint64(seed), 0x5851f42d4c957f2d)),
		cfg:     cfg,
		buffers: []graph.Buffer{{}},
	}
	g.makeVariables()
	main := g.newSub("main", 0)
	g.fillEntry(main)
	sigs := []graph.Signature{signature("serving_default", main)}
	if g.room(1) && g.chance(0.3) {
		extra := g.newSub("extra", 0)
		g.fillEntry(extra)
		sigs = append(sigs, signature("extra", extra))
	}
	m := &graph.Model{
		Version:     SchemaVersion,
		Description: fmt.Sprintf("heliac randmodel seed %d", seed),
		Buffers:     g.buffers,
		Signatures:  sigs,
	}
	for _, s := range g.subs {
		m.Subgraphs = append(m.Subgraphs, s.sg)
	}
	containFirstHandles(m)
	if cfg.HostileNames {
		hostileNames(m)
	}
	withOptions(m)
	return m
}

// spec is the type and shape of a value; res names the variable of a
// RESOURCE handle.
type spec struct {
	typ   graph.ElementType
	shape []int32
	sig   []int32 // shape signature; nil unless dynamic
	res   *graph.ResourceName
}

func (a spec) same(b spec) bool {
	if a.typ != b.typ || !slices.Equal(a.shape, b.shape) {
		return false
	}
	if a.res != nil || b.res != nil {
		return a.res != nil && b.res != nil && *a.res == *b.res
	}
	return true
}

func handleSpec(name graph.ResourceName) spec {
	return spec{typ: graph.Resource, shape: []int32{}, res: &name}
}

// variable is one resource variable of the pool, with the type and shape
// of the values assigned to and read from it.
type variable struct {
	name  graph.ResourceName
	value spec
}

// callee is a subgraph (or pair) some operator calls, kept so that a later
// operator can call it again.
type callee struct {
	code   graph.Opcode
	called []graph.SubgraphIndex
	ins    []spec // the operator's operands (for IF, after the condition)
	outs   []spec // the operator's results
}

type gen struct {
	r       *rand.Rand
	names   *rand.Rand // container choices, apart from r so the rest of a seed's model stays as it was
	cfg     Config
	subs    []*sub
	buffers []graph.Buffer
	vars    []variable
	callees []callee
}

// sub is a subgraph under construction.
type sub struct {
	idx     graph.SubgraphIndex
	depth   int // call nesting: 0 for main and the extra entry point
	sg      graph.Subgraph
	values  []graph.TensorID // readable tensors: inputs and results, oldest first
	views   []graph.TensorID // outputs of view operators
	consts  []graph.TensorID
	state   []graph.TensorID // is_variable tensors
	handles map[graph.ResourceName][]graph.TensorID
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// room reports whether n more subgraphs fit the budget.
func (g *gen) room(n int) bool { return len(g.subs)+n <= g.cfg.Subgraphs }

func (g *gen) newSub(name string, depth int) *sub {
	s := &sub{
		idx:   graph.SubgraphIndex(len(g.subs)),
		depth: depth,
		sg: graph.Subgraph{
			Name:    name,
			Tensors: []graph.Tensor{},
			Ops:     []graph.Op{},
			Inputs:  []graph.TensorID{},
			Outputs: []graph.TensorID{},
		},
		handles: map[graph.ResourceName][]graph.TensorID{},
	}
	if name == "" {
		s.sg.Name = fmt.Sprintf("subgraph%d", s.idx)
	}
	g.subs = append(g.subs, s)
	return s
}

func signature(key string, s *sub) graph.Signature {
	sig := graph.Signature{Key: key, Subgraph: s.idx, Inputs: []graph.SignatureTensor{}, Outputs: []graph.SignatureTensor{}}
	for _, t := range s.sg.Inputs {
		sig.Inputs = append(sig.Inputs, graph.SignatureTensor{Name: s.sg.Tensors[t].Name, Tensor: t})
	}
	for _, t := range s.sg.Outputs {
		sig.Outputs = append(sig.Outputs, graph.SignatureTensor{Name: s.sg.Tensors[t].Name, Tensor: t})
	}
	return sig
}

// makeVariables fills the pool of resource variables, some models having
// none.
func (g *gen) makeVariables() {
	n := g.r.IntN(4)
	for i := range n {
		name := graph.ResourceName{SharedName: fmt.Sprintf("var%d", i)}
		if g.chance(0.3) {
			name.Container, name.HasContainer = "state", true
			if g.names.Float64() < 0.25 {
				name.Container = "" // a container all the same
			}
		}
		g.vars = append(g.vars, variable{name: name, value: g.randomSpec(false)})
	}
}

// Element types of ordinary values, with repeats as weights.
var valueTypes = []graph.ElementType{
	graph.Float32, graph.Float32, graph.Float32, graph.Int8, graph.Int8, graph.Int8,
	graph.Int16, graph.Int32, graph.Int32, graph.Uint8, graph.Int4, graph.Bool, graph.Float16,
}

// randomShape returns a shape of rank 0 to 4 with at most MaxElements
// elements.
func (g *gen) randomShape() []int32 {
	rank := g.r.IntN(5)
	shape := make([]int32, rank)
	rem := g.cfg.MaxElements
	for i := range shape {
		d := 1 + g.r.IntN(min(rem, 16))
		shape[i] = int32(d)
		rem = max(1, rem/d)
	}
	return shape
}

// randomSpec returns a random non-resource spec; zero allows a zero-size
// shape.
func (g *gen) randomSpec(zero bool) spec {
	sp := spec{typ: valueTypes[g.r.IntN(len(valueTypes))], shape: g.randomShape()}
	if zero && len(sp.shape) > 0 && g.chance(0.06) {
		sp.shape[g.r.IntN(len(sp.shape))] = 0
	}
	g.maybeDynamic(&sp)
	return sp
}

// maybeDynamic sometimes gives sp a shape signature with an unknown
// dimension.
func (g *gen) maybeDynamic(sp *spec) {
	sp.sig = nil
	if len(sp.shape) > 0 && g.chance(0.1) {
		sp.sig = slices.Clone(sp.shape)
		sp.sig[g.r.IntN(len(sp.sig))] = -1
	}
}

func elements(shape []int32) int {
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	return n
}

// addTensor appends a tensor of spec sp to s.
func (g *gen) addTensor(s *sub, prefix string, sp spec) graph.TensorID {
	id := graph.TensorID(len(s.sg.Tensors))
	size, err := graph.ByteSize(sp.typ, sp.shape)
	if err != nil {
		panic(fmt.Sprintf("randmodel: %v", err)) // shapes are kept small
	}
	t := graph.Tensor{
		Name:           fmt.Sprintf("%s%d", prefix, id),
		Type:           sp.typ,
		Shape:          slices.Clone(sp.shape),
		ShapeSignature: slices.Clone(sp.sig),
		Size:           size,
	}
	if (sp.typ == graph.Int8 || sp.typ == graph.Int16 || sp.typ == graph.Uint8) && g.chance(0.5) {
		t.Quantization = &graph.Quantization{
			Scale:     []float32{float32(1+g.r.IntN(100)) / 256},
			ZeroPoint: []int64{int64(g.r.IntN(16)) - 8},
		}
	}
	if g.chance(0.3) {
		// The converter gives activations empty buffers of their own.
		t.Buffer = g.addBuffer(nil)
	}
	s.sg.Tensors = append(s.sg.Tensors, t)
	return id
}

func (g *gen) addBuffer(data []byte) graph.BufferIndex {
	g.buffers = append(g.buffers, graph.Buffer{Data: data})
	return graph.BufferIndex(len(g.buffers) - 1)
}

// dataBuffer returns a buffer holding n bytes: sometimes an existing
// buffer of that length, else a new one of random bytes.
func (g *gen) dataBuffer(n int) graph.BufferIndex {
	if g.chance(0.3) {
		var same []graph.BufferIndex
		for i, b := range g.buffers {
			if len(b.Data) == n {
				same = append(same, graph.BufferIndex(i))
			}
		}
		if len(same) > 0 {
			return same[g.r.IntN(len(same))]
		}
	}
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(g.r.Uint32())
	}
	return g.addBuffer(data)
}

// constant adds a constant tensor of spec sp. A zero-size constant has no
// data (buffer 0).
func (g *gen) constant(s *sub, sp spec) graph.TensorID {
	sp.sig = nil
	id := g.addTensor(s, "const", sp)
	t := &s.sg.Tensors[id]
	t.Buffer = 0
	if t.Size > 0 {
		t.Buffer = g.dataBuffer(int(t.Size))
	}
	s.consts = append(s.consts, id)
	return id
}

// stringConstant adds a STRING constant, whose size is its data's length.
func (g *gen) stringConstant(s *sub) graph.TensorID {
	id := g.addTensor(s, "text", spec{typ: graph.String, shape: []int32{int32(1 + g.r.IntN(3))}})
	t := &s.sg.Tensors[id]
	n := 1 + g.r.IntN(24)
	t.Buffer = g.dataBuffer(n)
	t.Size = int64(n)
	s.consts = append(s.consts, id)
	return id
}

// int32Constant adds an INT32 constant holding v, shaped [len(v)] or, for
// scalar, [].
func (g *gen) int32Constant(s *sub, v []int32, scalar bool) graph.TensorID {
	shape := []int32{int32(len(v))}
	if scalar {
		shape = []int32{}
	}
	id := g.addTensor(s, "const", spec{typ: graph.Int32, shape: shape})
	t := &s.sg.Tensors[id]
	t.Quantization = nil
	t.Buffer = 0
	if len(v) > 0 {
		data := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(data[4*i:], uint32(x))
		}
		t.Buffer = g.addBuffer(data)
	}
	s.consts = append(s.consts, id)
	return id
}

// stateTensor returns an is_variable tensor of s, new or reused.
func (g *gen) stateTensor(s *sub) graph.TensorID {
	if len(s.state) > 0 && g.chance(0.4) {
		return s.state[g.r.IntN(len(s.state))]
	}
	sp := g.randomSpec(true)
	sp.sig = nil
	id := g.addTensor(s, "state", sp)
	t := &s.sg.Tensors[id]
	t.IsVariable = true
	t.Buffer = 0
	if t.Size > 0 && g.chance(0.3) {
		// Initial data; the tensor is still state, not a constant.
		t.Buffer = g.dataBuffer(int(t.Size))
	}
	s.state = append(s.state, id)
	return id
}

// pickValue returns a readable value of s, favouring recent ones, or -1
// when there is none.
func (g *gen) pickValue(s *sub) graph.TensorID {
	n := len(s.values)
	if n == 0 {
		return graph.NoTensor
	}
	if g.chance(0.5) {
		return s.values[n-1-g.r.IntN(min(n, 3))]
	}
	return s.values[g.r.IntN(n)]
}

// operand returns a tensor for an ordinary operator to read.
func (g *gen) operand(s *sub) graph.TensorID {
	p := g.r.Float64()
	switch {
	case p < 0.6 && len(s.values) > 0:
		return g.pickValue(s)
	case p < 0.7 && len(s.consts) > 0:
		return s.consts[g.r.IntN(len(s.consts))]
	case p < 0.87:
		return g.constant(s, g.randomSpec(false))
	case p < 0.93:
		return g.stateTensor(s)
	case p < 0.96:
		return g.constant(s, spec{typ: graph.Float32, shape: []int32{int32(g.r.IntN(3)), 0}})
	case p < 0.98:
		return g.stringConstant(s)
	}
	if v := g.pickValue(s); v != graph.NoTensor {
		return v
	}
	return g.constant(s, g.randomSpec(false))
}

func (g *gen) addOp(s *sub, op graph.Op) {
	if op.Inputs == nil {
		op.Inputs = []graph.TensorID{}
	}
	if op.Outputs == nil {
		op.Outputs = []graph.TensorID{}
	}
	if op.Intermediates == nil {
		op.Intermediates = []graph.TensorID{}
	}
	if op.Version == 0 {
		op.Version = 1
	}
	s.sg.Ops = append(s.sg.Ops, op)
}

// ordinaryCodes are the operators ordinary ops are drawn from.
var ordinaryCodes = []struct {
	code graph.Opcode
	name string
}{
	{0, "ADD"}, {0, "ADD"}, {18, "MUL"}, {41, "SUB"}, {3, "CONV_2D"}, {3, "CONV_2D"},
	{4, "DEPTHWISE_CONV_2D"}, {9, "FULLY_CONNECTED"}, {9, "FULLY_CONNECTED"},
	{14, "LOGISTIC"}, {28, "TANH"}, {25, "SOFTMAX"}, {2, "CONCATENATION"},
	{40, "MEAN"}, {34, "PAD"}, {114, "QUANTIZE"}, {6, "DEQUANTIZE"},
	{44, "UNIDIRECTIONAL_SEQUENCE_LSTM"}, {graph.Custom, "CUSTOM"},
}

// ordinary adds an ordinary operator writing new tensors of the given
// specs (one or two random ones when outs is nil), and returns them.
func (g *gen) ordinary(s *sub, outs []spec) []graph.TensorID {
	c := ordinaryCodes[g.r.IntN(len(ordinaryCodes))]
	op := graph.Op{Code: c.code, CodeName: c.name}
	if c.code == graph.Custom {
		op.CustomName = []string{"MyOp", "TFLite_Detection_PostProcess"}[g.r.IntN(2)]
	}
	if g.chance(0.1) {
		op.Version = 2
	}
	n := 1 + g.r.IntN(3)
	for i := range n {
		if i > 0 && g.chance(0.08) {
			op.Inputs = append(op.Inputs, graph.NoTensor)
			continue
		}
		op.Inputs = append(op.Inputs, g.operand(s))
	}
	if outs == nil {
		for range 1 + g.r.IntN(2) {
			outs = append(outs, g.randomSpec(true))
		}
		if g.chance(0.02) {
			outs[0] = spec{typ: graph.String, shape: []int32{2}}
		}
	}
	for _, sp := range outs {
		id := g.addTensor(s, "x", sp)
		op.Outputs = append(op.Outputs, id)
		s.values = append(s.values, id)
	}
	if g.chance(0.04) {
		op.Intermediates = append(op.Intermediates, g.addTensor(s, "tmp", g.randomSpec(false)))
	}
	g.addOp(s, op)
	return op.Outputs
}

// produce returns a tensor of spec sp for a subgraph output, not one of
// exclude: an existing value, a new constant or a new operator's result.
func (g *gen) produce(s *sub, sp spec, exclude []graph.TensorID) graph.TensorID {
	if g.chance(0.35) {
		var same []graph.TensorID
		for _, v := range s.values {
			if sp.same(g.spec(s, v)) && !slices.Contains(exclude, v) {
				same = append(same, v)
			}
		}
		if len(same) > 0 {
			return same[g.r.IntN(len(same))]
		}
	}
	if g.chance(0.04) {
		return g.constant(s, sp)
	}
	return g.ordinary(s, []spec{sp})[0]
}

// spec returns the spec of tensor t of s.
func (g *gen) spec(s *sub, t graph.TensorID) spec {
	tt := &s.sg.Tensors[t]
	sp := spec{typ: tt.Type, shape: tt.Shape}
	if tt.Type == graph.Resource {
		for name, hs := range s.handles {
			if slices.Contains(hs, t) {
				sp.res = &name
				break
			}
		}
	}
	return sp
}

// View operators.
const (
	opReshape    = graph.Reshape
	opSqueeze    = graph.Squeeze
	opExpandDims = graph.ExpandDims
	opBitcast    = graph.Bitcast
)

// view adds a view operator over an earlier value (often an earlier view's
// output), or now and then over a constant.
func (g *gen) view(s *sub) {
	var src graph.TensorID = graph.NoTensor
	switch {
	case len(s.views) > 0 && g.chance(0.4):
		src = s.views[g.r.IntN(len(s.views))]
	case len(s.consts) > 0 && g.chance(0.1):
		src = s.consts[g.r.IntN(len(s.consts))]
	default:
		src = g.pickValue(s)
	}
	if src == graph.NoTensor || s.sg.Tensors[src].Type == graph.String {
		g.ordinary(s, nil)
		return
	}
	g.viewOf(s, src)
}

// viewOf adds a view operator over src and returns its output.
func (g *gen) viewOf(s *sub, src graph.TensorID) graph.TensorID {
	in := s.sg.Tensors[src]
	out := spec{typ: in.Type}
	op := graph.Op{Inputs: []graph.TensorID{src}}
	ones := []int{}
	for i, d := range in.Shape {
		if d == 1 {
			ones = append(ones, i)
		}
	}
	bitcastable := in.Type == graph.Float32 || in.Type == graph.Int32 || in.Type == graph.Uint32
	switch p := g.r.Float64(); {
	case p < 0.12 && bitcastable:
		op.Code, op.CodeName = opBitcast, "BITCAST"
		others := []graph.ElementType{graph.Float32, graph.Int32, graph.Uint32}
		out.typ = others[g.r.IntN(len(others))]
		out.shape = slices.Clone(in.Shape)
	case p < 0.3 && len(ones) > 0:
		op.Code, op.CodeName = opSqueeze, "SQUEEZE"
		out.shape = slices.Delete(slices.Clone(in.Shape), ones[0], ones[0]+1)
	case p < 0.45 && len(in.Shape) < 5:
		op.Code, op.CodeName = opExpandDims, "EXPAND_DIMS"
		axis := g.r.IntN(len(in.Shape) + 1)
		out.shape = slices.Insert(slices.Clone(in.Shape), axis, 1)
		op.Inputs = append(op.Inputs, g.int32Constant(s, []int32{int32(axis)}, true))
	default:
		op.Code, op.CodeName = opReshape, "RESHAPE"
		out.shape = g.reshape(in.Shape)
		if g.chance(0.6) {
			op.Inputs = append(op.Inputs, g.int32Constant(s, out.shape, false))
		}
	}
	g.maybeDynamic(&out)
	id := g.addTensor(s, "view", out)
	s.sg.Tensors[id].Quantization = in.Quantization
	op.Outputs = []graph.TensorID{id}
	g.addOp(s, op)
	s.values = append(s.values, id)
	s.views = append(s.views, id)
	return id
}

// rewrite writes an earlier value t of s again, which TFLite allows: by
// an operator whose output is its own input (LOGISTIC(t) -> t) or by a
// second operator writing it. Often a view of t (or t a view's output) is
// made before the write and read after it, which must then read the value
// from before the write: the pattern that makes an alias invalid.
func (g *gen) rewrite(s *sub) {
	var cands []graph.TensorID
	for _, v := range s.values {
		if tt := &s.sg.Tensors[v]; !slices.Contains(s.sg.Inputs, v) && tt.Type != graph.String && tt.Type != graph.Resource {
			cands = append(cands, v)
		}
	}
	if len(cands) == 0 {
		g.ordinary(s, nil)
		return
	}
	t := cands[len(cands)-1-g.r.IntN(min(len(cands), 4))]
	var view graph.TensorID = graph.NoTensor
	if g.chance(0.6) {
		view = g.viewOf(s, t)
	}
	if g.chance(0.5) {
		c := []struct {
			code graph.Opcode
			name string
		}{{14, "LOGISTIC"}, {28, "TANH"}, {101, "ABS"}, {59, "NEG"}}[g.r.IntN(4)]
		g.addOp(s, graph.Op{Code: c.code, CodeName: c.name, Inputs: []graph.TensorID{t}, Outputs: []graph.TensorID{t}})
	} else {
		c := ordinaryCodes[g.r.IntN(len(ordinaryCodes))]
		op := graph.Op{Code: c.code, CodeName: c.name, Outputs: []graph.TensorID{t}}
		if c.code == graph.Custom {
			op.CustomName = "MyOp"
		}
		for range 1 + g.r.IntN(2) {
			op.Inputs = append(op.Inputs, g.operand(s))
		}
		g.addOp(s, op)
	}
	if view != graph.NoTensor && g.chance(0.7) {
		g.addOp(s, graph.Op{Code: 0, CodeName: "ADD", Inputs: []graph.TensorID{view, g.operand(s)},
			Outputs: []graph.TensorID{g.addTensor(s, "x", g.spec(s, view))}})
		s.values = append(s.values, s.sg.Ops[len(s.sg.Ops)-1].Outputs[0])
	}
}

// reshape returns a random shape with as many elements as shape.
func (g *gen) reshape(shape []int32) []int32 {
	n := elements(shape)
	if n == 0 {
		return []int32{int32(g.r.IntN(3)), 0}
	}
	var out []int32
	for rank := 1 + g.r.IntN(3); rank > 1 && n > 1; rank-- {
		var divs []int
		for d := 1; d <= n; d++ {
			if n%d == 0 {
				divs = append(divs, d)
			}
		}
		d := divs[g.r.IntN(len(divs))]
		out = append(out, int32(d))
		n /= d
	}
	return append(out, int32(n))
}

// handle returns a handle tensor of s for variable v: an existing one, or
// the output of a new VAR_HANDLE.
func (g *gen) handle(s *sub, v variable) graph.TensorID {
	if hs := s.handles[v.name]; len(hs) > 0 && g.chance(0.6) {
		return hs[g.r.IntN(len(hs))]
	}
	id := g.addTensor(s, "handle", handleSpec(v.name))
	s.sg.Tensors[id].Buffer = 0
	name := v.name
	if name.HasContainer && g.names.Float64() < 0.4 {
		// TFLM matches a handle without a container to the variable of
		// its shared_name in any container.
		name.Container, name.HasContainer = "", false
	}
	g.addOp(s, graph.Op{Code: graph.VarHandle, CodeName: "VAR_HANDLE", Outputs: []graph.TensorID{id}, Resource: &name})
	s.handles[v.name] = append(s.handles[v.name], id)
	return id
}

// containFirstHandles gives a container back to a VAR_HANDLE without one
// that TFLM would prepare before every VAR_HANDLE of its shared_name with
// one (subgraph by subgraph, each in its order): TFLM then creates the
// variable without a container, and the later handle with one dereferences
// its missing name (micro_resource_variable.cc, FindId, at TFLM 90b983c).
// Handles without a container are made only for variables with one.
func containFirstHandles(m *graph.Model) {
	contained := map[string]graph.ResourceName{}
	for _, sg := range m.Subgraphs {
		for _, op := range sg.Ops {
			if op.Code == graph.VarHandle && op.Resource.HasContainer {
				if _, ok := contained[op.Resource.SharedName]; !ok {
					contained[op.Resource.SharedName] = *op.Resource
				}
			}
		}
	}
	seen := map[string]bool{}
	for si := range m.Subgraphs {
		for oi := range m.Subgraphs[si].Ops {
			op := &m.Subgraphs[si].Ops[oi]
			if op.Code != graph.VarHandle || seen[op.Resource.SharedName] {
				continue
			}
			seen[op.Resource.SharedName] = true
			if c, ok := contained[op.Resource.SharedName]; ok && !op.Resource.HasContainer {
				op.Resource = &c
			}
		}
	}
}

// variableOp reads or assigns a resource variable of the pool.
func (g *gen) variableOp(s *sub) {
	if len(g.vars) == 0 {
		g.ordinary(s, nil)
		return
	}
	v := g.vars[g.r.IntN(len(g.vars))]
	h := g.handle(s, v)
	if g.chance(0.5) {
		id := g.addTensor(s, "read", v.value)
		g.addOp(s, graph.Op{Code: graph.ReadVariable, CodeName: "READ_VARIABLE", Inputs: []graph.TensorID{h}, Outputs: []graph.TensorID{id}})
		s.values = append(s.values, id)
		return
	}
	var val graph.TensorID
	if g.chance(0.4) {
		val = g.constant(s, v.value)
	} else {
		val = g.produce(s, v.value, nil)
	}
	g.addOp(s, graph.Op{Code: graph.AssignVariable, CodeName: "ASSIGN_VARIABLE", Inputs: []graph.TensorID{h, val}})
}

// callOnce adds a CALL_ONCE whose init subgraph assigns constants to
// variables.
func (g *gen) callOnce(s *sub) {
	if len(g.vars) == 0 {
		return
	}
	if c, ok := g.reuse(s, graph.CallOnce, 0); ok {
		g.addOp(s, graph.Op{Code: graph.CallOnce, CodeName: "CALL_ONCE", Called: c.called})
		return
	}
	if !g.room(1) || s.depth+1 > g.cfg.MaxDepth {
		return
	}
	init := g.newSub("", s.depth+1)
	for range 1 + g.r.IntN(2) {
		v := g.vars[g.r.IntN(len(g.vars))]
		h := g.handle(init, v)
		val := g.constant(init, v.value)
		if g.chance(0.2) {
			val = g.ordinary(init, []spec{v.value})[0]
		}
		g.addOp(init, graph.Op{Code: graph.AssignVariable, CodeName: "ASSIGN_VARIABLE", Inputs: []graph.TensorID{h, val}})
	}
	called := []graph.SubgraphIndex{init.idx}
	g.callees = append(g.callees, callee{code: graph.CallOnce, called: called})
	g.addOp(s, graph.Op{Code: graph.CallOnce, CodeName: "CALL_ONCE", Called: called})
}

// reuse picks, now and then (always when the subgraph budget is spent),
// an earlier callee of the given kind that s may call.
func (g *gen) reuse(s *sub, code graph.Opcode, need int) (callee, bool) {
	var ok []callee
	for _, c := range g.callees {
		if c.code == code && slices.Min(c.called) > s.idx {
			ok = append(ok, c)
		}
	}
	if len(ok) == 0 || (g.room(need) && s.depth+1 <= g.cfg.MaxDepth && !g.chance(0.3)) {
		return callee{}, false
	}
	return ok[g.r.IntN(len(ok))], true
}

// operands returns n tensors of s for a WHILE or IF to pass, some of them
// resource handles.
func (g *gen) operands(s *sub, n int) []graph.TensorID {
	var ids []graph.TensorID
	for range n {
		switch {
		case len(g.vars) > 0 && g.chance(0.15):
			ids = append(ids, g.handle(s, g.vars[g.r.IntN(len(g.vars))]))
		case len(s.values) > 0 && g.chance(0.8):
			ids = append(ids, g.pickValue(s))
		default:
			ids = append(ids, g.constant(s, g.randomSpec(true)))
		}
	}
	return ids
}

// satisfy returns tensors of s matching specs, making what is missing.
func (g *gen) satisfy(s *sub, specs []spec) []graph.TensorID {
	var ids []graph.TensorID
	for _, sp := range specs {
		if sp.res != nil {
			ids = append(ids, g.handle(s, variable{name: *sp.res}))
			continue
		}
		ids = append(ids, g.produce(s, sp, nil))
	}
	return ids
}

func (g *gen) specs(s *sub, ids []graph.TensorID) []spec {
	var out []spec
	for _, t := range ids {
		out = append(out, g.spec(s, t))
	}
	return out
}

// results adds the result tensors of a control-flow operator.
func (g *gen) results(s *sub, specs []spec) []graph.TensorID {
	var ids []graph.TensorID
	for _, sp := range specs {
		if sp.res != nil {
			id := g.addTensor(s, "handle", sp)
			s.sg.Tensors[id].Buffer = 0
			s.handles[*sp.res] = append(s.handles[*sp.res], id)
			ids = append(ids, id)
			continue
		}
		sp.sig = nil
		g.maybeDynamic(&sp)
		id := g.addTensor(s, "res", sp)
		s.values = append(s.values, id)
		ids = append(ids, id)
	}
	return ids
}

// inputs adds the inputs of a called subgraph.
func (g *gen) inputs(s *sub, specs []spec) {
	for _, sp := range specs {
		if sp.res != nil {
			id := g.addTensor(s, "handle", sp)
			s.sg.Tensors[id].Buffer = 0
			s.handles[*sp.res] = append(s.handles[*sp.res], id)
			s.sg.Inputs = append(s.sg.Inputs, id)
			continue
		}
		id := g.addTensor(s, "arg", sp)
		s.sg.Inputs = append(s.sg.Inputs, id)
		s.values = append(s.values, id)
	}
}

// outputs sets the outputs of a called subgraph: resource slots pass
// their handle input through, the others get a value of the right spec.
func (g *gen) outputs(s *sub, specs []spec) {
	for i, sp := range specs {
		if sp.res != nil {
			s.sg.Outputs = append(s.sg.Outputs, s.sg.Inputs[i])
			continue
		}
		s.sg.Outputs = append(s.sg.Outputs, g.produce(s, sp, s.sg.Outputs))
	}
}

// while adds a WHILE operator, with a new cond and body or earlier ones.
func (g *gen) while(s *sub) {
	op := graph.Op{Code: graph.While, CodeName: "WHILE"}
	c, ok := g.reuse(s, graph.While, 2)
	switch {
	case ok:
		op.Inputs = g.satisfy(s, c.ins)
	case g.room(2) && s.depth+1 <= g.cfg.MaxDepth:
		op.Inputs = g.operands(s, 1+g.r.IntN(3))
		c = callee{code: graph.While, ins: g.specs(s, op.Inputs)}
		c.outs = c.ins
		cond, body := g.newSub("", s.depth+1), g.newSub("", s.depth+1)
		c.called = []graph.SubgraphIndex{cond.idx, body.idx}
		g.inputs(cond, c.ins)
		for range g.r.IntN(2) {
			g.ordinary(cond, nil)
		}
		b := g.addTensor(cond, "cond", spec{typ: graph.Bool, shape: []int32{}})
		cond.sg.Tensors[b].Buffer = 0
		g.addOp(cond, graph.Op{Code: 58, CodeName: "LESS", Inputs: []graph.TensorID{g.operand(cond), g.operand(cond)}, Outputs: []graph.TensorID{b}})
		cond.sg.Outputs = []graph.TensorID{b}
		g.inputs(body, c.ins)
		g.fill(body, g.r.IntN(g.cfg.Ops/2+1))
		g.outputs(body, c.outs)
		g.callees = append(g.callees, c)
	default:
		g.ordinary(s, nil)
		return
	}
	op.Called = c.called
	op.Outputs = g.results(s, c.outs)
	g.addOp(s, op)
}

// boolValue returns a BOOL tensor of s, new or existing.
func (g *gen) boolValue(s *sub) graph.TensorID {
	if g.chance(0.3) {
		for _, v := range slices.Backward(s.values) {
			if s.sg.Tensors[v].Type == graph.Bool && s.sg.Tensors[v].Size > 0 {
				return v
			}
		}
	}
	shape := []int32{}
	if g.chance(0.5) {
		shape = []int32{1}
	}
	b := g.addTensor(s, "pred", spec{typ: graph.Bool, shape: shape})
	g.addOp(s, graph.Op{Code: 61, CodeName: "GREATER", Inputs: []graph.TensorID{g.operand(s), g.operand(s)}, Outputs: []graph.TensorID{b}})
	s.values = append(s.values, b)
	return b
}

// ifOp adds an IF operator, with new branches or earlier ones.
func (g *gen) ifOp(s *sub) {
	op := graph.Op{Code: graph.If, CodeName: "IF"}
	c, ok := g.reuse(s, graph.If, 2)
	switch {
	case ok:
		pred := g.boolValue(s)
		op.Inputs = append([]graph.TensorID{pred}, g.satisfy(s, c.ins)...)
	case g.room(2) && s.depth+1 <= g.cfg.MaxDepth:
		pred := g.boolValue(s)
		args := g.operands(s, 1+g.r.IntN(3))
		op.Inputs = append([]graph.TensorID{pred}, args...)
		c = callee{code: graph.If, ins: g.specs(s, args)}
		for _, in := range c.ins {
			if in.res == nil && g.chance(0.5) {
				c.outs = append(c.outs, in)
			} else {
				c.outs = append(c.outs, g.randomSpec(true))
			}
		}
		then, els := g.newSub("", s.depth+1), g.newSub("", s.depth+1)
		c.called = []graph.SubgraphIndex{then.idx, els.idx}
		for _, br := range []*sub{then, els} {
			g.inputs(br, c.ins)
			g.fill(br, g.r.IntN(g.cfg.Ops/2+1))
			for _, sp := range c.outs {
				br.sg.Outputs = append(br.sg.Outputs, g.produce(br, sp, br.sg.Outputs))
			}
		}
		g.callees = append(g.callees, c)
	default:
		g.ordinary(s, nil)
		return
	}
	op.Called = c.called
	op.Outputs = g.results(s, c.outs)
	g.addOp(s, op)
}

// fill adds n random operators to s.
func (g *gen) fill(s *sub, n int) {
	for range n {
		switch p := g.r.Float64(); {
		case p < 0.08:
			g.while(s)
		case p < 0.15:
			g.ifOp(s)
		case p < 0.17:
			g.callOnce(s)
		case p < 0.3:
			g.variableOp(s)
		case p < 0.47:
			g.view(s)
		case p < 0.55:
			g.window(s)
		case p < 0.61:
			g.rewrite(s)
		default:
			g.ordinary(s, nil)
		}
	}
}

// window adds a chain of one to three sliding-window operators (CONV_2D,
// DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D) with consistent NHWC
// shapes, options and filters, as TFLM computes them, on a new value an
// ordinary operator writes: the operators in-place contracts apply to.
func (g *gen) window(s *sub) {
	typ := []graph.ElementType{graph.Int8, graph.Float32}[g.r.IntN(2)]
	shape := []int32{1, int32(1 + g.r.IntN(8)), int32(1 + g.r.IntN(8)), int32(1 + g.r.IntN(4))}
	prev := g.ordinary(s, []spec{{typ: typ, shape: shape}})[0]
	filterType := graph.Int8
	if typ == graph.Float32 {
		filterType = graph.Float32
	}
	for range 1 + g.r.IntN(3) {
		codes := []struct {
			code graph.Opcode
			name string
		}{{graph.Conv2D, "CONV_2D"}, {graph.DepthwiseConv2D, "DEPTHWISE_CONV_2D"},
			{graph.AveragePool2D, "AVERAGE_POOL_2D"}, {graph.MaxPool2D, "MAX_POOL_2D"}}
		c := codes[g.r.IntN(len(codes))]
		w := &graph.Window{Padding: graph.Padding(g.r.IntN(2)), StrideW: int32(1 + g.r.IntN(2)), StrideH: int32(1 + g.r.IntN(2)),
			DilationW: 1, DilationH: 1}
		fh, fw := int32(1+g.r.IntN(3)), int32(1+g.r.IntN(3))
		inC, outC := shape[3], shape[3]
		op := graph.Op{Code: c.code, CodeName: c.name, Inputs: []graph.TensorID{prev}, Window: w}
		switch c.code {
		case graph.Conv2D:
			w.DilationW, w.DilationH = int32(1+g.r.IntN(2)), int32(1+g.r.IntN(2))
			outC = int32(1 + g.r.IntN(4))
			op.Inputs = append(op.Inputs, g.constant(s, spec{typ: filterType, shape: []int32{outC, fh, fw, inC}}))
		case graph.DepthwiseConv2D:
			w.DilationW, w.DilationH = int32(1+g.r.IntN(2)), int32(1+g.r.IntN(2))
			w.DepthMultiplier = int32(1 + g.r.IntN(2))
			outC = inC * w.DepthMultiplier
			op.Inputs = append(op.Inputs, g.constant(s, spec{typ: filterType, shape: []int32{1, fh, fw, outC}}))
		default:
			w.FilterH, w.FilterW = fh, fw
		}
		outSize := func(in, f, stride, dilation int32) int32 {
			if w.Padding == graph.PaddingSame {
				return (in + stride - 1) / stride
			}
			return (in + stride - ((f-1)*dilation + 1)) / stride
		}
		oh, ow := outSize(shape[1], fh, w.StrideH, w.DilationH), outSize(shape[2], fw, w.StrideW, w.DilationW)
		if oh < 1 || ow < 1 {
			return
		}
		shape = []int32{1, oh, ow, outC}
		prev = g.addTensor(s, "w", spec{typ: typ, shape: shape})
		op.Outputs = []graph.TensorID{prev}
		s.values = append(s.values, prev)
		g.addOp(s, op)
	}
}

// fillEntry builds an entry subgraph: inputs, operators (often starting
// with a CALL_ONCE) and outputs, which sometimes include an input or a
// view's output.
func (g *gen) fillEntry(s *sub) {
	var ins []spec
	for range 1 + g.r.IntN(3) {
		sp := g.randomSpec(true)
		if len(sp.shape) > 0 && g.chance(0.2) {
			sp.sig = slices.Clone(sp.shape)
			sp.sig[0] = -1 // batch
		}
		ins = append(ins, sp)
	}
	g.inputs(s, ins)
	if g.chance(0.4) {
		g.callOnce(s)
	}
	g.fill(s, 1+g.r.IntN(g.cfg.Ops))
	if len(s.values) == len(s.sg.Inputs) {
		g.ordinary(s, nil)
	}
	for range 1 + g.r.IntN(2) {
		var out graph.TensorID
		switch {
		case g.chance(0.15):
			out = s.sg.Inputs[g.r.IntN(len(s.sg.Inputs))]
		case len(s.views) > 0 && g.chance(0.15):
			out = s.views[g.r.IntN(len(s.views))]
		default:
			out = s.values[len(s.values)-1-g.r.IntN(min(len(s.values), 4))]
		}
		if !slices.Contains(s.sg.Outputs, out) {
			s.sg.Outputs = append(s.sg.Outputs, out)
		}
	}
}
