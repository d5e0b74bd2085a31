package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/heliac/heliac/internal/inputfile"
)

// aliasBomb is a config of about size bytes that names a buffer n times
// in one kernel scratch override and that override n times: n² buffers,
// written in 8n bytes.
func aliasBomb(size int) []byte {
	n := size / 8
	return []byte("kernel_scratch: [&o {custom: X, buffers: [&b {bytes: 1}" + strings.Repeat(", *b", n) + "]}" +
		strings.Repeat(", *o", n) + "]\n")
}

// platformBomb is a platform of about size bytes whose banks list names
// one bank size/4 times.
func platformBomb(size int) []byte {
	return []byte("banks: [&b {name: SRAM, capacity: 1, writable: true}" + strings.Repeat(", *b", size/4) + "]\n")
}

// TestAliasBomb: configs whose aliases stand for far more values than
// they write out are refused with an error naming the line and the alias,
// by a count that visits each node of the document once: the shape check
// and Decode, which visit every alias's values, never see them.
func TestAliasBomb(t *testing.T) {
	tests := []struct {
		name  string
		data  []byte
		parse func([]byte) error
		alias string
	}{
		{"24 KB config", aliasBomb(24 << 10), func(b []byte) error { _, err := Parse(b); return err }, "*o"},
		// Here the aliases of the buffer alone add more than the limit.
		{"config near the size limit", aliasBomb(int(inputfile.Config.Max) - 100), func(b []byte) error { _, err := Parse(b); return err }, "*b"},
		{"platform near the size limit", platformBomb(int(inputfile.Platform.Max) - 100), func(b []byte) error { _, err := ParsePlatform(b); return err }, "*b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Less(t, len(tc.data), int(inputfile.Config.Max))
			err := tc.parse(tc.data)
			require.Error(t, err)
			assert.Regexp(t, `^config: line 1: alias \`+tc.alias+`: the aliases add more than 65536 values to the \d+ the file writes out; write them out instead$`, err.Error())

			var doc yaml.Node
			require.NoError(t, yaml.Unmarshal(tc.data, &doc))
			c := newAliasCounter(&doc)
			require.Error(t, c.count(&doc))
			assert.LessOrEqual(t, c.visits, c.written, "each node visited at most once")
		})
	}
}

// TestReadAliasBomb: the error names the file too.
func TestReadAliasBomb(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bomb.yaml")
	require.NoError(t, os.WriteFile(path, aliasBomb(24<<10), 0o644))
	_, err := Read(path)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), path+": config: line 1: alias *o: "), err.Error())
}

// TestAliasCount counts the values of documents whose aliases are few:
// each alias as the values of the node it names, the node itself included.
func TestAliasCount(t *testing.T) {
	tests := []struct {
		name          string
		in            string
		written, want int // nodes: the document, then each mapping, list, key and value
	}{
		{"no alias", "rules: [{class: scratch, memory: SRAM}]\n", 9, 9},
		{"a scalar", "a: &x 1\nb: *x\n", 6, 6},
		{"a mapping of two keys", "rules: [&r {class: scratch, memory: SRAM}, *r]\n", 10, 14},
		{"an alias of an alias", "a: &x [1, 2]\nb: &y [*x, *x]\nc: *y\n", 12, 22},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var doc yaml.Node
			require.NoError(t, yaml.Unmarshal([]byte(tc.in), &doc))
			c := newAliasCounter(&doc)
			require.NoError(t, c.count(&doc))
			assert.Equal(t, tc.written, c.written, "written")
			assert.Equal(t, tc.want, c.n, "with aliases expanded")
			assert.Equal(t, c.written, c.visits, "each node visited once")
		})
	}
}

// TestAliasInsideItself: an alias inside the node it names is refused
// with its line.
func TestAliasInsideItself(t *testing.T) {
	for _, in := range []string{"rules: &a [*a]\n", "platform:\n  base: generic\n  banks: &p [{name: SRAM}, *p]\n"} {
		_, err := Parse([]byte(in))
		require.Error(t, err, in)
		name := in[strings.Index(in, "&")+1 : strings.Index(in, "&")+2]
		line := strings.Count(in[:strings.Index(in, "*")], "\n") + 1
		assert.Equal(t, fmt.Sprintf("config: line %d: alias *%s is inside the node it names", line, name), err.Error())
	}
}

// BenchmarkAliasBomb parses the 24 KB alias bomb, which took 48 s before
// the aliases were counted.
func BenchmarkAliasBomb(b *testing.B) {
	data := aliasBomb(24 << 10)
	for b.Loop() {
		if _, err := Parse(data); err == nil {
			b.Fatal("the bomb parsed")
		}
	}
}
