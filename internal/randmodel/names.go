package randmodel

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// hostileFragments are pieces of names that no text channel carries as
// they are, and pairs that a lossy or ambiguous escaping would merge.
var hostileFragments = []string{
	"\xff",             // not UTF-8
	`\xff`,             // the escape of the byte above, spelled out
	"\u00ff",           // the character a \u00XX escape of it would give
	"\ufffd",           // what lossy decoders make of an invalid byte
	"\x1b[2J\x1b[31m",  // terminal escape sequences
	"\r\n\t\x00\x7f",   // line breaks, a tab, NUL, DEL
	"\xc2\x9b2J",       // C1 CSI, as UTF-8
	"\xed\xa0\x80",     // an encoded surrogate
	"*/ /* ??/ \\",     // ends C comments, starts a trigraph, splices lines
	"\"\xe2\x80\xae\"", // a quote and a right-to-left override
}

func fragment(i int) string { return hostileFragments[i%len(hostileFragments)] }

// hostileNames appends a hostile fragment to every name of m. Resource
// variables keep one name across the VAR_HANDLE operators that share it,
// and distinct variables stay distinct.
func hostileNames(m *graph.Model) {
	m.Description += fragment(0)
	// Shared names and containers are renamed apart, so that a handle
	// without a container keeps the shared_name of the handles with one.
	shared, containers := map[string]string{}, map[string]string{}
	rename := func(names map[string]string, from, prefix string) string {
		to, ok := names[from]
		if !ok {
			k := len(shared) + len(containers)
			to = fmt.Sprintf("%s%d", prefix, len(names)) + fragment(k)
			names[from] = to
		}
		return to
	}
	for si := range m.Subgraphs {
		sg := &m.Subgraphs[si]
		sg.Name += fragment(si)
		for ti := range sg.Tensors {
			sg.Tensors[ti].Name += fragment(si + ti)
		}
		for oi := range sg.Ops {
			op := &sg.Ops[oi]
			if op.Code == graph.Custom {
				op.CustomName += fragment(si + oi)
			}
			if op.Resource == nil {
				continue
			}
			to := *op.Resource
			to.SharedName = rename(shared, to.SharedName, "v")
			if to.HasContainer {
				to.Container = rename(containers, to.Container, "c")
			}
			op.Resource = &to
		}
	}
	for i := range m.Signatures {
		sig := &m.Signatures[i]
		sig.Key += fragment(i + 4)
		for j := range sig.Inputs {
			sig.Inputs[j].Name = m.Subgraphs[sig.Subgraph].Tensors[sig.Inputs[j].Tensor].Name
		}
		for j := range sig.Outputs {
			sig.Outputs[j].Name = m.Subgraphs[sig.Subgraph].Tensors[sig.Outputs[j].Tensor].Name
		}
	}
}
