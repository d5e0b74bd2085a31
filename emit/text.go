package emit

import (
	"strings"
	"unicode/utf8"
)

// hexDigits spells \xNN escapes.
const hexDigits = "0123456789abcdef"

// escapeName writes a name from the model (a tensor, operator, subgraph or
// resource variable name: bytes the model does not promise are UTF-8) as
// text that is valid UTF-8, holds no control character and so stays on one
// line of a terminal, and gives back the exact bytes. It is the one rule
// behind every name heliac writes: plan.json, C comments, the summary and
// inspect (docs/plan-format.md, "Names"):
//
//   - a backslash becomes `\\`;
//   - a byte that does not start a valid UTF-8 sequence (an overlong form, a
//     surrogate, a stray continuation byte, a truncated sequence) becomes
//     `\xNN`, and the next byte is read afresh;
//   - a control character (U+0000–U+001F, U+007F, U+0080–U+009F) or an
//     invisible format character (isFormat: the bidirectional controls
//     that can make a name read backwards, zero-width characters, line and
//     paragraph separators, tags) becomes `\xNN` for each byte of its UTF-8
//     encoding;
//   - every other character is copied.
//
// A name that needs none of this comes back unchanged.
func escapeName(s string) string {
	if plainName(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == utf8.RuneError && n == 1, isControl(r):
			for _, c := range []byte(s[i : i+n]) {
				b.WriteString(`\x`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&15])
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// EscapeName is escapeName, for the lines the heliac command writes
// itself around a name from the model.
func EscapeName(s string) string { return escapeName(s) }

// plainName reports whether escapeName leaves s as it is.
func plainName(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == '\\' || isControl(r) {
			return false
		}
	}
	return true
}

// isControl reports whether r is a C0 or C1 control character, DEL or an
// invisible format character (isFormat).
func isControl(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || isFormat(r)
}

// isFormat reports whether r is one of the invisible characters that
// change how the text around them reads or breaks: the bidirectional
// controls (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069, which can
// show a name backwards), zero-width characters and word joiners
// (U+200B–U+200D, U+2060–U+2064, U+FEFF), the other format characters of
// U+206A–U+206F and U+FFF9–U+FFFB, the line and paragraph separators
// (U+2028, U+2029) and the tag characters (U+E0000–U+E007F). The list is
// fixed (docs/plan-format.md, Names), not Unicode's Cf category, so that
// it does not change with the Go release.
func isFormat(r rune) bool {
	switch {
	case r < 0x061c:
		return false
	case r == 0x061c, r >= 0x200b && r <= 0x200f, r >= 0x2028 && r <= 0x202e, r >= 0x2060 && r <= 0x206f,
		r == 0xfeff, r >= 0xfff9 && r <= 0xfffb, r >= 0xe0000 && r <= 0xe007f:
		return true
	}
	return false
}

// commentText makes s safe inside a /* */ comment on one line: s escaped
// as every name is (escapeName), then every byte outside printable ASCII
// as \xNN too, and a backslash breaking up "*/", "/*" and "??" (which
// would start a trigraph). An ASCII name reads as it does in plan.json.
func commentText(s string) string {
	s = escapeName(s)
	var b strings.Builder
	var prev byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c > 0x7e {
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
			prev = 'x'
			continue
		}
		if prev == '*' && c == '/' || prev == '/' && c == '*' || prev == '?' && c == '?' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
		prev = c
	}
	return b.String()
}

// quoted is a name in double quotes, escaped, for the summary and inspect.
func quoted(s string) string { return `"` + escapeName(s) + `"` }
