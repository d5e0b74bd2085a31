// Package corpus locates the shared reference material beside the project
// (../shared: real models, their MANIFEST and TFLM's reference figures) for
// tests and benchmarks. Tests that use it skip cleanly when it is absent.
//
// It imports no heliac package.
package corpus

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// EnvDir names an environment variable that overrides where the shared
// directory is looked for.
const EnvDir = "HELIAC_SHARED"

// SharedDir returns the shared directory, or "" when it does not exist.
func SharedDir() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	// internal/corpus/corpus.go -> module root -> ../shared
	d := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared")
	if st, err := os.Stat(filepath.Join(d, "corpus", "MANIFEST.tsv")); err != nil || st.IsDir() {
		return ""
	}
	return filepath.Clean(d)
}

// Require returns the shared directory or skips the test when it is absent.
func Require(tb testing.TB) string {
	tb.Helper()
	d := SharedDir()
	if d == "" {
		tb.Skip("../shared not found; skipping tests on the shared corpus")
	}
	return d
}

// Entry is one row of corpus/MANIFEST.tsv.
type Entry struct {
	File      string // path relative to corpus/, e.g. "tflite-micro/person_detect.tflite"
	Path      string // absolute path
	Subgraphs int
	Tensors   int
	Operators int
	// OpSummary is the operator histogram of op_summary, keyed by
	// operator name: "CONV_2D", or "CUSTOM:name" for a custom operator.
	OpSummary map[string]int
	Notes     string
}

// Manifest reads corpus/MANIFEST.tsv, skipping the test when the shared
// directory is absent.
func Manifest(tb testing.TB) []Entry {
	tb.Helper()
	dir := Require(tb)
	rows, err := ReadTSV(filepath.Join(dir, "corpus", "MANIFEST.tsv"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []Entry
	for _, r := range rows {
		e := Entry{File: r["file"], Path: filepath.Join(dir, "corpus", r["file"]), Notes: r["notes"]}
		var errs [3]error
		e.Subgraphs, errs[0] = strconv.Atoi(r["subgraphs"])
		e.Tensors, errs[1] = strconv.Atoi(r["tensors"])
		e.Operators, errs[2] = strconv.Atoi(r["operators"])
		for _, err := range errs {
			if err != nil {
				tb.Fatalf("MANIFEST.tsv row %s: %v", e.File, err)
			}
		}
		ops, err := ParseOpSummary(r["op_summary"])
		if err != nil {
			tb.Fatalf("MANIFEST.tsv row %s: %v", e.File, err)
		}
		e.OpSummary = ops
		out = append(out, e)
	}
	return out
}

// ParseOpSummary parses an operator histogram written as space-separated
// "NAME:count" items, custom operators as "CUSTOM:name:count".
func ParseOpSummary(s string) (map[string]int, error) {
	out := map[string]int{}
	for _, item := range strings.Fields(s) {
		i := strings.LastIndexByte(item, ':')
		if i <= 0 {
			return nil, fmt.Errorf("op_summary item %q: want NAME:count", item)
		}
		n, err := strconv.Atoi(item[i+1:])
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("op_summary item %q: bad count", item)
		}
		if _, dup := out[item[:i]]; dup {
			return nil, fmt.Errorf("op_summary item %q: operator listed twice", item)
		}
		out[item[:i]] = n
	}
	return out, nil
}

// ReadTSV reads a tab-separated file with a header row into maps keyed by
// column name.
func ReadTSV(path string) ([]map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) == 0 {
		return nil, fmt.Errorf("%s: empty", path)
	}
	head := strings.Split(lines[0], "\t")
	var out []map[string]string
	for _, ln := range lines[1:] {
		f := strings.Split(ln, "\t")
		row := map[string]string{}
		for i, h := range head {
			if i < len(f) {
				row[h] = f[i]
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// ReadCSV reads a comma-separated file with a header row into maps keyed by
// column name.
func ReadCSV(path string) ([]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []map[string]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		row := map[string]string{}
		for i, h := range head {
			if i < len(rec) {
				row[h] = rec[i]
			}
		}
		out = append(out, row)
	}
}
