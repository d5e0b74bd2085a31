package tflite

import (
	"slices"

	"github.com/heliac/heliac/tflite/schema"
)

// BuiltinNames returns the names of the builtin operators of the schema
// heliac reads ("ADD", "CONV_2D", ...), sorted; "CUSTOM" is not among
// them, as a custom operator is named by its code.
func BuiltinNames() []string {
	names := make([]string, 0, len(schema.EnumNamesBuiltinOperator))
	for _, n := range schema.EnumNamesBuiltinOperator {
		if n != "" && n != "CUSTOM" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}
