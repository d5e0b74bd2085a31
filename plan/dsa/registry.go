package dsa

import "slices"

// Named is a Strategy under the name users select it by: heliac's --planner
// and pack --strategy flags, and plan.json's "planner" field.
type Named struct {
	Name    string   // canonical name, lower case
	Aliases []string // other names Lookup accepts for it
	Doc     string   // one line for help texts
	Run     Strategy
}

// Strategies returns every named strategy, the default ("best") first. The
// slice is new on every call; changing it changes nothing here.
func Strategies() []Named {
	return []Named{
		{Name: "best", Doc: "reaches the lower bound when it can", Run: Best},
		{Name: "tflm", Aliases: []string{"greedy"}, Doc: "TFLM's GreedyMemoryPlanner", Run: Greedy},
		{Name: "linear", Doc: "reuses no bytes, the baseline", Run: Linear},
	}
}

// Lookup returns the strategy called name, canonical or alias, and whether
// there is one.
func Lookup(name string) (Named, bool) {
	for _, s := range Strategies() {
		if s.Name == name || slices.Contains(s.Aliases, name) {
			return s, true
		}
	}
	return Named{}, false
}

// Names returns the canonical names of Strategies, in order.
func Names() []string {
	all := Strategies()
	names := make([]string, len(all))
	for i, s := range all {
		names[i] = s.Name
	}
	return names
}
