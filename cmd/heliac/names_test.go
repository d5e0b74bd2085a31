package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/tflite"
)

// hostileModel writes call_once_mul with names no text channel carries as
// they are: a tensor with invalid UTF-8 and a terminal escape, its MUL as
// a custom operator with a line break in its code, and its resource
// variable's shared_name with invalid UTF-8 and NUL. The tensor's name
// also holds U+202E, which would show the rest of the line backwards.
func hostileModel(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../testdata/models/call_once_mul.tflite")
	require.NoError(t, err)
	m, err := tflite.Load(data)
	require.NoError(t, err)
	m.Subgraphs[0].Tensors[0].Name = "in\xff\x1b[2J\x1b[31m\u202egpj.exe"
	for si := range m.Subgraphs {
		for oi := range m.Subgraphs[si].Ops {
			op := &m.Subgraphs[si].Ops[oi]
			switch {
			case op.Code == graph.VarHandle:
				op.Resource = &graph.ResourceName{SharedName: "Var\xfe\x00iable"}
			case op.CodeName == "MUL":
				op.Code, op.CodeName, op.CustomName = graph.Custom, "", "Mul\xc0\r\n*/"
			}
		}
	}
	out, err := tflite.Encode(m, tflite.EncodeOptions{})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "hostile.tflite")
	require.NoError(t, os.WriteFile(path, out, 0o644))
	return path
}

// assertPlainText fails when out is not UTF-8 or holds a control character
// other than a line break or a tab, or a bidirectional control.
func assertPlainText(t *testing.T, what, out string) {
	t.Helper()
	assert.True(t, utf8.ValidString(out), "%s is not UTF-8:\n%s", what, out)
	for _, r := range out {
		bidi := r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
		if r != '\n' && r != '\t' && (r < 0x20 || r >= 0x7f && r < 0xa0 || bidi) {
			t.Errorf("%s holds control character %U:\n%q", what, r, out)
			return
		}
	}
}

// TestHostileNames: a model whose names are not UTF-8 and hold control
// characters compiles (not exit 4, "a heliac bug"), its plan verifies, and
// plan.json, the summary and inspect carry the names escaped.
func TestHostileNames(t *testing.T) {
	model := hostileModel(t)
	dir := filepath.Join(filepath.Dir(model), "out")
	code, stdout, stderr := runHeliac(model, "-o", dir)
	require.Equal(t, exitOK, code, stderr)
	assertPlainText(t, "the summary", stdout)

	js, err := os.ReadFile(filepath.Join(dir, "hostile.plan.json"))
	require.NoError(t, err)
	require.True(t, utf8.Valid(js), "plan.json is not UTF-8")
	var plan struct {
		Tensors   map[string]struct{ Name string } `json:"tensor_allocs"`
		Variables []struct {
			SharedName string `json:"shared_name"`
		} `json:"resource_variables"`
		Schedule []struct{ Name string }         `json:"schedule"`
		Skipped  []struct{ Name, Reason string } `json:"skipped_tensors"`
	}
	require.NoError(t, json.Unmarshal(js, &plan))
	assert.Equal(t, `in\xff\x1b[2J\x1b[31m\xe2\x80\xaegpj.exe`, plan.Tensors["0:0"].Name)
	assert.Equal(t, `Var\xfe\x00iable`, plan.Variables[0].SharedName)
	assert.Contains(t, string(js), `"name": "CUSTOM:Mul\\xc0\\x0d\\x0a*/"`)
	for _, f := range []string{"hostile.h", "hostile.c"} {
		c, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assertPlainText(t, f, string(c))
		assert.Contains(t, string(c), `in\xff\x1b[2J\x1b[31m\xe2\x80\xaegpj.exe`, f)
	}

	code, stdout, stderr = runHeliac("verify", model, dir)
	assert.Equal(t, exitOK, code, stderr)
	assert.Equal(t, filepath.Join(dir, "hostile.plan.json")+": ok\n", stdout)

	code, stdout, stderr = runHeliac("inspect", model)
	require.Equal(t, exitOK, code, stderr)
	assertPlainText(t, "inspect", stdout)
	assert.Contains(t, stdout, `in\xff\x1b[2J\x1b[31m\xe2\x80\xaegpj.exe`)
	assert.Contains(t, stdout, `CUSTOM:Mul\xc0\x0d\x0a*/`)

	code, stdout, stderr = runHeliac("inspect", "--json", model)
	require.Equal(t, exitOK, code, stderr)
	require.True(t, utf8.ValidString(stdout), "inspect --json is not UTF-8")
	assert.False(t, strings.Contains(stdout, `\u001b`), "inspect --json carries a terminal escape")
	assert.Contains(t, stdout, `"name": "in\\xff\\x1b[2J\\x1b[31m\\xe2\\x80\\xaegpj.exe"`)
}
