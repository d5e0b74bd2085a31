// Package graph is heliac's intermediate representation of a TFLite model:
// subgraphs, tensors, operators and buffers as plain Go values, with every
// index already checked by the loader.
//
// Input: nothing (package tflite builds a Model from a flatbuffer).
// Output: Model and its parts, read by liveness, plan, emit and verify.
// It imports no other heliac package and knows nothing of flatbuffers.
//
// A Model is immutable once built: later stages read it and never change it.
package graph

import "fmt"

// SubgraphIndex indexes Model.Subgraphs. Subgraph 0 is the main graph.
type SubgraphIndex int

// TensorID indexes Subgraph.Tensors. NoTensor marks an omitted optional input.
type TensorID int

// NoTensor is the TensorID of an optional operator input that is not given.
const NoTensor TensorID = -1

// OpIndex indexes Subgraph.Ops, in the order the model lists them (the
// order they run in unless a schedule says otherwise).
type OpIndex int

// BufferIndex indexes Model.Buffers. Buffer 0 is the empty sentinel buffer.
type BufferIndex int

// Model is a whole TFLite model.
type Model struct {
	Version     uint32
	Description string
	Subgraphs   []Subgraph
	Buffers     []Buffer
	Metadata    []Metadata
	Signatures  []Signature
	// Stripes are the regions a rewrite (--patches) runs stripe by
	// stripe, nil for a model as loaded; see StripeRegion.
	Stripes []StripeRegion
}

// Subgraph is one graph of operators over its own tensors.
type Subgraph struct {
	Name    string
	Tensors []Tensor
	Ops     []Op
	Inputs  []TensorID
	Outputs []TensorID
}

// Tensor is one tensor of a subgraph. Size is its byte size computed from
// Type and Shape (for STRING tensors, the length of their constant data, or
// 0 when they have none).
type Tensor struct {
	Name           string
	Type           ElementType
	Shape          []int32
	ShapeSignature []int32 // nil when the model gives none; -1 marks a dynamic dimension
	Buffer         BufferIndex
	IsVariable     bool
	Quantization   *Quantization // nil when the tensor is not quantized
	Size           int64
}

// IsDynamic reports whether the tensor's shape signature has an unknown
// dimension, in which case Shape holds only one concrete instance.
func (t *Tensor) IsDynamic() bool {
	for _, d := range t.ShapeSignature {
		if d < 0 {
			return true
		}
	}
	return false
}

// Quantization holds a tensor's affine quantization parameters.
type Quantization struct {
	Scale          []float32
	ZeroPoint      []int64
	QuantizedDim   int32
	HasCustomQuant bool // the model uses a custom quantization scheme
}

// Op is one operator of a subgraph.
type Op struct {
	Code          Opcode
	CodeName      string     // the builtin operator's name, e.g. "CONV_2D"
	CustomName    string     // set when Code is Custom
	Version       int32      // the operator code's version
	Inputs        []TensorID // NoTensor for an omitted optional input
	Outputs       []TensorID
	Intermediates []TensorID
	// Called lists the subgraphs this operator runs, in the order of its
	// options: WHILE (cond, body), IF (then, else), CALL_ONCE (init),
	// STABLEHLO_COMPOSITE (decomposition).
	Called []SubgraphIndex
	// Resource names the variable of a VAR_HANDLE operator.
	Resource *ResourceName
	// Window holds the options of a sliding-window operator (CONV_2D,
	// DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D, TRANSPOSE_CONV);
	// nil for other operators and for one whose model gives no options.
	Window *Window
	// Options is the operator's builtin_options table, every field
	// included; nil when the file gives none (or one of a type the schema
	// does not know). Options2 is its builtin_options_2 table (the options
	// of newer operators such as STABLEHLO_COMPOSITE), nil when none.
	// Window, Called and Resource describe some of their fields again, as
	// heliac plans by them; Resolved gives the table with those winning.
	Options, Options2 *Options
	// CustomOptions holds the operator's custom_options bytes (inline or in
	// the large_custom_options offset/size form); nil when it has none.
	// Their format is FlexBuffers, the only CustomOptionsFormat the schema
	// defines. They alias the model's bytes and must not be modified.
	CustomOptions []byte
}

// Window is what a sliding-window operator's options say of its window:
// how it pads, strides and dilates, and (pools only) its size.
type Window struct {
	Padding          Padding
	StrideW, StrideH int32
	// DilationW and DilationH are 1 for pools and TRANSPOSE_CONV.
	DilationW, DilationH int32
	// FilterW and FilterH are a pool's window; 0 for convolutions, whose
	// filter tensor's shape gives it.
	FilterW, FilterH int32
	// DepthMultiplier is DEPTHWISE_CONV_2D's; 0 for the others.
	DepthMultiplier int32
}

// Padding is TFLite's Padding enum.
type Padding int8

// The paddings TFLite defines (schema.fbs, Padding).
const (
	PaddingSame  Padding = 0
	PaddingValid Padding = 1
)

// Name returns the operator's name as TFLite spells it, or "CUSTOM:name".
func (o *Op) Name() string {
	if o.Code == Custom {
		return "CUSTOM:" + o.CustomName
	}
	if o.CodeName == "" {
		return fmt.Sprintf("BUILTIN_%d", int32(o.Code))
	}
	return o.CodeName
}

// ResourceName is what a VAR_HANDLE's options name: a resource variable's
// container and shared_name. A container the options leave out differs
// from an empty one, so HasContainer says which: TFLM matches a handle
// without a container to a variable of its shared_name in any container,
// and one with container "" only to the container named "" (see
// liveness.Variable for the rule heliac takes from it). A shared_name left
// out reads as "".
type ResourceName struct {
	Container    string
	SharedName   string
	HasContainer bool // the options give a container, perhaps ""
}

// Buffer is a model buffer. Data is nil for a buffer without contents; it
// aliases the bytes the model was loaded from and must not be modified.
// External is true when the data lives outside the flatbuffer tables
// (the offset/size form of models over 2 GB).
type Buffer struct {
	Data     []byte
	External bool
}

// Metadata is one named metadata entry of the model.
type Metadata struct {
	Name   string
	Buffer BufferIndex
}

// Signature is a named entry point of the model.
type Signature struct {
	Key      string
	Subgraph SubgraphIndex
	Inputs   []SignatureTensor
	Outputs  []SignatureTensor
}

// SignatureTensor binds a signature argument name to a subgraph tensor.
type SignatureTensor struct {
	Name   string
	Tensor TensorID
}

// Tensor returns the tensor with the given id of subgraph s. It panics on
// out-of-range indices, which the loader has already excluded.
func (m *Model) Tensor(s SubgraphIndex, t TensorID) *Tensor {
	return &m.Subgraphs[s].Tensors[t]
}

// TensorRef names a tensor of the whole model.
type TensorRef struct {
	Subgraph SubgraphIndex
	Tensor   TensorID
}

// String formats the reference as "subgraph:tensor".
func (r TensorRef) String() string { return fmt.Sprintf("%d:%d", r.Subgraph, r.Tensor) }

// OpRef names an operator of the whole model.
type OpRef struct {
	Subgraph SubgraphIndex
	Op       OpIndex
}

// String formats the reference as "subgraph:operator".
func (r OpRef) String() string { return fmt.Sprintf("%d:%d", r.Subgraph, r.Op) }

// HasData reports whether the tensor's buffer holds constant data.
func (m *Model) HasData(t *Tensor) bool {
	return t.Buffer > 0 && int(t.Buffer) < len(m.Buffers) && len(m.Buffers[t.Buffer].Data) > 0
}
