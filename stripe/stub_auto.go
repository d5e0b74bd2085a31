// Package stripe is a stub of h/stripe's API for h/auto until it lands.
package stripe

import (
	"errors"

	"github.com/heliac/heliac/graph"
)

func Apply(m *graph.Model, regions []graph.StripeRegion) (*graph.Model, error) {
	return nil, errors.New("stub")
}
func Candidates(m *graph.Model) []graph.StripeRegion { return nil }
func EvenRows(h int32, k int) [][2]int32 {
	var out [][2]int32
	var s int32
	for j := 0; j < k; j++ {
		n := h / int32(k)
		if int32(j) < h%int32(k) {
			n++
		}
		out = append(out, [2]int32{s, s + n})
		s += n
	}
	return out
}
func OpMACs(m *graph.Model, s graph.SubgraphIndex, op *graph.Op) int64 { return 0 }
func ModelMACs(m *graph.Model) int64                                   { return 0 }
