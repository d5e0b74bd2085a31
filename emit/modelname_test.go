package emit_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/heliac/heliac/emit"
)

func TestModelName(t *testing.T) {
	for in, want := range map[string]string{
		"a/b/hello.tflite": "hello",
		"x.bin":            "x",
		"odml.tflite.bin":  "odml.tflite",
		".tflite":          ".tflite",
		"noext":            "noext",
		"KWS.TFLITE":       "KWS",
		"kws.TFLite":       "kws",
		"kws.Bin":          "kws",
		".TFLITE":          ".TFLITE",
		"kws.tflite.BIN":   "kws.tflite",
	} {
		assert.Equal(t, want, emit.ModelName(in), in)
	}
}
