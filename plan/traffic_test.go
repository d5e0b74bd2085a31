package plan_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/plan"
	"github.com/heliac/heliac/traffic"
)

// TestBankTraffic checks each bank's bytes on diamond, worked out by hand:
// per inference op0 reads in (40 B) and writes a (100) and b (20); op1
// reads a, w (12) and odd (5) and writes c (8); op2 reads b, c, w_again
// (12) and state (12) and writes out (4). Scratch and state: read
// 40+100+20+8+12 = 180, written 100+20+8+4 = 132; constants: read
// 12+12+5 = 29.
func TestBankTraffic(t *testing.T) {
	b := func(r, w int64) traffic.Bytes { return traffic.Bytes{Read: r, Written: w} }
	tests := []struct {
		name  string
		dtcm  int64
		rules []plan.Rule
		want  []plan.BankTraffic
	}{
		{name: "constants read in place count against their cold bank",
			want: []plan.BankTraffic{{Bank: "DTCM", PerInference: b(180, 132)}, {Bank: "FLASH", PerInference: b(29, 0)}}},
		{name: "staged constants count against the bank they are staged into; the copy once",
			rules: []plan.Rule{{Class: "constant", Memory: "SRAM", Source: "FLASH"}},
			// The image: w and w_again share one 12-byte copy, padded to
			// 16, then odd's 5 bytes: 21, padded to 32.
			want: []plan.BankTraffic{{Bank: "DTCM", PerInference: b(180, 132)}, {Bank: "SRAM", PerInference: b(29, 0), Staging: b(0, 32)},
				{Bank: "FLASH", Staging: b(32, 0)}}},
		{name: "a spilled tensor takes its bytes with it", dtcm: 128,
			// a (read 100, written 100) spills to SRAM.
			want: []plan.BankTraffic{{Bank: "DTCM", PerInference: b(80, 32)}, {Bank: "SRAM", PerInference: b(100, 100)},
				{Bank: "FLASH", PerInference: b(29, 0)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := place(t, diamond(), board(tt.dtcm), tt.rules...)
			assert.Equal(t, tt.want, p.BankTraffic())
		})
	}
}

// TestHottest checks the hottest rule on diamond, whose constants are w
// and w_again over one 12-byte buffer (read 12 bytes each per inference:
// one copy of 16 bytes read 24 times, 1.5 bytes read per byte) and odd (5
// bytes read once per inference, 16 bytes in an arena: 0.3125), and on
// hotOdd, where odd is read by every operator (15 bytes per inference:
// 0.9375) and w once (12 bytes over 16: 0.75).
func TestHottest(t *testing.T) {
	staged := func(budget int64) []plan.Rule {
		return []plan.Rule{{Class: "constant", Memory: "SRAM", Source: "FLASH", Hottest: budget}}
	}
	tests := []struct {
		name     string
		model    *graph.Model
		rules    []plan.Rule
		sram     []int // tensors of subgraph 0 staged into SRAM
		dtcm     []int // and into DTCM; the other constants stay in FLASH
		constant []int
	}{
		{name: "a budget of 16 bytes takes the hottest buffer", model: diamond(), rules: staged(16), sram: []int{5, 6}, constant: []int{5, 6, 7}},
		{name: "a budget of 31 bytes cannot take the next", model: diamond(), rules: staged(31), sram: []int{5, 6}, constant: []int{5, 6, 7}},
		{name: "a budget of 32 bytes takes both", model: diamond(), rules: staged(32), sram: []int{5, 6, 7}, constant: []int{5, 6, 7}},
		{name: "a budget of 15 bytes takes none", model: diamond(), rules: staged(15), constant: []int{5, 6, 7}},
		{name: "the hottest per byte first", model: hotOdd(), rules: staged(16), sram: []int{7}, constant: []int{5, 7}},
		{name: "a name rule beats it", model: diamond(),
			rules: append([]plan.Rule{{Name: "w*", Memory: "FLASH"}}, staged(16)...), sram: []int{7}, constant: []int{5, 6, 7}},
		{name: "what it leaves goes where the rules before it say", model: diamond(),
			rules: append([]plan.Rule{{Class: "constant", Memory: "DTCM", Source: "FLASH"}}, staged(16)...),
			sram:  []int{5, 6}, dtcm: []int{7}, constant: []int{5, 6, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := place(t, tt.model, board(0), tt.rules...)
			for _, tn := range tt.constant {
				want := "FLASH"
				if slices.Contains(tt.sram, tn) {
					want = "SRAM"
				}
				if slices.Contains(tt.dtcm, tn) {
					want = "DTCM"
				}
				assert.Equal(t, want, memoryOf(t, p, tn), "tensor %d", tn)
			}
		})
	}
}

// hotOdd is diamond with odd read by every operator and w_again by none.
func hotOdd() *graph.Model {
	m := diamond()
	ops := m.Subgraphs[0].Ops
	ops[0].Inputs = ids(0, 7)
	ops[2].Inputs = ids(2, 3, 7, 8)
	return m
}
