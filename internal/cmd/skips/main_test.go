package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestReport(t *testing.T) {
	var b strings.Builder
	report(&b, "", "")
	assert.Equal(t, "note: ../shared not found: the corpus, TFLM and reference-figure tests were skipped; "+
		"set HELIAC_SHARED=DIR to the shared directory (DIR/corpus/MANIFEST.tsv)\n", b.String())

	b.Reset()
	dir := t.TempDir()
	report(&b, dir, "")
	assert.Contains(t, b.String(), "note: tflm_run not found in "+dir+"/tools: the TFLM interop tests were skipped; set HELIAC_TFLM_RUN to the binary\n")
	assert.Contains(t, b.String(), "the test that builds the README's TFLM example was skipped")
	assert.Contains(t, b.String(), "note: HELIAC_SHARED="+dir+" has no corpus/MANIFEST.tsv")
}
