package plan_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
