package heliac_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac"
)

// checkoutMain is a program of another module that uses heliac's Go API.
const checkoutMain = `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/heliac/heliac"
)

func main() {
	model, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	out, err := heliac.Compile(context.Background(), model, heliac.Options{Name: "hello_world_int8"})
	if err != nil {
		panic(err)
	}
	for _, a := range out.Plan.Arenas {
		fmt.Println(a.Name, a.Size)
	}
}
`

// TestUseFromCheckout does what docs/usage.md says to use the Go API from a
// checkout (the module path is not fetchable): a module of its own that
// requires github.com/heliac/heliac and replaces it with the checkout's
// directory builds and runs offline (GOPROXY=off, the module cache this
// test already uses) and plans as Compile does here.
func TestUseFromCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program with the go command; skipped with -short")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	checkout, err := filepath.Abs(".")
	require.NoError(t, err)
	dir := t.TempDir()
	gomod := "module example.com/app\n\ngo 1.24\n\nrequire github.com/heliac/heliac v0.0.0\n\n" +
		"replace github.com/heliac/heliac => " + checkout + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	sum, err := os.ReadFile("go.sum")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(checkoutMain), 0o644))

	modelPath, err := filepath.Abs(filepath.Join("testdata", "models", "hello_world_int8.tflite"))
	require.NoError(t, err)
	cmd := exec.Command(goCmd, "run", ".", modelPath)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	got, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", got)

	model, err := os.ReadFile(modelPath)
	require.NoError(t, err)
	out, err := heliac.Compile(context.Background(), model, heliac.Options{Name: "hello_world_int8"})
	require.NoError(t, err)
	var want strings.Builder
	for _, a := range out.Plan.Arenas {
		fmt.Fprintln(&want, a.Name, a.Size)
	}
	assert.Equal(t, want.String(), string(got))
}
