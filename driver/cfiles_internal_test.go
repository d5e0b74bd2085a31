package driver

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBlobRefs: blobRefs finds what blobRe finds over the whole text,
// looking only at lines that name a .bin file.
func TestBlobRefs(t *testing.T) {
	tests := []struct {
		name, stub, source string
		want               []string
	}{
		{"none", "", "int x;\n", nil},
		{"incbin and embed", "\t.incbin \"m.a.bin\"\n\t.size x, 4\n\t.incbin \"m.b.bin\"", "#embed \"m.c.bin\"\n", []string{"m.a.bin", "m.b.bin", "m.c.bin"}},
		{"CRLF and blank lines", "\r\n\r\n  .incbin \"m.a.bin\"\r\n", "", []string{"m.a.bin"}},
		{"not alone on its line", "x: .incbin \"m.a.bin\"\n", "/* #embed \"m.b.bin\" */\n", nil},
		{"a path", ".incbin \"dir/m.a.bin\"\n", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var whole []string
			for _, data := range []string{tt.stub, tt.source} {
				for _, m := range blobRe.FindAllStringSubmatch(data, -1) {
					whole = append(whole, m[1])
				}
			}
			assert.Equal(t, tt.want, whole, "blobRe over the whole text")
			assert.Equal(t, tt.want, blobRefs([]byte(tt.stub), []byte(tt.source)))
		})
	}
}
