// Command skips says which tests skip for want of the shared
// reference material (../shared, or $HELIAC_SHARED): `make test` runs it
// after the tests, so a checkout without it learns that the corpus and
// TFLM tests did not run, and how to point them elsewhere. It finds the
// material as the tests do (internal/corpus, internal/tflmrun), prints
// nothing when everything is there, and always exits 0.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/heliac/heliac/internal/corpus"
	"github.com/heliac/heliac/internal/tflmrun"
)

func main() { report(os.Stdout, corpus.SharedDir(), tflmrun.Path()) }

// report writes a line for each kind of test that skips, given the shared
// directory ("" when absent) and the tflm_run binary ("" when absent).
func report(w io.Writer, shared, tflmRun string) {
	if shared == "" {
		fmt.Fprintf(w, "note: ../shared not found: the corpus, TFLM and reference-figure tests were skipped; "+
			"set %s=DIR to the shared directory (DIR/corpus/MANIFEST.tsv)\n", corpus.EnvDir)
		return
	}
	if _, err := os.Stat(filepath.Join(shared, "corpus", "MANIFEST.tsv")); err != nil {
		fmt.Fprintf(w, "note: %s=%s has no corpus/MANIFEST.tsv: the corpus tests fail or were skipped\n", corpus.EnvDir, shared)
	}
	if tflmRun == "" {
		fmt.Fprintf(w, "note: tflm_run not found in %s: the TFLM interop tests were skipped; set %s to the binary\n",
			filepath.Join(shared, "tools"), tflmrun.EnvPath)
	}
	if _, err := os.Stat(filepath.Join(shared, "tflm", "lib", "host-x86_64", "libtflm.a")); err != nil {
		fmt.Fprintf(w, "note: %s not found: the test that builds the README's TFLM example was skipped\n",
			filepath.Join(shared, "tflm", "lib", "host-x86_64", "libtflm.a"))
	}
}
