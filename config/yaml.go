package config

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

// document parses the single YAML document in data and returns its root, or
// nil when data holds no document or only null.
func document(data []byte) (*yaml.Node, error) {
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
		return nil, errorf(extra.Line, "a second document; give one")
	}
	if err := checkAliases(&doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 || isNull(resolve(doc.Content[0])) {
		return nil, nil
	}
	return resolve(doc.Content[0]), nil
}

// maxAliasValues bounds the values (scalars, lists, mappings, and keys)
// that aliases add to a document, each alias counted with the values of
// the node it names, as checkShape and Decode visit them. Aliases of
// aliases multiply: a few KB can stand for billions of values (a "billion
// laughs"), which yaml.v3 refuses only once it has decoded millions, and
// never when few aliases name large nodes.
const maxAliasValues = 1 << 16

// checkAliases refuses a document whose aliases add more than
// maxAliasValues values to those it writes out, naming the alias at which
// the count passes the limit, and one with an alias inside the node it
// names. It visits each node of the document once.
func checkAliases(doc *yaml.Node) error {
	return newAliasCounter(doc).count(doc)
}

// newAliasCounter returns a counter for doc, whose limit is the nodes
// doc writes out and maxAliasValues.
func newAliasCounter(doc *yaml.Node) *aliasCounter {
	c := &aliasCounter{sizes: map[*yaml.Node]int{}, open: map[*yaml.Node]bool{}}
	c.written = countWritten(doc)
	c.limit = c.written + maxAliasValues
	return c
}

// countWritten returns the number of nodes n writes out: an alias counts
// as one.
func countWritten(n *yaml.Node) int {
	count := 1
	for _, child := range n.Content {
		count += countWritten(child)
	}
	return count
}

// aliasCounter counts a document's values with its aliases expanded.
type aliasCounter struct {
	written, limit int
	n              int                 // the values counted so far
	sizes          map[*yaml.Node]int  // the values of each anchored node counted
	open           map[*yaml.Node]bool // anchored nodes being counted
	visits         int                 // the nodes count visited: the work it did
}

// count adds the values of n, its aliases expanded, to c.n. Each
// anchored node is counted once, where the document writes it; an alias
// of it adds the number.
func (c *aliasCounter) count(n *yaml.Node) error {
	c.visits++
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		size, done := c.sizes[n.Alias]
		switch {
		case c.open[n.Alias]:
			return errorf(n.Line, "alias *%s is inside the node it names", n.Value)
		case !done:
			return errorf(n.Line, "alias *%s names a node the document has not finished", n.Value)
		case c.n+1+size > c.limit:
			return errorf(n.Line, "alias *%s: the aliases add more than %d values to the %d the file writes out; write them out instead",
				n.Value, maxAliasValues, c.written)
		}
		c.n += 1 + size
		return nil
	}
	c.n++
	if n.Anchor != "" {
		c.open[n] = true
		defer delete(c.open, n)
	}
	before := c.n
	for _, child := range n.Content {
		if err := c.count(child); err != nil {
			return err
		}
	}
	if n.Anchor != "" {
		c.sizes[n] = c.n - before
	}
	return nil
}

// decodeStrict decodes n into v, a pointer to a struct, and rejects what a
// yaml.Decoder with KnownFields(true) rejects, and more. yaml.v3 has no such
// switch for Node.Decode, and its messages name neither the key path nor the
// known keys, so checkShape checks n against v's type first; Decode then
// cannot fail. at is the key path of n for messages.
func decodeStrict(n *yaml.Node, at string, v any) error {
	if err := checkShape(n, reflect.TypeOf(v).Elem(), at); err != nil {
		return err
	}
	if err := n.Decode(v); err != nil {
		return yamlError(err)
	}
	return nil
}

var nodeType = reflect.TypeOf(yaml.Node{})

// checkShape checks n against the Go type t it will decode into, so that
// Decode cannot fail and every mistake names its key and line: mappings
// have only the keys of t's yaml tags and each at most once, lists are
// lists, integers integers and booleans true or false. A null value is an
// absent one. A yaml.Node field takes anything; its reader checks it.
func checkShape(n *yaml.Node, t reflect.Type, at string) error {
	n = resolve(n)
	if t == nodeType || isNull(n) {
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
				return errorf(k.Line, "%s: merge keys (<<) are not supported", keyWhere(at))
			}
			if line, dup := seen[k.Value]; dup {
				return errorf(k.Line, "%s: key %q is already given at line %d", keyWhere(at), k.Value, line)
			}
			seen[k.Value] = k.Line
			ft, ok := fields[k.Value]
			if !ok {
				return errorf(k.Line, "unknown key %q in %s (known: %s)", k.Value, keyWhere(at), strings.Join(keys, ", "))
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
				return errorf(n.Line, "%s: %s is out of range", at, n.Value)
			}
			return shapeError(n, at, "an integer")
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			return shapeError(n, at, "true or false")
		}
	default:
		panic(fmt.Sprintf("config: checkShape: unhandled type %v", t))
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

// mappingValue returns the resolved value of key in mapping n, or an empty
// node.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return resolve(n.Content[i+1])
		}
	}
	return &yaml.Node{}
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

func shapeError(n *yaml.Node, at, want string) error {
	return errorf(n.Line, "%s: want %s, got %s", at, want, describe(n))
}

// describe names what a node holds for messages.
func describe(n *yaml.Node) string {
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

// errorf makes a decoding error at a line of the file.
func errorf(line int, format string, args ...any) error {
	return fmt.Errorf("config: line %d: "+format, append([]any{line}, args...)...)
}

// yamlError rewrites an error of the yaml package with this package's
// prefix: "yaml: line 3: did not find expected key" becomes
// "config: line 3: did not find expected key".
func yamlError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		return fmt.Errorf("config: %s", te.Errors[0])
	}
	return fmt.Errorf("config: %s", strings.TrimPrefix(err.Error(), "yaml: "))
}
