package driver

import (
	"fmt"
	"slices"

	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/tflite"
)

// WithScratch returns lib with a config's kernel_scratch entries
// (kernels.Library.WithScratch), after checking that each builtin it
// names is one of TFLite's (tflite.BuiltinNames): an entry for no
// operator can never apply, so it is an error naming the entry, its line
// and, when one is close, the name it may have meant.
func WithScratch(lib *kernels.Library, overrides []kernels.ScratchOverride) (*kernels.Library, error) {
	if err := kernels.CheckScratchOverrides(overrides); err != nil {
		return nil, err
	}
	names := tflite.BuiltinNames()
	for i, o := range overrides {
		if o.Builtin == "" || slices.Contains(names, o.Builtin) {
			continue
		}
		hint := ""
		if near := nearest(o.Builtin, names); near != "" {
			hint = fmt.Sprintf("; did you mean %s?", near)
		}
		return nil, fmt.Errorf("kernels: %s: no TFLite builtin operator is named %s%s", o.Describe(i), o.Builtin, hint)
	}
	return lib.WithScratch(overrides)
}

// nearest returns the name of names closest to s by edit distance, when
// at most a third of s's letters (and at least one) differ; "" otherwise.
// Ties go to the first in order.
func nearest(s string, names []string) string {
	best, bestD := "", max(len(s)/3, 1)+1
	for _, n := range names {
		if d := editDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
