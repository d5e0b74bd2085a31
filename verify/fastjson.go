package verify

import "encoding/json"

// fastJSON reads data as encoding/json's Decoder does with UseNumber
// (objects as map[string]any, arrays as []any, numbers as json.Number),
// for the documents heliac writes: strings of printable ASCII without
// escapes, a top-level value and nothing after it. It reports false for
// anything else, which decode then reads with encoding/json, so that what
// the verifier reads, and every error it reports, stays encoding/json's;
// on a plan at the limits (tens of MB) it takes a fraction of the time.
func fastJSON(data []byte) (any, bool) {
	p := &jsonParser{d: data}
	v, ok := p.value(0)
	if !ok {
		return nil, false
	}
	p.space()
	return v, p.i == len(p.d)
}

// jsonParser is fastJSON's position in its input.
type jsonParser struct {
	d []byte
	i int
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
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.d) || p.d[p.i] != ':' {
			return nil, false
		}
		p.i++
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		m[k.(string)] = v
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
