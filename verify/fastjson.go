package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// fastJSON reads data as encoding/json's Decoder does with UseNumber
// (objects as map[string]any, arrays as []any, numbers as json.Number),
// for the documents heliac writes: strings of printable ASCII without
// escapes, a top-level value and nothing after it. It reports false for
// anything else, which decode then reads with encoding/json, so that what
// the verifier reads, and every error it reports, stays encoding/json's;
// on a plan at the limits (tens of MB) it takes a fraction of the time.
// A key given twice in one object, which encoding/json would read as its
// last value, it returns as dup (with false): plan.json has none.
func fastJSON(data []byte) (v any, dup *dupKey, ok bool) {
	p := &jsonParser{d: data}
	v, ok = p.value(0)
	if !ok {
		if p.dup != nil {
			slices.Reverse(p.dupAt)
			p.dup.path = jsonPath(p.dupAt)
		}
		return nil, p.dup, false
	}
	p.space()
	return v, nil, p.i == len(p.d)
}

// jsonParser is fastJSON's position in its input.
type jsonParser struct {
	d []byte
	i int
	// dup is the first key found twice in an object; dupAt is the path
	// to that object, innermost first, as the parser unwinds.
	dup   *dupKey
	dupAt []pathSeg
}

// dupKey is a key given twice in one JSON object: the object's path
// (jsonPath) and the key.
type dupKey struct {
	path, key string
}

// pathSeg is one step of a path into a JSON document: an object key, or
// an array index when isKey is false.
type pathSeg struct {
	key   string
	index int
	isKey bool
}

// keyedMaps are plan.json's objects keyed by tensor id or memory: a path
// names their entries as tensor_allocs["0:3"] or arena_usages["SRAM"].
var keyedMaps = map[string]bool{"tensor_allocs": true, "tensor_lifetimes": true,
	"arena_usages": true, "persistent_arenas": true, "constant_arenas": true}

// jsonPath formats a path as the verifier's messages name entries:
// "model.steps", "arenas[0].name", `tensor_allocs["0:3"].binding`; ""
// for the top level.
func jsonPath(segs []pathSeg) string {
	var b strings.Builder
	for i, s := range segs {
		switch {
		case !s.isKey:
			fmt.Fprintf(&b, "[%d]", s.index)
		case i == 1 && segs[0].isKey && keyedMaps[segs[0].key]:
			fmt.Fprintf(&b, "[%q]", s.key)
		case i == 0:
			b.WriteString(s.key)
		default:
			b.WriteString("." + s.key)
		}
	}
	return b.String()
}

// duplicateKey returns the first key given twice in one object of data, a
// JSON document encoding/json reads, or nil: what fastJSON reports as dup,
// for the documents it leaves to encoding/json.
func duplicateKey(data []byte) *dupKey {
	type frame struct {
		isObj   bool
		keys    map[string]bool
		wantKey bool
		seg     pathSeg // the value being read
	}
	var stack []*frame
	path := func() []pathSeg {
		segs := make([]pathSeg, 0, len(stack))
		for _, f := range stack[:len(stack)-1] {
			segs = append(segs, f.seg)
		}
		return segs
	}
	// done ends a value of the innermost container.
	done := func() {
		if len(stack) == 0 {
			return
		}
		if f := stack[len(stack)-1]; f.isObj {
			f.wantKey = true
		} else {
			f.seg.index++
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				stack = append(stack, &frame{isObj: true, keys: map[string]bool{}, wantKey: true})
			case '[':
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
				done()
			}
			continue
		case string:
			if len(stack) > 0 {
				if f := stack[len(stack)-1]; f.isObj && f.wantKey {
					if f.keys[tok] {
						return &dupKey{path: jsonPath(path()), key: tok}
					}
					f.keys[tok] = true
					f.wantKey = false
					f.seg = pathSeg{key: tok, isKey: true}
					continue
				}
			}
		}
		done()
	}
}

// maxJSONDepth is encoding/json's limit on nesting.
const maxJSONDepth = 10000

func (p *jsonParser) space() {
	for p.i < len(p.d) {
		switch p.d[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, bool) {
	p.space()
	if p.i >= len(p.d) {
		return nil, false
	}
	switch c := p.d[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	for _, lit := range []struct {
		text string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if len(p.d)-p.i >= len(lit.text) && string(p.d[p.i:p.i+len(lit.text)]) == lit.text {
			p.i += len(lit.text)
			return lit.v, true
		}
	}
	return nil, false
}

func (p *jsonParser) object(depth int) (any, bool) {
	if depth > maxJSONDepth {
		return nil, false
	}
	p.i++ // {
	m := map[string]any{}
	p.space()
	if p.i < len(p.d) && p.d[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		p.space()
		if p.i >= len(p.d) || p.d[p.i] != '"' {
			return nil, false
		}
		kv, ok := p.str()
		if !ok {
			return nil, false
		}
		k := kv.(string)
		p.space()
		if p.i >= len(p.d) || p.d[p.i] != ':' {
			return nil, false
		}
		p.i++
		v, ok := p.value(depth)
		if !ok {
			if p.dup != nil {
				p.dupAt = append(p.dupAt, pathSeg{key: k, isKey: true})
			}
			return nil, false
		}
		n := len(m)
		if m[k] = v; len(m) == n { // no new key: k was given before
			p.dup = &dupKey{key: k}
			return nil, false
		}
		p.space()
		if p.i >= len(p.d) {
			return nil, false
		}
		switch p.d[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (p *jsonParser) array(depth int) (any, bool) {
	if depth > maxJSONDepth {
		return nil, false
	}
	p.i++ // [
	a := make([]any, 0)
	p.space()
	if p.i < len(p.d) && p.d[p.i] == ']' {
		p.i++
		return a, true
	}
	for {
		v, ok := p.value(depth)
		if !ok {
			if p.dup != nil {
				p.dupAt = append(p.dupAt, pathSeg{index: len(a)})
			}
			return nil, false
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.d) {
			return nil, false
		}
		switch p.d[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, true
		default:
			return nil, false
		}
	}
}

// str reads a string of printable ASCII without escapes.
func (p *jsonParser) str() (any, bool) {
	p.i++ // "
	start := p.i
	for ; p.i < len(p.d); p.i++ {
		switch c := p.d[p.i]; {
		case c == '"':
			s := string(p.d[start:p.i])
			p.i++
			return s, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, false
		}
	}
	return nil, false
}

// number reads a number as JSON spells one: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *jsonParser) number() (any, bool) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.d) && p.d[p.i] >= '0' && p.d[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.d[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.d) && p.d[p.i] == '0':
		p.i++
	case digits() == 0:
		return nil, false
	}
	if p.i < len(p.d) && p.d[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if p.i < len(p.d) && (p.d[p.i] == 'e' || p.d[p.i] == 'E') {
		p.i++
		if p.i < len(p.d) && (p.d[p.i] == '+' || p.d[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return json.Number(p.d[start:p.i]), true
}
