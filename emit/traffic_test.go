package emit_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/plan"
)

// TestBankTrafficOutputs checks the per-bank traffic in the summary,
// plan.json and the report on hello_world_int8, three FULLY_CONNECTED
// layers 1 -> 16 -> 16 -> 1 (INT8): per inference they read 1+16+16 = 33
// bytes of activations and write 16+16+1 = 33, and read their weights
// (16, 256, 16) and INT32 biases (64, 64, 4): 420 bytes of constants.
// Staged into SRAM the constants take one image: the six buffers padded
// to 16 bytes, 16+64+256+64+16+16 = 432.
func TestBankTrafficOutputs(t *testing.T) {
	m := readModel(t, filepath.Join("..", "testdata", "models", "hello_world_int8.tflite"))
	tests := []struct {
		name    string
		rules   []plan.Rule
		summary string
		entries []map[string]int64
		row     string
	}{
		{name: "cold constants", summary: "traffic per inference (read/written, an estimate): SRAM 33/33 B, FLASH 420/0 B\n",
			entries: []map[string]int64{{"read": 33, "written": 33}, {"read": 420, "written": 0}},
			row:     "<tr><td>FLASH</td><td>420</td><td>0</td><td>0</td><td>0</td></tr>"},
		{name: "staged constants", rules: []plan.Rule{{Class: "constant", Memory: "SRAM", Source: "FLASH"}},
			summary: "traffic per inference (read/written, an estimate): SRAM 453/33 B; staging once: 432 B into SRAM from FLASH\n",
			entries: []map[string]int64{{"read": 453, "written": 33, "staging_written": 432}, {"read": 0, "written": 0, "staging_read": 432}},
			row:     "<tr><td>SRAM</td><td>453</td><td>33</td><td>0</td><td>432</td></tr>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := buildPlanWith(t, m, plan.Options{Rules: tt.rules})
			assert.Contains(t, string(emit.Summary(m, p)), "  "+tt.summary)
			js, err := emit.JSON(m, p, emit.Meta{ModelName: "hello", Subgraphs: 1, Version: "test"})
			require.NoError(t, err)
			var doc struct {
				BankTraffic []map[string]any `json:"bank_traffic"`
			}
			require.NoError(t, json.Unmarshal(js, &doc))
			require.Len(t, doc.BankTraffic, len(tt.entries))
			for i, want := range tt.entries {
				assert.Equal(t, []string{"SRAM", "FLASH"}[i], doc.BankTraffic[i]["bank"])
				got := map[string]int64{}
				for k, v := range doc.BankTraffic[i] {
					if f, ok := v.(float64); ok {
						got[k] = int64(f)
					}
				}
				assert.Equal(t, want, got, "bank_traffic[%d]", i)
			}
			assert.Contains(t, string(emit.Report(m, p, emit.Meta{ModelName: "hello"})), tt.row)
		})
	}
}
