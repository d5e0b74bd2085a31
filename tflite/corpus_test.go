package tflite

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/internal/corpus"
)

func TestLoadCorpusMatchesManifest(t *testing.T) {
	for _, e := range corpus.Manifest(t) {
		t.Run(e.File, func(t *testing.T) {
			data, err := os.ReadFile(e.Path)
			require.NoError(t, err)
			m, err := Load(data)
			require.NoError(t, err)
			require.NoError(t, checkInvariants(m, len(data)))
			assert.Len(t, m.Subgraphs, e.Subgraphs, "subgraphs")
			tensors, ops := 0, 0
			hist := map[string]int{}
			for _, sg := range m.Subgraphs {
				tensors += len(sg.Tensors)
				ops += len(sg.Ops)
				for i := range sg.Ops {
					hist[sg.Ops[i].Name()]++
				}
			}
			assert.Equal(t, e.Tensors, tensors, "tensors")
			assert.Equal(t, e.Operators, ops, "operators")
			assert.Equal(t, e.OpSummary, hist, "operator histogram")
		})
	}
}
