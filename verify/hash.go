package verify

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/heliac/heliac/graph"
)

// PlanHash recomputes plan_hash from the other fields of planJSON, as
// docs/plan-format.md ("plan_hash") defines it, without the planner's
// code. It returns the violations that keep planJSON from being read
// instead when there are any.
func PlanHash(planJSON []byte) (string, []Violation) {
	doc, bad := decode(planJSON)
	if doc == nil {
		return "", bad
	}
	return hashOf(doc), nil
}

// checkHash reports a plan_hash that is not the hash of the plan's fields:
// the plan was changed after heliac wrote it, or describes another layout
// than the C sources that carry the hash.
func (c *checker) checkHash() {
	if got := hashOf(c.doc); got != c.doc.planHash {
		c.r.add(HashMismatch, "plan_hash: %q, but the plan's arenas, allocations and schedule hash to %s; "+
			"the plan was changed after it was written", c.doc.planHash, got)
	}
}

// hashOf computes plan_hash: a SHA-256 over one line per arena, one per
// allocation (tensors by (subgraph, tensor), whatever the order of
// tensor_allocs' keys; then resource variables and kernel scratch, in file
// order) and one per subgraph run in an order other than its own.
func hashOf(doc *planDoc) string {
	// Many short lines: buffered, sha256 sees few writes.
	sum := sha256.New()
	h := bufio.NewWriterSize(sum, 64<<10)
	fmt.Fprintf(h, "heliac-plan-v1 align=%d\n", doc.alignment)
	for _, a := range doc.arenas {
		hashArena(h, a)
	}
	var line []byte
	num := func(prefix string, n int64) { line = strconv.AppendInt(append(line, prefix...), n, 10) }
	for _, a := range doc.allocs {
		// "tensor %d:%d arena=%d offset=%d size=%d\n", then
		// "alias %d:%d[ offset=%d]\n": the most frequent lines, without fmt.
		line = line[:0]
		num("tensor ", int64(a.ref.Subgraph))
		num(":", int64(a.ref.Tensor))
		num(" arena=", a.arena)
		num(" offset=", a.offset)
		num(" size=", a.size)
		line = append(line, '\n')
		if a.aliasOf != nil {
			num("alias ", int64(a.aliasOf.Subgraph))
			num(":", int64(a.aliasOf.Tensor))
			if a.aliasOffset != nil && *a.aliasOffset != 0 {
				num(" offset=", *a.aliasOffset)
			}
			line = append(line, '\n')
		}
		h.Write(line)
		if ip := a.inPlace; ip != nil {
			fmt.Fprintf(h, "in_place op=%d:%d input=%d:%d contract=%s\n",
				ip.op.Subgraph, ip.op.Op, ip.input.Subgraph, ip.input.Tensor, strconv.QuoteToASCII(ip.contract))
		}
		if cp := a.copy; cp != nil {
			fmt.Fprintf(h, "exact_overlap_copy op=%d:%d with=%d:%d contract=%s\n",
				cp.op.Subgraph, cp.op.Op, cp.with.Subgraph, cp.with.Tensor, strconv.QuoteToASCII(cp.contract))
		}
	}
	for _, v := range doc.variables {
		fmt.Fprintf(h, "variable %s %s arena=%d offset=%d size=%d\n",
			strconv.QuoteToASCII(v.container), strconv.QuoteToASCII(v.shared), v.arena, v.offset, v.size)
	}
	for _, k := range doc.kernel {
		fmt.Fprintf(h, "kernel_scratch %d:%d/%d arena=%d offset=%d size=%d live=%d..%d\n",
			k.op.Subgraph, k.op.Op, k.index, k.arena, k.offset, k.size, k.start, k.end)
	}
	subgraphs, order := firstRuns(doc.schedule)
	for _, s := range subgraphs {
		ops := order[s]
		for i, o := range ops {
			if int(o) != i {
				fmt.Fprintf(h, "order %d %s\n", s, opList(ops))
				break
			}
		}
	}
	h.Flush()
	return hex.EncodeToString(sum.Sum(nil))
}

// hashArena writes an arena's line. The name and provider are written only
// when they are not the defaults, <role>_<memory as a C name> and "owned".
func hashArena(w io.Writer, a arenaRec) {
	// A cold constant arena's source_memory is its memory, so these are
	// the figures schema_version 3 hashed (its null source then).
	staged := a.staged()
	src := ""
	if a.source != nil {
		src = *a.source
	}
	fmt.Fprintf(w, "arena %d %s %s size=%d align=%d src=%s staged=%t", a.id, a.role, a.memory, a.size, a.alignment, src, staged)
	if a.name != defaultArenaName(a.role, a.memory) || a.provider != "owned" {
		fmt.Fprintf(w, " name=%s provider=%s", a.name, a.provider)
	}
	if a.provider == "shared" {
		fmt.Fprintf(w, " shared_size=%d", a.sharedSize)
	}
	fmt.Fprintln(w)
}

// defaultArenaName is the name an arena of role in memory has unless it is
// given another: the role, then '_' and the memory as a C name part
// (lower-case letters and digits, every other run of bytes one '_', none
// at either end) unless that is empty.
func defaultArenaName(role, memory string) string {
	var b strings.Builder
	gap := false
	for i := 0; i < len(memory); i++ {
		c := memory[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteByte(c)
			gap = false
			continue
		}
		gap = true
	}
	if b.Len() == 0 {
		return role
	}
	return role + "_" + b.String()
}

// firstRuns returns the subgraphs the schedule runs, in index order, and
// for each the operators of its first run in the order they run: its
// entries in schedule order up to the first operator that runs again.
func firstRuns(schedule []run) ([]graph.SubgraphIndex, map[graph.SubgraphIndex][]graph.OpIndex) {
	order := map[graph.SubgraphIndex][]graph.OpIndex{}
	ran := map[graph.OpRef]bool{}
	done := map[graph.SubgraphIndex]bool{}
	for _, r := range schedule {
		s := r.op.Subgraph
		switch {
		case done[s]:
		case ran[r.op]:
			done[s] = true
		default:
			ran[r.op] = true
			order[s] = append(order[s], r.op.Op)
		}
	}
	return slices.Sorted(maps.Keys(order)), order
}

// opList formats operator indices as Go formats a slice of them: "[0 2 1]".
func opList(ops []graph.OpIndex) string {
	parts := make([]string, len(ops))
	for i, o := range ops {
		parts[i] = strconv.Itoa(int(o))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
