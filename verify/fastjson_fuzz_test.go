package verify

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzFastJSON: whatever fastJSON reads, encoding/json (which decode falls
// back on) reads too, to the same value, without a duplicate key; a
// duplicate key fastJSON finds in a document encoding/json reads, the
// token pass of that slow path finds too; fastJSON never panics.
func FuzzFastJSON(f *testing.F) {
	for _, doc := range []string{`{}`, `[]`, `{"a": [1, -0, 2.5e-3, 1E+2, true, false, null, "x\ny"]}`, `"\u00e9"`, `{"a": 01}`, `[1 2]`, `{"a": [{"b": 1, "b": 2}]}`} {
		f.Add([]byte(doc))
	}
	paths, _ := filepath.Glob("testdata/*.json")
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, dup, ok := fastJSON(data)
		if !ok && dup == nil {
			return // left to encoding/json
		}
		var want any
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.UseNumber()
		err := dec.Decode(&want)
		if err == nil {
			if _, terr := dec.Token(); terr != io.EOF {
				err = errors.New("data after the value")
			}
		}
		if dup != nil {
			if err == nil && !reflect.DeepEqual(dup, duplicateKey(data)) {
				t.Fatalf("fastJSON finds key %q twice in %q, the token pass finds %v", dup.key, dup.path, duplicateKey(data))
			}
			return
		}
		if d := duplicateKey(data); d != nil {
			t.Fatalf("fastJSON reads %q, but the token pass finds key %q twice in %q", data, d.key, d.path)
		}
		if err != nil {
			t.Fatalf("fastJSON reads %q, encoding/json does not: %v", data, err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("fastJSON reads %q as %#v, encoding/json as %#v", data, got, want)
		}
	})
}
