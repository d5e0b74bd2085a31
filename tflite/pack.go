package tflite

import (
	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/heliac/heliac/tflite/schema"
)

// The object API's Pack (flatc --gen-object-api, tflite/schema) writes
// every field of every table, but ignores force_align: it writes byte
// vectors 4-byte aligned. The schema asks for 16 on Buffer.data and
// CustomQuantization.custom (the TFLite converter writes them so, and
// kernels may rely on it). So the tables on the path from the root to
// those two vectors, and only those, are written here:
//
//	Model ─ buffers ─ Buffer.data                      (16)
//	  └ subgraphs ─ SubGraph ─ tensors ─ Tensor
//	      └ quantization ─ QuantizationParameters
//	          └ details ─ CustomQuantization.custom    (16)
//
// Everything else (operator codes, operators and their options, sparsity,
// metadata, signature defs, external buffer groups, ...) is written by
// the generated Pack. The other force_align in the schema, 4 on the
// values of Uint16Vector and Uint8Vector, holds for every vector the
// builder writes, since a vector's length word is 4-byte aligned and its
// contents follow it.
//
// Each function below writes every field of its type's T struct, in the
// order of the generated Pack; pack_test.go fills every field of every
// table and checks that UnPack gives them all back.

// forceAlign is the alignment schema.fbs gives Buffer.data and
// CustomQuantization.custom.
const forceAlign = 16

func packModel(t *schema.ModelT, b *flatbuffers.Builder) flatbuffers.UOffsetT {
	operatorCodes := packTables(b, t.OperatorCodes, (*schema.OperatorCodeT).Pack)
	subgraphs := packTables(b, t.Subgraphs, packSubGraph)
	description := b.CreateString(t.Description)
	buffers := packTables(b, t.Buffers, packBuffer)
	metadataBuffer := packInt32s(b, t.MetadataBuffer)
	metadata := packTables(b, t.Metadata, (*schema.MetadataT).Pack)
	signatureDefs := packTables(b, t.SignatureDefs, (*schema.SignatureDefT).Pack)
	externalBufferGroups := packTables(b, t.ExternalBufferGroups, (*schema.ExternalBufferGroupT).Pack)
	externalBuffers := packTables(b, t.ExternalBuffers, (*schema.ExternalBufferT).Pack)
	schema.ModelStart(b)
	schema.ModelAddVersion(b, t.Version)
	schema.ModelAddOperatorCodes(b, operatorCodes)
	schema.ModelAddSubgraphs(b, subgraphs)
	schema.ModelAddDescription(b, description)
	schema.ModelAddBuffers(b, buffers)
	schema.ModelAddMetadataBuffer(b, metadataBuffer)
	schema.ModelAddMetadata(b, metadata)
	schema.ModelAddSignatureDefs(b, signatureDefs)
	schema.ModelAddExternalBufferGroups(b, externalBufferGroups)
	schema.ModelAddExternalBuffers(b, externalBuffers)
	return schema.ModelEnd(b)
}

func packSubGraph(t *schema.SubGraphT, b *flatbuffers.Builder) flatbuffers.UOffsetT {
	tensors := packTables(b, t.Tensors, packTensor)
	inputs := packInt32s(b, t.Inputs)
	outputs := packInt32s(b, t.Outputs)
	operators := packTables(b, t.Operators, (*schema.OperatorT).Pack)
	name := b.CreateString(t.Name)
	schema.SubGraphStart(b)
	schema.SubGraphAddTensors(b, tensors)
	schema.SubGraphAddInputs(b, inputs)
	schema.SubGraphAddOutputs(b, outputs)
	schema.SubGraphAddOperators(b, operators)
	schema.SubGraphAddName(b, name)
	schema.SubGraphAddDebugMetadataIndex(b, t.DebugMetadataIndex)
	return schema.SubGraphEnd(b)
}

func packTensor(t *schema.TensorT, b *flatbuffers.Builder) flatbuffers.UOffsetT {
	shape := packInt32s(b, t.Shape)
	name := b.CreateString(t.Name)
	quantization := packQuantization(t.Quantization, b)
	sparsity := t.Sparsity.Pack(b)
	shapeSignature := packInt32s(b, t.ShapeSignature)
	variantTensors := packTables(b, t.VariantTensors, (*schema.VariantSubTypeT).Pack)
	schema.TensorStart(b)
	schema.TensorAddShape(b, shape)
	schema.TensorAddType(b, t.Type)
	schema.TensorAddBuffer(b, t.Buffer)
	schema.TensorAddName(b, name)
	schema.TensorAddQuantization(b, quantization)
	schema.TensorAddIsVariable(b, t.IsVariable)
	schema.TensorAddSparsity(b, sparsity)
	schema.TensorAddShapeSignature(b, shapeSignature)
	schema.TensorAddHasRank(b, t.HasRank)
	schema.TensorAddVariantTensors(b, variantTensors)
	schema.TensorAddExternalBuffer(b, t.ExternalBuffer)
	return schema.TensorEnd(b)
}

func packQuantization(t *schema.QuantizationParametersT, b *flatbuffers.Builder) flatbuffers.UOffsetT {
	if t == nil {
		return 0
	}
	minimum := packFloat32s(b, t.Min)
	maximum := packFloat32s(b, t.Max)
	scale := packFloat32s(b, t.Scale)
	var zeroPoint flatbuffers.UOffsetT
	if t.ZeroPoint != nil {
		b.StartVector(8, len(t.ZeroPoint), 8)
		for i := len(t.ZeroPoint) - 1; i >= 0; i-- {
			b.PrependInt64(t.ZeroPoint[i])
		}
		zeroPoint = b.EndVector(len(t.ZeroPoint))
	}
	var details flatbuffers.UOffsetT
	if t.Details != nil {
		if c, ok := t.Details.Value.(*schema.CustomQuantizationT); ok && t.Details.Type == schema.QuantizationDetailsCustomQuantization {
			details = packCustomQuantization(c, b)
		} else {
			details = t.Details.Pack(b)
		}
	}
	schema.QuantizationParametersStart(b)
	schema.QuantizationParametersAddMin(b, minimum)
	schema.QuantizationParametersAddMax(b, maximum)
	schema.QuantizationParametersAddScale(b, scale)
	schema.QuantizationParametersAddZeroPoint(b, zeroPoint)
	if t.Details != nil {
		schema.QuantizationParametersAddDetailsType(b, t.Details.Type)
	}
	schema.QuantizationParametersAddDetails(b, details)
	schema.QuantizationParametersAddQuantizedDimension(b, t.QuantizedDimension)
	return schema.QuantizationParametersEnd(b)
}

func packCustomQuantization(t *schema.CustomQuantizationT, b *flatbuffers.Builder) flatbuffers.UOffsetT {
	custom := packAlignedBytes(b, t.Custom)
	schema.CustomQuantizationStart(b)
	schema.CustomQuantizationAddCustom(b, custom)
	return schema.CustomQuantizationEnd(b)
}

func packBuffer(t *schema.BufferT, b *flatbuffers.Builder) flatbuffers.UOffsetT {
	data := packAlignedBytes(b, t.Data)
	schema.BufferStart(b)
	schema.BufferAddData(b, data)
	schema.BufferAddOffset(b, t.Offset)
	schema.BufferAddSize(b, t.Size)
	return schema.BufferEnd(b)
}

// packAlignedBytes writes a byte vector whose contents start forceAlign
// bytes aligned from the end of the buffer. The builder then pads the
// whole flatbuffer to a multiple of forceAlign, so they are aligned from
// its start too. A nil slice is left out (offset 0), as the generated
// Pack does.
func packAlignedBytes(b *flatbuffers.Builder, data []byte) flatbuffers.UOffsetT {
	if data == nil {
		return 0
	}
	b.Prep(forceAlign, len(data))
	return b.CreateByteVector(data)
}

// packTables writes each table with pack and a vector of them; a nil
// slice is left out (offset 0), as the generated Pack does.
func packTables[T any](b *flatbuffers.Builder, ts []T, pack func(T, *flatbuffers.Builder) flatbuffers.UOffsetT) flatbuffers.UOffsetT {
	if ts == nil {
		return 0
	}
	offsets := make([]flatbuffers.UOffsetT, len(ts))
	for i, t := range ts {
		offsets[i] = pack(t, b)
	}
	b.StartVector(4, len(offsets), 4)
	for i := len(offsets) - 1; i >= 0; i-- {
		b.PrependUOffsetT(offsets[i])
	}
	return b.EndVector(len(offsets))
}

func packInt32s(b *flatbuffers.Builder, v []int32) flatbuffers.UOffsetT {
	if v == nil {
		return 0
	}
	b.StartVector(4, len(v), 4)
	for i := len(v) - 1; i >= 0; i-- {
		b.PrependInt32(v[i])
	}
	return b.EndVector(len(v))
}

func packFloat32s(b *flatbuffers.Builder, v []float32) flatbuffers.UOffsetT {
	if v == nil {
		return 0
	}
	b.StartVector(4, len(v), 4)
	for i := len(v) - 1; i >= 0; i-- {
		b.PrependFloat32(v[i])
	}
	return b.EndVector(len(v))
}
