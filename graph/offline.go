package graph

import (
	"encoding/binary"
	"fmt"
)

// OfflinePlanName is the name of the model metadata that TensorFlow Lite
// Micro reads an offline memory plan from.
const OfflinePlanName = "OfflineMemoryAllocation"

// ReadOfflinePlan decodes OfflineMemoryAllocation metadata data: its
// version word, the number of subgraphs, and one offset per tensor of every
// subgraph, -1 for a tensor TFLM places itself. TFLM reads the count and
// the offsets and ignores the version (Vela writes 0, heliac 1). It returns
// an error for data that holds no such list.
func ReadOfflinePlan(data []byte) (version, subgraphs int, offsets []int32, err error) {
	if len(data) < 12 || len(data)%4 != 0 {
		return 0, 0, nil, fmt.Errorf("offline plan: %d bytes, want 3 or more int32 words", len(data))
	}
	word := func(i int) int32 { return int32(binary.LittleEndian.Uint32(data[4*i:])) }
	n := int(word(2))
	if n < 0 || 3+n != len(data)/4 {
		return 0, 0, nil, fmt.Errorf("offline plan: says %d tensors, but holds %d offsets", n, len(data)/4-3)
	}
	offsets = make([]int32, n)
	for i := range offsets {
		offsets[i] = word(3 + i)
	}
	return int(word(0)), int(word(1)), offsets, nil
}

// PlanInfoName is the name of the model metadata in which heliac records,
// in a model it writes with its plan (--emit-tflite), what the plan was
// made for: the kernel library and code path, the kernel builds whose
// contracts it holds to, the TFLM target, the plan's hash. The entry is
// UTF-8 text, one "key=value" a line; TFLM ignores it.
const PlanInfoName = "heliac_plan"
