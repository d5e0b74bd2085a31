package emit

import "strings"

// cString writes s, bytes from the model, as a C string literal that any
// C compiler reads back as exactly those bytes: letters, digits and
// " _.:/+-" as they are, every other byte as a three-digit octal escape.
// Octal escapes end after three digits, so a digit after one is not taken
// into it (a hex escape would be), and escaping ',', '{', '}', '?' and '*'
// keeps table rows splittable at commas and free of trigraphs and comment
// delimiters.
func cString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(" _.:/+-", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('\\')
		b.WriteByte('0' + c>>6)
		b.WriteByte('0' + c>>3&7)
		b.WriteByte('0' + c&7)
	}
	b.WriteByte('"')
	return b.String()
}
