package graph

import "fmt"

// ElementType is a tensor element type, numbered as TFLite numbers them.
type ElementType int8

// Element types, with TFLite's numbering.
const (
	Float32     ElementType = 0
	Float16     ElementType = 1
	Int32       ElementType = 2
	Uint8       ElementType = 3
	Int64       ElementType = 4
	String      ElementType = 5
	Bool        ElementType = 6
	Int16       ElementType = 7
	Complex64   ElementType = 8
	Int8        ElementType = 9
	Float64     ElementType = 10
	Complex128  ElementType = 11
	Uint64      ElementType = 12
	Resource    ElementType = 13
	Variant     ElementType = 14
	Uint32      ElementType = 15
	Uint16      ElementType = 16
	Int4        ElementType = 17
	BFloat16    ElementType = 18
	Int2        ElementType = 19
	Uint4       ElementType = 20
	Float8E4M3  ElementType = 21
	Float8E5M2  ElementType = 22
	maxElemType             = Float8E5M2
)

var elementTypeInfo = [...]struct {
	name string
	bits int64
}{
	Float32: {"FLOAT32", 32}, Float16: {"FLOAT16", 16}, Int32: {"INT32", 32},
	Uint8: {"UINT8", 8}, Int64: {"INT64", 64}, String: {"STRING", 0},
	Bool: {"BOOL", 8}, Int16: {"INT16", 16}, Complex64: {"COMPLEX64", 64},
	Int8: {"INT8", 8}, Float64: {"FLOAT64", 64}, Complex128: {"COMPLEX128", 128},
	Uint64: {"UINT64", 64}, Resource: {"RESOURCE", 0}, Variant: {"VARIANT", 0},
	Uint32: {"UINT32", 32}, Uint16: {"UINT16", 16}, Int4: {"INT4", 4},
	BFloat16: {"BFLOAT16", 16}, Int2: {"INT2", 2}, Uint4: {"UINT4", 4},
	Float8E4M3: {"FLOAT8_E4M3FN", 8}, Float8E5M2: {"FLOAT8_E5M2", 8},
}

// Valid reports whether t is an element type heliac knows.
func (t ElementType) Valid() bool { return t >= 0 && t <= maxElemType }

// String returns TFLite's name for the type.
func (t ElementType) String() string {
	if !t.Valid() {
		return fmt.Sprintf("TYPE_%d", int(t))
	}
	return elementTypeInfo[t].name
}

// Bits returns the width of one element in bits, or 0 for types without a
// fixed width (STRING, RESOURCE, VARIANT).
func (t ElementType) Bits() int64 {
	if !t.Valid() {
		return 0
	}
	return elementTypeInfo[t].bits
}

// Opcode is a TFLite builtin operator code, numbered as TFLite numbers them.
// Only the codes heliac treats specially are named here; the loader records
// every operator's name in Op.CodeName.
type Opcode int32

// Builtin operator codes that change how memory is planned.
const (
	AveragePool2D      Opcode = 1
	Conv2D             Opcode = 3
	DepthwiseConv2D    Opcode = 4
	MaxPool2D          Opcode = 17
	TransposeConv      Opcode = 67
	Reshape            Opcode = 22
	Squeeze            Opcode = 43
	ExpandDims         Opcode = 70
	Custom             Opcode = 32
	If                 Opcode = 118
	While              Opcode = 119
	CallOnce           Opcode = 129
	VarHandle          Opcode = 142
	ReadVariable       Opcode = 143
	AssignVariable     Opcode = 144
	StablehloComposite Opcode = 206
	Bitcast            Opcode = 159
)

// MaxElements is the largest element count heliac accepts for one tensor;
// larger shapes are rejected as corrupt rather than overflowing sizes.
const MaxElements = 1 << 40

// ByteSize returns the number of bytes a dense tensor of the given type and
// shape occupies (sub-byte types packed, rounded up to whole bytes), or an
// error for negative dimensions or absurd sizes. Types without a fixed width
// give 0.
func ByteSize(t ElementType, shape []int32) (int64, error) {
	n := int64(1)
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("dimension %d is %d", i, d)
		}
		// Checked before multiplying, so the product cannot overflow.
		if d > 0 && n > MaxElements/int64(d) {
			return 0, fmt.Errorf("%v has more than %d elements", shape[:i+1], int64(MaxElements))
		}
		n *= int64(d)
	}
	return (n*t.Bits() + 7) / 8, nil
}
