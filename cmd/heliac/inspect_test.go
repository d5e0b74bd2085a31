package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/internal/corpus"
)

// TestInspectAgreesWithManifest runs `heliac inspect --json` on every corpus
// model and compares subgraph, tensor and operator counts with MANIFEST.tsv.
func TestInspectAgreesWithManifest(t *testing.T) {
	for _, e := range corpus.Manifest(t) {
		t.Run(e.File, func(t *testing.T) {
			code, stdout, stderr := runHeliac("inspect", "--json", e.Path)
			require.Equal(t, exitOK, code, stderr)
			var m struct {
				Subgraphs []struct {
					Tensors   []json.RawMessage `json:"tensors"`
					Operators []json.RawMessage `json:"operators"`
				} `json:"subgraphs"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &m))
			tensors, ops := 0, 0
			for _, sg := range m.Subgraphs {
				tensors += len(sg.Tensors)
				ops += len(sg.Operators)
			}
			assert.Len(t, m.Subgraphs, e.Subgraphs, "subgraphs")
			assert.Equal(t, e.Tensors, tensors, "tensors")
			assert.Equal(t, e.Operators, ops, "operators")
		})
	}
}
