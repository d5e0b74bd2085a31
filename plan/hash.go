package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Hash returns a hex SHA-256 over the plan's layout: every arena (kind,
// memory, size, alignment, staging) and every allocation (tensor, arena,
// offset, size). Two plans with the same hash put every tensor at the same
// place, so firmware can check that generated sources match a plan.
func (p *Plan) Hash() string {
	h := sha256.New()
	fmt.Fprintf(h, "heliac-plan-v1 align=%d\n", p.Alignment)
	for i, a := range p.Arenas {
		fmt.Fprintf(h, "arena %d %s %s size=%d align=%d src=%s staged=%t\n",
			i, a.Kind, a.Memory, a.Size, a.Alignment, a.SourceMemory, a.Staged)
	}
	for _, a := range p.Allocs {
		fmt.Fprintf(h, "tensor %d:%d arena=%d offset=%d size=%d\n",
			a.Ref.Subgraph, a.Ref.Tensor, a.Arena, a.Offset, a.Size)
		if a.AliasOf != nil {
			fmt.Fprintf(h, "alias %v\n", *a.AliasOf)
		}
	}
	for _, v := range p.Variables {
		fmt.Fprintf(h, "variable %q %q arena=%d offset=%d size=%d\n",
			v.Name.Container, v.Name.SharedName, v.Arena, v.Offset, v.Size)
	}
	return hex.EncodeToString(h.Sum(nil))
}
