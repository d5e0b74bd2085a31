package plan

import (
	"strings"

	"github.com/heliac/heliac/liveness"
)

// DefaultArenaName is the name Build gives the first arena of a role in a
// memory: the role and the memory as CIdent makes it, "scratch_sram". A
// second arena of the role in that memory gets "_2", and so on.
func DefaultArenaName(role liveness.Class, memory string) string {
	name := role.String()
	if mem := CIdent(memory); mem != "" {
		name += "_" + mem
	}
	return name
}

// CIdent turns s into a part of a C identifier: it lower-cases s, turns
// every character outside [a-z0-9_] into '_', collapses runs of '_' and
// trims them at both ends (C reserves leading underscores and C++ reserves
// "__"). The result may be empty or start with a digit.
//
//	CIdent("SRAM") == "sram"
//	CIdent("ext-PSRAM (8 MB)") == "ext_psram_8_mb"
func CIdent(s string) string {
	var b strings.Builder
	under := true // drops leading '_' and collapses runs
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		default:
			if !under {
				b.WriteByte('_')
			}
			under = true
			continue
		}
		b.WriteRune(r)
		under = false
	}
	return strings.TrimSuffix(b.String(), "_")
}
