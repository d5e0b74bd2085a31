package main

import (
	"sort"
	"strings"
)

// defaultStrategy is the allocator pack uses without --strategy.
const defaultStrategy = "best"

func strategyNames() string {
	var names []string
	for n := range strategies {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
