package emit

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/heliac/heliac/plan"
)

// TFLiteAlignment is the alignment of the model array TFLiteC writes:
// TFLM reads the flatbuffer in place, and its examples align models to 16
// bytes (alignas(16) const unsigned char g_model[]).
const TFLiteAlignment = 16

// TFLiteC writes model, the bytes --emit-tflite writes, as a C array for
// firmware that runs it with TFLM: "<prefix>.tflite.h" declares
//
//	extern const unsigned char <prefix>_tflite[<PREFIX>_TFLITE_SIZE];
//
// aligned to TFLiteAlignment bytes, and includes the C module's header
// "<prefix>.h" (the plan's macros, TFLM's arena size among them), so a
// firmware includes the model and its arena from one header;
// "<prefix>.tflite.c" defines it. Define <PREFIX>_TFLITE_ATTR before
// including the header to place the array (a section attribute); by
// default the toolchain puts it with other constants. Both files carry
// the plan's hash as the C module's files do. prefix is the C module's
// (emit.Prefix), p the plan the model carries.
func TFLiteC(prefix string, p *plan.Plan, meta Meta, model []byte) Files {
	P := strings.ToUpper(prefix)
	banner := func(w *bytes.Buffer) {
		w.WriteString(cGeneratedLine)
		fmt.Fprintf(w, "/* Memory plan for model %s; plan hash %s. */\n", commentText(meta.ModelName), p.Hash())
	}
	h := &bytes.Buffer{}
	banner(h)
	fmt.Fprintf(h, "/*\n * The model with heliac's plan as TFLM's offline memory plan (%s.tflite),\n"+
		" * as a C array aligned to %d bytes. Run it with TFLM:\n *\n"+
		" *   const tflite::Model* model = tflite::GetModel(%s_tflite);\n"+
		" *   alignas(16) static uint8_t arena[%s_TFLM_ARENA_SIZE];\n"+
		" *\n * %s.h, included here, gives the arena's size.\n */\n",
		prefix, TFLiteAlignment, prefix, P, prefix)
	fmt.Fprintf(h, "#ifndef %s_TFLITE_H\n#define %s_TFLITE_H\n\n#include \"%s.h\"\n\n", P, P, prefix)
	fmt.Fprintf(h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n")
	fmt.Fprintf(h, "#define %s_TFLITE_SIZE %du\n#define %s_TFLITE_ALIGNMENT %du\n\n", P, len(model), P, TFLiteAlignment)
	fmt.Fprintf(h, "extern const unsigned char %s_tflite[%s_TFLITE_SIZE];\n", prefix, P)
	fmt.Fprintf(h, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s_TFLITE_H */\n", P)

	c := &bytes.Buffer{}
	c.Grow(len(model)*5 + len(model)/bytesPerLine*2 + 1024)
	banner(c)
	fmt.Fprintf(c, "\n#include \"%s.tflite.h\"\n\n", prefix)
	fmt.Fprintf(c, "#ifndef %s_TFLITE_ATTR\n#define %s_TFLITE_ATTR\n#endif\n\n", P, P)
	fmt.Fprintf(c, "%s_ALIGNAS(%s_TFLITE_ALIGNMENT) const unsigned char %s_tflite[%s_TFLITE_SIZE] %s_TFLITE_ATTR = {\n",
		P, P, prefix, P, P)
	writeCHex(c, model)
	c.WriteString("};\n")
	return Files{{Name: prefix + ".tflite.h", Data: h.Bytes()}, {Name: prefix + ".tflite.c", Data: c.Bytes()}}
}
