package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.yaml.in/yaml/v3"

	"github.com/heliac/heliac/plan"
)

// TestStrictAsKnownFields checks that, for every struct the files decode
// into, checkShape knows the keys a yaml.Decoder with KnownFields(true)
// knows: both accept a mapping of every known key and both reject one more.
func TestStrictAsKnownFields(t *testing.T) {
	for _, v := range []any{&fileDoc{}, &platformDoc{}, &plan.Bank{}, &plan.Rule{}} {
		typ := reflect.TypeOf(v).Elem()
		t.Run(typ.String(), func(t *testing.T) {
			keys, _ := yamlFields(typ)
			check := func(doc string, ok bool) {
				t.Helper()
				var n yaml.Node
				if !assert.NoError(t, yaml.Unmarshal([]byte(doc), &n)) {
					return
				}
				err := checkShape(n.Content[0], typ, "x")
				dec := yaml.NewDecoder(strings.NewReader(doc))
				dec.KnownFields(true)
				known := dec.Decode(reflect.New(typ).Interface())
				if ok {
					assert.NoError(t, err, "checkShape, %s", doc)
					assert.NoError(t, known, "KnownFields, %s", doc)
				} else {
					assert.Error(t, err, "checkShape, %s", doc)
					assert.Error(t, known, "KnownFields, %s", doc)
				}
			}
			all := "{" + strings.Join(keys, ": null, ") + ": null}"
			check(all, true)
			check(strings.TrimSuffix(all, "}")+", not_a_key: null}", false)
		})
	}
}

// TestBankKeys checks that plan.Bank declares each bank field once: its yaml
// tags, the keys of platform files, name the same keys, in the same order,
// as its json tags, the keys of plan.json.
func TestBankKeys(t *testing.T) {
	typ := reflect.TypeOf(plan.Bank{})
	yamlKeys, _ := yamlFields(typ)
	var jsonKeys []string
	for i := 0; i < typ.NumField(); i++ {
		key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		jsonKeys = append(jsonKeys, key)
	}
	assert.Equal(t, jsonKeys, yamlKeys)
}
