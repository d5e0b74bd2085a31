package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
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

// Rule places the tensors that one selector matches in a bank. Exactly one
// of Class, Tensor and Name is set.
type Rule struct {
	// Class selects every tensor of a class: scratch, persistent or
	// constant.
	Class string `json:"class,omitempty" yaml:"class,omitempty"`
	// Tensor selects one tensor as "subgraph:tensor", e.g. "0:12".
	Tensor string `json:"tensor,omitempty" yaml:"tensor,omitempty"`
	// Name selects the tensors whose name matches a path.Match glob; as in
	// path.Match, '*' does not match '/'.
	Name string `json:"name,omitempty" yaml:"name,omitempty"`
	// Memory is the bank the tensors live in at run time.
	Memory string `json:"memory" yaml:"memory"`
	// Source, for constants only, is the read-only bank their data is
	// copied from into Memory before the first run (staging).
	Source string `json:"source,omitempty" yaml:"source,omitempty"`
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

// Validate checks that bank names are unique and not empty, capacities are
// not negative, alignments are 0 or a power of two, some bank is writable
// and ConstantBank, when set, names a read-only bank. It reports every
// problem, one a line.
func (p Platform) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf("plan: config: "+format, args...)) }
	seen := map[string]int{}
	writable := false
	for i, b := range p.Banks {
		id := fmt.Sprintf("bank %q", b.Name)
		switch j, dup := seen[b.Name]; {
		case b.Name == "":
			id = fmt.Sprintf("bank %d", i)
			add("%s: name is empty", id)
		case dup:
			add("%s: defined twice (banks %d and %d)", id, j, i)
		default:
			seen[b.Name] = i
		}
		if b.Capacity < 0 {
			add("%s: capacity %d is negative", id, b.Capacity)
		}
		if b.Alignment < 0 || b.Alignment&(b.Alignment-1) != 0 {
			add("%s: alignment %d is not 0 or a power of two", id, b.Alignment)
		}
		writable = writable || b.Writable
	}
	if !writable {
		add("%s has no writable bank", p.describe())
	}
	if p.ConstantBank != "" {
		if b, ok := p.Bank(p.ConstantBank); !ok {
			add("constant_bank %q is not a bank of %s (banks: %s)", p.ConstantBank, p.describe(), p.bankNames())
		} else if b.Writable {
			add("constant_bank %q is writable; cold constants need a read-only bank", p.ConstantBank)
		}
	}
	return errors.Join(errs...)
}

// ValidateRules checks rules against p: each has exactly one selector; a
// class is scratch, persistent or constant; a tensor parses as
// subgraph:tensor; a name is a valid glob; memory names a bank of p; source
// is given only to constant, tensor or name rules and names a read-only
// bank of p, memory then being writable; scratch and persistent rules name
// a writable bank; and a constant rule without source names a read-only bank
// or RAM that BootInit says is initialised at boot. Rule numbers in the
// errors are indices into rules. It reports every bad rule, one a line.
func ValidateRules(rules []Rule, p Platform) error {
	return validateRules(rules, &p)
}

// validateRules checks rules; with a nil platform, only what needs none.
func validateRules(rules []Rule, p *Platform) error {
	var errs []error
	for i, r := range rules {
		if err := checkRule(i, r, p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func checkRule(i int, r Rule, p *Platform) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("plan: config: rule %d: "+format, append([]any{i}, args...)...)
	}
	var sel []string
	for _, s := range []struct{ key, value string }{{"class", r.Class}, {"tensor", r.Tensor}, {"name", r.Name}} {
		if s.value != "" {
			sel = append(sel, s.key)
		}
	}
	switch len(sel) {
	case 0:
		return fail("give one of class, tensor or name")
	case 1:
	default:
		return fail("give only one of class, tensor or name, not %s", strings.Join(sel, " and "))
	}
	var class liveness.Class
	switch {
	case r.Class != "":
		c, err := ParseClass(r.Class)
		if err != nil {
			return fail("class %q is not scratch, persistent or constant", r.Class)
		}
		class = c
	case r.Tensor != "":
		if _, err := ParseTensorRef(r.Tensor); err != nil {
			return fail("tensor %q is not subgraph:tensor, e.g. \"0:12\"", r.Tensor)
		}
	default:
		if _, err := path.Match(r.Name, "x"); err != nil {
			return fail("name %q is not a valid glob: %v", r.Name, err)
		}
	}
	if r.Memory == "" {
		return fail("memory is missing")
	}
	if r.Source != "" && class != 0 && class != liveness.Constant {
		return fail("source is only for constants, not class %s", r.Class)
	}
	if p == nil {
		return nil
	}
	mem, ok := p.Bank(r.Memory)
	if !ok {
		return fail("memory %q is not a bank of %s (banks: %s)", r.Memory, p.describe(), p.bankNames())
	}
	if r.Source != "" {
		src, ok := p.Bank(r.Source)
		switch {
		case !ok:
			return fail("source %q is not a bank of %s (banks: %s)", r.Source, p.describe(), p.bankNames())
		case src.Writable:
			return fail("source %q is writable; constants are staged from a read-only bank", r.Source)
		case !mem.Writable:
			return fail("memory %q is read-only; staged constants are copied into a writable bank", r.Memory)
		}
		return nil
	}
	if !mem.Writable && (class == liveness.Scratch || class == liveness.Persistent) {
		return fail("memory %q is read-only; %s tensors need a writable bank", r.Memory, r.Class)
	}
	if class == liveness.Constant && mem.Writable && !mem.BootInit {
		if cb, ok := p.ConstBank(); ok {
			return fmt.Errorf("plan: config: constant rule %d: %s is RAM; to place constants there, stage them: add source: %s", i, r.Memory, cb.Name)
		}
		return fmt.Errorf("plan: config: constant rule %d: %s is RAM and %s has no read-only bank to stage constants from", i, r.Memory, p.describe())
	}
	return nil
}

// ParseClass returns the tensor class a rule names: scratch, persistent or
// constant.
func ParseClass(s string) (liveness.Class, error) {
	for _, c := range []liveness.Class{liveness.Scratch, liveness.Persistent, liveness.Constant} {
		if s == c.String() {
			return c, nil
		}
	}
	return 0, fmt.Errorf("plan: class %q is not scratch, persistent or constant", s)
}

// ParseTensorRef parses "subgraph:tensor", two decimal indices.
func ParseTensorRef(s string) (graph.TensorRef, error) {
	sg, t, ok := strings.Cut(s, ":")
	a, okA := parseIndex(sg)
	b, okB := parseIndex(t)
	if !ok || !okA || !okB {
		return graph.TensorRef{}, fmt.Errorf("plan: tensor %q is not subgraph:tensor", s)
	}
	return graph.TensorRef{Subgraph: graph.SubgraphIndex(a), Tensor: graph.TensorID(b)}, nil
}

func parseIndex(s string) (int, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// describe names the platform in messages.
func (p Platform) describe() string {
	if p.Name == "" {
		return "the platform"
	}
	return fmt.Sprintf("platform %q", p.Name)
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
