package driver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/verify"
)

// verifyCBeside checks the C module written with a plan against it
// (verify.C), when the plan's directory holds one: the only <name>.h with
// a <name>.c beside it, or else the pair named by the prefix the plan's
// model name gives by default. A plan shipped without its C is not an
// error.
func verifyCBeside(planPath string, planJSON []byte) []verify.Violation {
	dir := filepath.Dir(planPath)
	headers, _ := filepath.Glob(filepath.Join(dir, "*.h"))
	var pairs []string
	for _, h := range headers {
		if st, err := os.Stat(strings.TrimSuffix(h, ".h") + ".c"); err == nil && st.Mode().IsRegular() {
			pairs = append(pairs, strings.TrimSuffix(h, ".h"))
		}
	}
	base := ""
	switch {
	case len(pairs) == 1:
		base = pairs[0]
	case len(pairs) > 1:
		var head struct {
			Model struct {
				Name string `json:"name"`
			} `json:"model"`
		}
		_ = json.Unmarshal(planJSON, &head)
		for _, p := range pairs {
			if filepath.Base(p) == emit.CPrefix(head.Model.Name) {
				base = p
			}
		}
	}
	if base == "" {
		return nil
	}
	h, errH := os.ReadFile(base + ".h")
	c, errC := os.ReadFile(base + ".c")
	if errH != nil || errC != nil {
		return nil
	}
	return verify.C(planJSON, h, c)
}
