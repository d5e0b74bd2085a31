package main

import (
	"fmt"
	"strings"

	"github.com/heliac/heliac/plan/dsa"
)

// strategyHelp lists the allocators in dsa's registry for --planner's and
// pack --strategy's help.
func strategyHelp() string {
	var parts []string
	for _, s := range dsa.Strategies() {
		h := s.Name + " (" + s.Doc
		if len(s.Aliases) > 0 {
			h += "; also " + strings.Join(s.Aliases, ", ")
		}
		parts = append(parts, h+")")
	}
	return strings.Join(parts, ", ")
}

// lookupStrategy finds the allocator called name in dsa's registry. An
// unknown name is a usage error, "<what> "name" (known: ...)".
func lookupStrategy(what, name string) (dsa.Named, error) {
	s, ok := dsa.Lookup(name)
	if !ok {
		return s, &usageError{fmt.Errorf("%s %q (known: %s)", what, name, strings.Join(dsa.Names(), ", "))}
	}
	return s, nil
}
