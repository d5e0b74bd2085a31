package emit

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestEscapeName(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "sequential/dense/MatMul;bias:0", "sequential/dense/MatMul;bias:0"},
		{"utf-8 kept", "größe_ÿ_\ufffd", "größe_ÿ_\ufffd"},
		{"backslash", `a\b`, `a\\b`},
		{"spelled-out escape", `\xff`, `\\xff`},
		{"invalid byte", "a\xffb", `a\xffb`},
		{"truncated sequence", "a\xc3", `a\xc3`},
		{"encoded surrogate", "\xed\xa0\x80", `\xed\xa0\x80`},
		{"overlong slash", "\xc0\xaf", `\xc0\xaf`},
		{"terminal escape", "\x1b[2J", `\x1b[2J`},
		{"line breaks and NUL", "a\r\n\t\x00", `a\x0d\x0a\x09\x00`},
		{"DEL", "\x7f", `\x7f`},
		{"C1 CSI", "\u009b2J", `\xc2\x9b2J`},
		{"right-to-left override", "in\u202egpj.exe", `in\xe2\x80\xaegpj.exe`},
		{"bidi isolates and marks", "\u2066\u2069\u200e\u200f\u061c", `\xe2\x81\xa6\xe2\x81\xa9\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c`},
		{"zero width and BOM", "a\u200bb\ufeff", `a\xe2\x80\x8bb\xef\xbb\xbf`},
		{"line separator", "a\u2028b", `a\xe2\x80\xa8b`},
		{"tag character", "a\U000e0041", `a\xf3\xa0\x81\x81`},
		{"visible neighbours kept", "\u061b\u2027\u2030\u2070", "\u061b\u2027\u2030\u2070"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := escapeName(tt.in)
			assert.Equal(t, tt.want, got)
			assert.True(t, utf8.ValidString(got))
		})
	}
}

func TestCommentText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "conv/Relu6", "conv/Relu6"},
		{"as plan.json writes it", "a\\b\xff\x1b", `a\\b\xff\x1b`},
		{"non-ASCII as bytes", "ÿ", `\xc3\xbf`},
		{"comment end", "a*/b/*c", `a*\/b/\*c`},
		{"trigraph", "??/", `?\?/`},
		{"newline cannot end the comment", "a\n*/", `a\x0a*\/`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, commentText(tt.in))
		})
	}
}
