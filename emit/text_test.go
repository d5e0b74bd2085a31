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
