package emit

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/heliac/heliac/plan"
)

// CPrefix derives the C prefix of generated names from a model name as
// plan.CIdent does: lower-cased, every character outside [a-z0-9_] becomes
// '_', runs of '_' collapse to one and leading and trailing '_' are dropped
// (C reserves leading underscores and C++ reserves "__"). A name that then
// starts with a digit gets "m_" in front, and an empty one becomes "model".
//
//	CPrefix("hello_world_int8") == "hello_world_int8"
//	CPrefix("MobileNet v2 (1.0)") == "mobilenet_v2_1_0"
//	CPrefix("3dnet") == "m_3dnet"
func CPrefix(modelName string) string {
	s := plan.CIdent(modelName)
	switch {
	case s == "":
		return "model"
	case s[0] >= '0' && s[0] <= '9':
		return "m_" + s
	}
	return s
}

// Prefix returns the C prefix emit.C gives a model: prefix when it is not
// "", else CPrefix(modelName).
func Prefix(prefix, modelName string) string {
	if prefix != "" {
		return prefix
	}
	return CPrefix(modelName)
}

// checkPrefix reports why an explicit prefix cannot start generated names.
func checkPrefix(p string) error {
	for i := 0; i < len(p); i++ {
		c := p[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && c != '_' && (i == 0 || c < '0' || c > '9') {
			return fmt.Errorf("emit: prefix %q is not a C identifier (want a letter followed by letters, digits and '_')", p)
		}
	}
	switch {
	case p == "":
		return fmt.Errorf("emit: prefix is empty")
	case p[0] == '_':
		return fmt.Errorf("emit: prefix %q starts with '_', which C reserves", p)
	case strings.HasSuffix(p, "_") || strings.Contains(p, "__"):
		return fmt.Errorf("emit: prefix %q would give names containing \"__\", which C++ reserves", p)
	}
	return nil
}

// ModelName derives the name that C prefixes and plan.json use from a model
// path: "models/hello_world.tflite" gives "hello_world". Only one .tflite or
// .bin extension is removed ("m.tflite.bin" gives "m.tflite"), in any case
// ("M.TFLITE" gives "M").
func ModelName(path string) string {
	base := filepath.Base(path)
	for _, ext := range []string{".tflite", ".bin"} {
		if len(base) > len(ext) && strings.EqualFold(base[len(base)-len(ext):], ext) {
			return base[:len(base)-len(ext)]
		}
	}
	return base
}
