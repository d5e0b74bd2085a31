package verify

import (
	"strings"
	"unicode/utf8"
)

// Names in plan.json are the model's bytes written by one rule
// (docs/plan-format.md, "Names"), which this file implements on its own,
// sharing nothing with the emitter: `\` is written `\\`; a byte that does
// not start a valid UTF-8 sequence, and each byte of a control character
// (U+0000–U+001F, U+007F–U+009F) or of an invisible format character
// (hidden), is written `\xNN` (lower-case hex); everything else is copied. The verifier reads every name back to the
// model's bytes with unescapeName and compares bytes.

// escapeName writes the model's bytes s as plan.json does.
func escapeName(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == utf8.RuneError && n == 1 || r < 0x20 || r >= 0x7f && r < 0xa0 || hidden(r):
			for i := range n {
				b.WriteString(`\x`)
				b.WriteByte("0123456789abcdef"[s[i]>>4])
				b.WriteByte("0123456789abcdef"[s[i]&0xf])
			}
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// unescapeName returns the bytes a plan.json name stands for, and false
// when the text is not exactly what escapeName writes for some bytes (a
// raw control character, a backslash that starts no escape, an escape of
// a byte that needs none, upper-case hex).
func unescapeName(text string) (string, bool) {
	if !strings.Contains(text, `\`) {
		return text, text == escapeName(text)
	}
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c != '\\':
			b.WriteByte(c)
		case i+1 < len(text) && text[i+1] == '\\':
			b.WriteByte('\\')
			i++
		case i+3 < len(text) && text[i+1] == 'x' && lowerHex(text[i+2]) >= 0 && lowerHex(text[i+3]) >= 0:
			b.WriteByte(byte(lowerHex(text[i+2])<<4 | lowerHex(text[i+3])))
			i += 3
		default:
			return "", false
		}
	}
	raw := b.String()
	return raw, escapeName(raw) == text
}

// hidden reports whether r is one of the invisible format characters the
// Names rule escapes: U+061C, U+200B–U+200F, U+2028–U+202E,
// U+2060–U+206F, U+FEFF, U+FFF9–U+FFFB and U+E0000–U+E007F.
func hidden(r rune) bool {
	for _, span := range [...][2]rune{{0x061c, 0x061c}, {0x200b, 0x200f}, {0x2028, 0x202e}, {0x2060, 0x206f},
		{0xfeff, 0xfeff}, {0xfff9, 0xfffb}, {0xe0000, 0xe007f}} {
		if span[0] <= r && r <= span[1] {
			return true
		}
	}
	return false
}

// lowerHex is the value of a lower-case hex digit, or -1.
func lowerHex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return -1
}

// shown formats the model's bytes for a message: in double quotes,
// escaped as plan.json writes them, so that a message stays one line and
// sends nothing to a terminal.
func shown(s string) string { return `"` + escapeName(s) + `"` }
