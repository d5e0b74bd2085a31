package tflite

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
)

// modelsDir holds the models shared by every package's tests.
const modelsDir = "../testdata/models"

// namedFile is a test input and the name tests report it under.
type namedFile struct {
	name string
	data []byte
}

// testModels reads testdata/models/*.tflite in name order.
func testModels(tb testing.TB) []namedFile {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(modelsDir, "*.tflite"))
	require.NoError(tb, err)
	require.NotEmpty(tb, paths, "no models in %s", modelsDir)
	sort.Strings(paths)
	out := make([]namedFile, 0, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(tb, err)
		out = append(out, namedFile{name: filepath.Base(p), data: data})
	}
	return out
}

// checkInvariants re-checks, without trusting the loader, what a loaded
// model promises its readers: every index in range, no call cycles, sizes
// that agree with shapes, and constant data that fits in the file.
func checkInvariants(m *graph.Model, fileSize int) error {
	if len(m.Subgraphs) == 0 {
		return fmt.Errorf("no subgraphs")
	}
	nb := len(m.Buffers)
	for i, b := range m.Buffers {
		if len(b.Data) > fileSize {
			return fmt.Errorf("buffers[%d]: %d bytes in a %d-byte file", i, len(b.Data), fileSize)
		}
		if cap(b.Data) != len(b.Data) {
			return fmt.Errorf("buffers[%d]: capacity %d exceeds length %d", i, cap(b.Data), len(b.Data))
		}
	}
	ns := len(m.Subgraphs)
	for si, sg := range m.Subgraphs {
		nt := len(sg.Tensors)
		inRange := func(what string, ids []graph.TensorID, optional bool) error {
			for i, id := range ids {
				if (id < 0 && !(optional && id == graph.NoTensor)) || int(id) >= nt {
					return fmt.Errorf("subgraphs[%d].%s[%d]: tensor %d out of range [0, %d)", si, what, i, id, nt)
				}
			}
			return nil
		}
		if err := inRange("inputs", sg.Inputs, false); err != nil {
			return err
		}
		if err := inRange("outputs", sg.Outputs, false); err != nil {
			return err
		}
		for ti := range sg.Tensors {
			if err := checkTensor(&sg.Tensors[ti], nb); err != nil {
				return fmt.Errorf("subgraphs[%d].tensors[%d]: %v", si, ti, err)
			}
		}
		for oi := range sg.Ops {
			op := &sg.Ops[oi]
			p := fmt.Sprintf("operators[%d]", oi)
			if op.Name() == "" {
				return fmt.Errorf("subgraphs[%d].%s: empty name", si, p)
			}
			for _, e := range []error{
				inRange(p+".inputs", op.Inputs, true),
				inRange(p+".outputs", op.Outputs, false),
				inRange(p+".intermediates", op.Intermediates, false),
			} {
				if e != nil {
					return e
				}
			}
			for _, c := range op.Called {
				if c <= 0 || int(c) >= ns {
					return fmt.Errorf("subgraphs[%d].%s: calls subgraph %d of %d", si, p, c, ns)
				}
			}
			if op.Code == graph.VarHandle && op.Resource == nil {
				return fmt.Errorf("subgraphs[%d].%s: VAR_HANDLE without a resource name", si, p)
			}
		}
	}
	if err := acyclic(m); err != nil {
		return err
	}
	for i, md := range m.Metadata {
		if md.Buffer < 0 || int(md.Buffer) >= nb {
			return fmt.Errorf("metadata[%d]: buffer %d out of range [0, %d)", i, md.Buffer, nb)
		}
	}
	for i, sig := range m.Signatures {
		if sig.Subgraph < 0 || int(sig.Subgraph) >= ns {
			return fmt.Errorf("signature_defs[%d]: subgraph %d out of range [0, %d)", i, sig.Subgraph, ns)
		}
		nt := len(m.Subgraphs[sig.Subgraph].Tensors)
		for _, st := range append(append([]graph.SignatureTensor(nil), sig.Inputs...), sig.Outputs...) {
			if st.Tensor < 0 || int(st.Tensor) >= nt {
				return fmt.Errorf("signature_defs[%d]: tensor %d out of range [0, %d)", i, st.Tensor, nt)
			}
		}
	}
	return nil
}

func checkTensor(t *graph.Tensor, nb int) error {
	if !t.Type.Valid() {
		return fmt.Errorf("invalid type %d", t.Type)
	}
	if t.Buffer < 0 || int(t.Buffer) >= nb {
		return fmt.Errorf("buffer %d out of range [0, %d)", t.Buffer, nb)
	}
	if t.Size < 0 {
		return fmt.Errorf("negative size %d", t.Size)
	}
	n := int64(1)
	for _, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("negative dimension in shape %v", t.Shape)
		}
		if d > 0 && n > graph.MaxElements/int64(d) {
			return fmt.Errorf("shape %v has more than %d elements", t.Shape, int64(graph.MaxElements))
		}
		n *= int64(d)
	}
	if t.Type.Bits() > 0 {
		want, err := graph.ByteSize(t.Type, t.Shape)
		if err != nil {
			return err
		}
		if want != t.Size {
			return fmt.Errorf("size %d, shape %v of %s gives %d", t.Size, t.Shape, t.Type, want)
		}
	}
	return nil
}

// acyclic reports a call cycle through Op.Called, found by its own
// iterative walk rather than the loader's.
func acyclic(m *graph.Model) error {
	// Kahn's algorithm on the call graph: a cycle leaves nodes unremoved.
	ns := len(m.Subgraphs)
	indeg := make([]int, ns)
	calls := make([][]graph.SubgraphIndex, ns)
	for s, sg := range m.Subgraphs {
		for _, op := range sg.Ops {
			for _, c := range op.Called {
				calls[s] = append(calls[s], c)
				indeg[c]++
			}
		}
	}
	var queue []int
	for s, d := range indeg {
		if d == 0 {
			queue = append(queue, s)
		}
	}
	removed := 0
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		removed++
		for _, c := range calls[s] {
			if indeg[c]--; indeg[c] == 0 {
				queue = append(queue, int(c))
			}
		}
	}
	if removed != ns {
		return fmt.Errorf("call graph has a cycle (%d of %d subgraphs on or behind it)", ns-removed, ns)
	}
	return nil
}
