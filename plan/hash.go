package plan

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
)

// Hash returns a hex SHA-256 over the plan's layout: every arena (role,
// memory, size, alignment, staging, and its name and provider), every
// allocation (what it is, its arena, offset and size) and the order
// operators run in. Two plans with the same hash put every byte at the
// same place on the same timeline, so firmware can check that generated
// sources match a plan.
//
// A field still at the value a schema_version 1 plan implied (an arena
// named <role>_<memory> and owned by heliac, the model's operator order)
// adds nothing to the hashed text, so such plans keep the hash they had.
//
// The hashed text is made of plan.json's fields alone, so that a reader
// of plan.json (package verify does) can recompute it; docs/plan-format.md
// ("plan_hash") specifies it line by line. A resource variable's names are
// quoted by strconv.QuoteToASCII, which escapes every byte outside
// printable ASCII by fixed rules, so the text depends on no Unicode table.
func (p *Plan) Hash() string {
	// Many short lines: buffered, sha256 sees few writes.
	sum := sha256.New()
	h := bufio.NewWriterSize(sum, 64<<10)
	fmt.Fprintf(h, "heliac-plan-v1 align=%d\n", p.Alignment)
	for _, a := range p.Arenas {
		src := a.Source
		if a.Role == liveness.Constant && !a.Staged() {
			src = a.Memory // a cold arena is its own source
		}
		fmt.Fprintf(h, "arena %d %s %s size=%d align=%d src=%s staged=%t",
			a.ID, a.Role, a.Memory, a.Size, a.Alignment, src, a.Staged())
		if a.Name != DefaultArenaName(a.Role, a.Memory) || a.Provider != Owned {
			fmt.Fprintf(h, " name=%s provider=%s", a.Name, a.Provider)
		}
		if a.Provider == Shared {
			fmt.Fprintf(h, " shared_size=%d", a.SharedSize)
		}
		fmt.Fprintln(h)
	}
	var line []byte
	for _, a := range p.Allocs {
		switch a.Kind {
		case TensorAlloc:
			// The most frequent lines, without fmt: "tensor %d:%d
			// arena=%d offset=%d size=%d\n", then "alias %v[ offset=%d]\n".
			line = append(line[:0], "tensor "...)
			line = strconv.AppendInt(line, int64(a.Ref.Subgraph), 10)
			line = append(line, ':')
			line = strconv.AppendInt(line, int64(a.Ref.Tensor), 10)
			line = append(line, " arena="...)
			line = strconv.AppendInt(line, int64(a.Arena), 10)
			line = append(line, " offset="...)
			line = strconv.AppendInt(line, a.Offset, 10)
			line = append(line, " size="...)
			line = strconv.AppendInt(line, a.Size, 10)
			line = append(line, '\n')
			if a.AliasOf != nil {
				line = append(line, "alias "...)
				line = strconv.AppendInt(line, int64(a.AliasOf.Subgraph), 10)
				line = append(line, ':')
				line = strconv.AppendInt(line, int64(a.AliasOf.Tensor), 10)
				if a.AliasOffset != 0 {
					line = append(line, " offset="...)
					line = strconv.AppendInt(line, a.AliasOffset, 10)
				}
				line = append(line, '\n')
			}
			h.Write(line)
			if ip := a.InPlace; ip != nil {
				fmt.Fprintf(h, "in_place op=%d:%d input=%d:%d contract=%s\n",
					ip.Op.Subgraph, ip.Op.Op, ip.Input.Subgraph, ip.Input.Tensor, strconv.QuoteToASCII(ip.Contract.String()))
			}
			if cp := a.Copy; cp != nil {
				fmt.Fprintf(h, "exact_overlap_copy op=%d:%d with=%d:%d contract=%s\n",
					cp.Op.Subgraph, cp.Op.Op, cp.With.Subgraph, cp.With.Tensor, strconv.QuoteToASCII(cp.Contract.String()))
			}
		case VariableAlloc:
			fmt.Fprintf(h, "variable %s %s arena=%d offset=%d size=%d\n", strconv.QuoteToASCII(a.Variable.Container),
				strconv.QuoteToASCII(a.Variable.SharedName), a.Arena, a.Offset, a.Size)
		default:
			fmt.Fprintf(h, "%s %v/%d arena=%d offset=%d size=%d live=%d..%d\n",
				a.Kind, a.Op, a.Index, a.Arena, a.Offset, a.Size, a.Live.First, a.Live.Last)
		}
	}
	hashOrder(h, p.Schedule.Order)
	h.Flush()
	return hex.EncodeToString(sum.Sum(nil))
}

// hashOrder writes each subgraph's operator order unless it is the model's.
func hashOrder(h io.Writer, order [][]graph.OpIndex) {
	for s, ops := range order {
		for i, o := range ops {
			if int(o) != i {
				fmt.Fprintf(h, "order %d %v\n", s, ops)
				break
			}
		}
	}
}
