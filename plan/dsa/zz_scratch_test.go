package dsa

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
)

func TestScratchHeur(t *testing.T) {
	probs := readDSA(t)
	for _, name := range slices.Sorted(maps.Keys(probs)) {
		p := probs[name]
		in := newInstance(p)
		pl := newPlacer(in)
		lb := LowerBound(p)
		line := fmt.Sprintf("%s lb=%d", name, lb)
		g := pl.place(context.Background(), greedyOrder32(p.Buffers), (*placer).firstFit)
		line += fmt.Sprintf(" greedy=%.4f", float64(g)/float64(lb))
		for k, o := range in.heuristicOrders() {
			ff := pl.place(context.Background(), o, (*placer).firstFit)
			bf := pl.place(context.Background(), o, (*placer).bestFit)
			sk := pl.skyline(context.Background(), rankOf(len(p.Buffers), o))
			line += fmt.Sprintf(" [%d ff=%.4f bf=%.4f sk=%.4f]", k, float64(ff)/float64(lb), float64(bf)/float64(lb), float64(sk)/float64(lb))
		}
		t.Log(line)
	}
}

func greedyOrder32(b []Buffer) []int32 {
	var o []int32
	for _, i := range greedyOrder(b) {
		o = append(o, int32(i))
	}
	return o
}
