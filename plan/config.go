package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Config is a memory configuration: a platform and the rules that place
// tensors in its banks. ParseConfig reads it from YAML or JSON:
//
//	platform: apollo510      # a built-in name, or a mapping as ParsePlatform reads
//	rules:
//	  - class: scratch       # scratch, persistent or constant
//	    memory: DTCM
//	  - tensor: "0:12"       # subgraph:tensor
//	    memory: SRAM
//	  - name: "model/conv*"  # path.Match glob on the tensor name
//	    memory: SRAM
//	  - class: constant      # staged: copied from MRAM into DTCM at init
//	    memory: DTCM
//	    source: MRAM
type Config struct {
	// Platform is the zero Platform, with no banks, when the config names
	// none: the caller picks one and checks Rules with ValidateRules.
	Platform Platform
	Rules    []Rule // in file order
}

// The raw types mirror the file. Pointers tell a key that is absent from
// one set to zero, so an override can set a field to 0 or false.
type rawConfig struct {
	Platform yaml.Node `yaml:"platform"`
	Rules    []Rule    `yaml:"rules"`
}

type rawPlatform struct {
	Base         *string   `yaml:"base"`
	Name         *string   `yaml:"name"`
	ConstantBank *string   `yaml:"constant_bank"`
	Banks        []rawBank `yaml:"banks"`
}

type rawBank struct {
	Name      *string `yaml:"name"`
	Capacity  *int64  `yaml:"capacity"`
	Writable  *bool   `yaml:"writable"`
	BootInit  *bool   `yaml:"boot_init"`
	Alignment *int64  `yaml:"alignment"`
	Order     *int    `yaml:"order"`
}

// ParseConfig reads a Config from YAML or JSON. Unknown keys, keys given
// twice and values of the wrong type are errors that name the key and its
// line. A platform the config gives is validated, and the rules are checked
// against it; without one, only what needs no platform is checked.
func ParseConfig(data []byte) (Config, error) {
	root, err := decodeDocument(data)
	if err != nil || root == nil {
		return Config{}, err
	}
	if root.Kind != yaml.MappingNode {
		return Config{}, configErrorf(root.Line, "want a mapping with platform and rules, got %s", describeNode(root))
	}
	if err := checkShape(root, reflect.TypeOf(rawConfig{}), ""); err != nil {
		return Config{}, err
	}
	var raw rawConfig
	if err := root.Decode(&raw); err != nil {
		return Config{}, yamlError(err)
	}
	cfg := Config{Rules: raw.Rules}
	pn := yamlResolve(&raw.Platform)
	if pn.Kind == 0 || yamlNull(pn) {
		if err := validateRules(cfg.Rules, nil); err != nil {
			return Config{}, err
		}
		return cfg, nil
	}
	if cfg.Platform, err = platformFromNode(pn, "platform"); err != nil {
		return Config{}, err
	}
	if err := cfg.Platform.Validate(); err != nil {
		return Config{}, err
	}
	if err := ValidateRules(cfg.Rules, cfg.Platform); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// ParsePlatform reads a platform from YAML or JSON: a built-in name, or a
// mapping
//
//	base: apollo510         # optional built-in to start from
//	name: my-board
//	constant_bank: MRAM     # "" means the first read-only bank
//	banks:
//	  - name: DTCM          # an existing bank (same name, with case):
//	    capacity: 262144    #   the fields given replace its own
//	  - name: PSRAM         # a new bank is appended; fields not given are 0
//	    capacity: 8388608
//	    writable: true
//	    order: 5
//
// with the fields of Bank (name, capacity, writable, boot_init, alignment,
// order). The result is validated.
func ParsePlatform(data []byte) (Platform, error) {
	root, err := decodeDocument(data)
	if err != nil {
		return Platform{}, err
	}
	if root == nil {
		return Platform{}, errors.New("plan: config: the platform file is empty")
	}
	p, err := platformFromNode(root, "platform")
	if err != nil {
		return Platform{}, err
	}
	if err := p.Validate(); err != nil {
		return Platform{}, err
	}
	return p, nil
}

// platformFromNode builds a platform from a built-in name or a mapping.
func platformFromNode(n *yaml.Node, at string) (Platform, error) {
	n = yamlResolve(n)
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		p, err := BuiltinPlatform(n.Value)
		if err != nil {
			return Platform{}, configErrorf(n.Line, "%s: %s", at, unknownPlatform(n.Value))
		}
		return p, nil
	case n.Kind == yaml.MappingNode:
		if err := checkShape(n, reflect.TypeOf(rawPlatform{}), at); err != nil {
			return Platform{}, err
		}
		var raw rawPlatform
		if err := n.Decode(&raw); err != nil {
			return Platform{}, yamlError(err)
		}
		return raw.build(n, at)
	}
	return Platform{}, configErrorf(n.Line, "%s: want a built-in platform name or a mapping, got %s", at, describeNode(n))
}

// build starts from the base platform, if any, and applies the overrides:
// a bank whose name the base has is changed field by field, another is
// appended.
func (r rawPlatform) build(n *yaml.Node, at string) (Platform, error) {
	var p Platform
	if r.Base != nil {
		base, err := BuiltinPlatform(*r.Base)
		if err != nil {
			return Platform{}, configErrorf(yamlValue(n, "base").Line, "%s.base: %s", at, unknownPlatform(*r.Base))
		}
		p = base
	}
	if r.Name != nil {
		p.Name = *r.Name
	}
	if r.ConstantBank != nil {
		p.ConstantBank = *r.ConstantBank
	}
	given := map[string]int{}
	for i, rb := range r.Banks {
		line := yamlValue(n, "banks").Content[i].Line
		bat := fmt.Sprintf("%s.banks[%d]", at, i)
		if rb.Name == nil || *rb.Name == "" {
			return Platform{}, configErrorf(line, "%s: name is missing", bat)
		}
		name := *rb.Name
		if j, dup := given[name]; dup {
			return Platform{}, configErrorf(line, "%s: bank %q is already given at %s.banks[%d]", bat, name, at, j)
		}
		given[name] = i
		k := p.bankIndex(name)
		if k < 0 {
			p.Banks = append(p.Banks, Bank{Name: name})
			k = len(p.Banks) - 1
		}
		rb.apply(&p.Banks[k])
	}
	return p, nil
}

func (rb rawBank) apply(b *Bank) {
	if rb.Capacity != nil {
		b.Capacity = *rb.Capacity
	}
	if rb.Writable != nil {
		b.Writable = *rb.Writable
	}
	if rb.BootInit != nil {
		b.BootInit = *rb.BootInit
	}
	if rb.Alignment != nil {
		b.Alignment = *rb.Alignment
	}
	if rb.Order != nil {
		b.Order = *rb.Order
	}
}

// decodeDocument parses the single YAML document in data and returns its
// root, or nil when data holds no document or only null.
func decodeDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, yamlError(err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, yamlError(err)
	default:
		return nil, configErrorf(extra.Line, "a second document; give one")
	}
	if len(doc.Content) == 0 || yamlNull(yamlResolve(doc.Content[0])) {
		return nil, nil
	}
	return yamlResolve(doc.Content[0]), nil
}

var nodeType = reflect.TypeOf(yaml.Node{})

// checkShape checks n against the Go type t it will decode into, so that
// Decode cannot fail and every mistake names its key and line: mappings
// have only the keys of t's yaml tags and each at most once, lists are
// lists, integers integers and booleans true or false. A null value is an
// absent one. A yaml.Node field takes anything; its reader checks it.
func checkShape(n *yaml.Node, t reflect.Type, at string) error {
	n = yamlResolve(n)
	if t == nodeType || yamlNull(n) {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return shapeError(n, at, "a mapping")
		}
		keys, fields := yamlFields(t)
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.ShortTag() == "!!merge" {
				return configErrorf(k.Line, "%s: merge keys (<<) are not supported", keyWhere(at))
			}
			if line, dup := seen[k.Value]; dup {
				return configErrorf(k.Line, "%s: key %q is already given at line %d", keyWhere(at), k.Value, line)
			}
			seen[k.Value] = k.Line
			ft, ok := fields[k.Value]
			if !ok {
				return configErrorf(k.Line, "unknown key %q in %s (known: %s)", k.Value, keyWhere(at), strings.Join(keys, ", "))
			}
			if err := checkShape(v, ft, keyPath(at, k.Value)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return shapeError(n, at, "a list")
		}
		for i, e := range n.Content {
			if err := checkShape(e, t.Elem(), fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return shapeError(n, at, "a string")
		}
	case reflect.Int, reflect.Int64:
		if n.Kind != yaml.ScalarNode {
			return shapeError(n, at, "an integer")
		}
		// Integers too large for the type may resolve to !!float.
		if n.ShortTag() != "!!int" || n.Decode(reflect.New(t).Interface()) != nil {
			if _, err := strconv.ParseInt(n.Value, 0, 64); errors.Is(err, strconv.ErrRange) || n.ShortTag() == "!!int" {
				return configErrorf(n.Line, "%s: %s is out of range", at, n.Value)
			}
			return shapeError(n, at, "an integer")
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			return shapeError(n, at, "true or false")
		}
	default:
		panic(fmt.Sprintf("plan: checkShape: unhandled type %v", t))
	}
	return nil
}

// yamlFields returns the keys of struct type t, in field order, and the
// type of each.
func yamlFields(t reflect.Type) ([]string, map[string]reflect.Type) {
	var keys []string
	types := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "-" || !f.IsExported() {
			continue
		}
		if key == "" {
			key = strings.ToLower(f.Name)
		}
		keys = append(keys, key)
		types[key] = f.Type
	}
	return keys, types
}

// yamlValue returns the resolved value of key in mapping n, or an empty node.
func yamlValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return yamlResolve(n.Content[i+1])
		}
	}
	return &yaml.Node{}
}

func yamlResolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func yamlNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

func shapeError(n *yaml.Node, at, want string) error {
	return configErrorf(n.Line, "%s: want %s, got %s", at, want, describeNode(n))
}

// describeNode names what a node holds for messages.
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

func keyPath(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

func keyWhere(at string) string {
	if at == "" {
		return "the config"
	}
	return at
}

func configErrorf(line int, format string, args ...any) error {
	return fmt.Errorf("plan: config: line %d: "+format, append([]any{line}, args...)...)
}

// yamlError rewrites an error of the yaml package with this package's
// prefix: "yaml: line 3: did not find expected key" becomes
// "plan: config: line 3: did not find expected key".
func yamlError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		return fmt.Errorf("plan: config: %s", te.Errors[0])
	}
	return fmt.Errorf("plan: config: %s", strings.TrimPrefix(err.Error(), "yaml: "))
}
