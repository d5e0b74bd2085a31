package verify

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// keyKind says which kind of allocation a key names.
type keyKind int8

// Kinds of allocation. The zero keyKind names nothing.
const (
	tensorKey   keyKind = iota + 1 // a tensor_allocs entry
	variableKey                    // a resource_variables entry
	scratchKey                     // a kernel_scratch entry
)

// key identifies an allocation as plan.json refers to it: a tensor by
// subgraph and tensor, a resource variable by container and shared_name,
// kernel scratch by subgraph, operator and index.
type key struct {
	kind     keyKind
	ref      graph.TensorRef
	variable varKey
	op       graph.OpRef
	index    int64
}

func tensorKeyOf(r graph.TensorRef) key { return key{kind: tensorKey, ref: r} }

// String formats the key for messages about references that may not
// resolve.
func (k key) String() string {
	switch k.kind {
	case tensorKey:
		return k.ref.String()
	case variableKey:
		return k.variable.String()
	case scratchKey:
		return fmt.Sprintf("op %v scratch %d", k.op, k.index)
	}
	return "nothing"
}
