package driver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
)

// schemaChecker validates JSON values against the subset of JSON Schema
// that docs/plan.schema.json uses: type, required, properties,
// additionalProperties (false or a schema), propertyNames, items, enum,
// minimum, maximum, pattern, oneOf and local $ref. It is deliberately
// small; a keyword it does not know fails the test rather than being
// ignored.
type schemaChecker struct {
	root map[string]any
	errs []string
}

var knownKeywords = map[string]bool{
	"$schema": true, "$id": true, "title": true, "description": true, "$defs": true,
	"type": true, "required": true, "properties": true, "additionalProperties": true, "items": true,
	"enum": true, "minimum": true, "maximum": true, "oneOf": true, "$ref": true,
	"propertyNames": true, "pattern": true,
}

func (c *schemaChecker) fail(path, format string, args ...any) {
	c.errs = append(c.errs, path+": "+fmt.Sprintf(format, args...))
}

func (c *schemaChecker) resolve(s map[string]any) map[string]any {
	ref, ok := s["$ref"].(string)
	if !ok {
		return s
	}
	node := any(c.root)
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		node = node.(map[string]any)[part]
	}
	return node.(map[string]any)
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	}
	return "unknown"
}

func (c *schemaChecker) check(path string, v any, s map[string]any) {
	s = c.resolve(s)
	for k := range s {
		if !knownKeywords[k] {
			c.fail(path, "schema keyword %q not supported by this checker", k)
		}
	}
	if t, ok := s["type"]; ok {
		var types []string
		switch x := t.(type) {
		case string:
			types = []string{x}
		case []any:
			for _, y := range x {
				types = append(types, y.(string))
			}
		}
		got := typeOf(v)
		if !slices.Contains(types, got) && !(got == "integer" && slices.Contains(types, "number")) {
			c.fail(path, "type %s, want %v", got, types)
			return
		}
	}
	if e, ok := s["enum"].([]any); ok && !slices.Contains(e, v) {
		c.fail(path, "value %v not in %v", v, e)
	}
	if n, ok := v.(float64); ok {
		if m, ok := s["minimum"].(float64); ok && n < m {
			c.fail(path, "%v below minimum %v", n, m)
		}
		if m, ok := s["maximum"].(float64); ok && n > m {
			c.fail(path, "%v above maximum %v", n, m)
		}
	}
	if p, ok := s["pattern"].(string); ok {
		if str, ok := v.(string); ok {
			// JSON Schema patterns are ECMA-262 and unanchored; the
			// schema's use only syntax RE2 reads the same way.
			re, err := regexp.Compile(p)
			if err != nil {
				c.fail(path, "pattern %q: %v", p, err)
			} else if !re.MatchString(str) {
				c.fail(path, "%q does not match pattern %q", str, p)
			}
		}
	}
	if alts, ok := s["oneOf"].([]any); ok {
		matches := 0
		for _, a := range alts {
			sub := &schemaChecker{root: c.root}
			sub.check(path, v, a.(map[string]any))
			if len(sub.errs) == 0 {
				matches++
			}
		}
		if matches != 1 {
			c.fail(path, "matches %d of the oneOf alternatives, want 1", matches)
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		for _, r := range asStrings(s["required"]) {
			if _, ok := obj[r]; !ok {
				c.fail(path, "missing required key %q", r)
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if pn, ok := s["propertyNames"].(map[string]any); ok {
				c.check(path+" key "+strconv.Quote(k), k, pn)
			}
			if ps, ok := props[k]; ok {
				c.check(path+"."+k, obj[k], ps.(map[string]any))
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					c.fail(path, "unexpected key %q", k)
				}
			case map[string]any:
				c.check(path+"["+strconv.Quote(k)+"]", obj[k], ap)
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range arr {
				c.check(fmt.Sprintf("%s[%d]", path, i), x, items)
			}
		}
	}
}

func asStrings(v any) []string {
	var out []string
	if a, ok := v.([]any); ok {
		for _, x := range a {
			out = append(out, x.(string))
		}
	}
	return out
}

func loadSchema(t *testing.T) *schemaChecker {
	data, err := os.ReadFile("../docs/plan.schema.json")
	require.NoError(t, err)
	var root map[string]any
	require.NoError(t, json.Unmarshal(data, &root))
	return &schemaChecker{root: root}
}

func TestPlanMatchesJSONSchema(t *testing.T) {
	for _, f := range testModels(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			cfg := testConfig(emit.ModelName(f))
			cfg.Liveness = referenceConfig(t).Liveness // with in_place entries where the CLI writes them
			cfg.EmitTFLite = true                      // with tflm_arena_bytes where heliac knows the kernels
			out, err := driver.Compile(context.Background(), data, cfg)
			require.NoError(t, err)
			var v any
			require.NoError(t, json.Unmarshal(out.PlanJSON, &v))
			c := loadSchema(t)
			c.check("$", v, c.root)
			require.Empty(t, c.errs)
		})
	}
}

// The checker itself must reject what the schema forbids, starting from a
// plan it accepts.
func TestSchemaCheckerRejects(t *testing.T) {
	data, err := os.ReadFile("testdata/golden/hello_world_int8/plan.json")
	require.NoError(t, err)
	tests := map[string]func(map[string]any){
		"missing key":     func(m map[string]any) { delete(m, "spills") },
		"extra key":       func(m map[string]any) { m["surprise"] = 1 },
		"wrong type":      func(m map[string]any) { m["alignment"] = "16" },
		"bad enum":        func(m map[string]any) { m["planner"] = "magic" },
		"negative offset": func(m map[string]any) { binding(m, "0:0")["offset"] = -16.0 },
		"bad alias":       func(m map[string]any) { alloc(m, "0:0")["alias_of"] = 3.0 },
		"v3 list of tensors": func(m map[string]any) {
			m["tensor_allocs"] = []any{alloc(m, "0:0")}
		},
		"v3 list of arena usages": func(m map[string]any) {
			m["arena_usages"] = []any{m["arena_usages"].(map[string]any)["SRAM"]}
		},
		"tensor id with a leading zero": func(m map[string]any) { rekey(m, "tensor_allocs", "0:1", "0:01") },
		"tensor id without subgraph":    func(m map[string]any) { rekey(m, "tensor_allocs", "0:1", "1") },
		"lifetime keyed by a number":    func(m map[string]any) { rekey(m, "tensor_lifetimes", "0:0", "0") },
		"lifetime with v3 fields": func(m map[string]any) {
			m["tensor_lifetimes"].(map[string]any)["0:0"].(map[string]any)["subgraph"] = 0.0
		},
		"arena usage not an object": func(m map[string]any) { m["arena_usages"].(map[string]any)["SRAM"] = 48.0 },
		"cold constant with null source": func(m map[string]any) {
			binding(m, "0:1")["source_memory"] = nil // 0:1 is a constant
		},
		"scratch with a source": func(m map[string]any) { binding(m, "0:0")["source_memory"] = "SRAM" },
		"constant arena record with null source": func(m map[string]any) {
			m["arenas"].([]any)[0].(map[string]any)["source_memory"] = nil // arena 0 is the constant one
		},
	}
	var base map[string]any
	require.NoError(t, json.Unmarshal(data, &base))
	c := loadSchema(t)
	c.check("$", base, c.root)
	require.Empty(t, c.errs, "the unchanged golden plan")
	require.Equal(t, "constant", binding(base, "0:1")["role"])
	require.Equal(t, "constant", base["arenas"].([]any)[0].(map[string]any)["role"])
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			var v map[string]any
			require.NoError(t, json.Unmarshal(data, &v))
			mutate(v)
			c := loadSchema(t)
			c.check("$", v, c.root)
			require.NotEmpty(t, c.errs)
		})
	}
}

func alloc(m map[string]any, id string) map[string]any {
	return m["tensor_allocs"].(map[string]any)[id].(map[string]any)
}

func binding(m map[string]any, id string) map[string]any {
	return alloc(m, id)["binding"].(map[string]any)
}

// rekey moves m[key][from] to m[key][to].
func rekey(m map[string]any, key, from, to string) {
	obj := m[key].(map[string]any)
	obj[to] = obj[from]
	delete(obj, from)
}

// Each keyword the checker knows beyond the first subset, with a value it
// accepts and one it rejects.
func TestSchemaCheckerKeywords(t *testing.T) {
	tests := []struct {
		name, schema, value string
		ok                  bool
	}{
		{"additionalProperties schema: match", `{"type":"object","additionalProperties":{"type":"integer"}}`, `{"a":1,"b":2}`, true},
		{"additionalProperties schema: mismatch", `{"type":"object","additionalProperties":{"type":"integer"}}`, `{"a":1,"b":"2"}`, false},
		{"additionalProperties schema: not for properties", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"integer"}}`, `{"a":"x","b":2}`, true},
		{"additionalProperties false", `{"type":"object","properties":{"a":{}},"additionalProperties":false}`, `{"a":1,"b":2}`, false},
		{"propertyNames: match", `{"type":"object","propertyNames":{"pattern":"^[a-z]+$"}}`, `{"ab":1,"c":2}`, true},
		{"propertyNames: mismatch", `{"type":"object","propertyNames":{"pattern":"^[a-z]+$"}}`, `{"ab":1,"C":2}`, false},
		{"propertyNames: a declared property too", `{"type":"object","properties":{"A":{}},"propertyNames":{"pattern":"^[a-z]+$"}}`, `{"A":1}`, false},
		{"pattern: match", `{"type":"string","pattern":"^(0|[1-9][0-9]*):(0|[1-9][0-9]*)$"}`, `"10:0"`, true},
		{"pattern: mismatch", `{"type":"string","pattern":"^(0|[1-9][0-9]*):(0|[1-9][0-9]*)$"}`, `"10:00"`, false},
		{"pattern: unanchored", `{"pattern":"b"}`, `"abc"`, true},
		{"pattern: not a string", `{"pattern":"^a$"}`, `1`, true},
		{"pattern: invalid", `{"pattern":"("}`, `"("`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var schema map[string]any
			var v any
			require.NoError(t, json.Unmarshal([]byte(tt.schema), &schema))
			require.NoError(t, json.Unmarshal([]byte(tt.value), &v))
			c := &schemaChecker{root: schema}
			c.check("$", v, schema)
			if tt.ok {
				require.Empty(t, c.errs)
			} else {
				require.NotEmpty(t, c.errs)
			}
		})
	}
}
