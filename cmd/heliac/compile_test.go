package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/plan"
)

// TestLoadPlatform checks where the platform and rules come from: a
// --platform or --platform-file flag beats the --config file's platform, the
// rules come from the config file, and the two platform flags together are a
// usage error.
func TestLoadPlatform(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
		return path
	}
	cfg := write("config.yaml", "platform: apollo510\nrules:\n  - {class: scratch, memory: SRAM}\n")
	rulesOnly := write("rules.yaml", "rules:\n  - {class: scratch, memory: SRAM}\n")
	board := write("board.yaml", "base: generic\nname: board\n")
	badCfg := write("bad.yaml", "platform: apollo9\n")
	rules := []plan.Rule{{Class: "scratch", Memory: "SRAM"}}
	builtin := func(name string) *plan.Platform {
		p, err := plan.BuiltinPlatform(name)
		require.NoError(t, err)
		return &p
	}
	boardPlatform := builtin("generic")
	boardPlatform.Name = "board"

	tests := []struct {
		name     string
		opts     compileOptions
		platform *plan.Platform
		rules    []plan.Rule
		code     int    // exit code of the error; exitOK for none
		errPart  string // part of the error's message
	}{
		{name: "no flags: plan's default", opts: compileOptions{}},
		{name: "built-in", opts: compileOptions{platform: "Apollo4p"}, platform: builtin("apollo4p")},
		{name: "platform file", opts: compileOptions{platformFile: board}, platform: boardPlatform},
		{name: "config", opts: compileOptions{configFile: cfg}, platform: builtin("apollo510"), rules: rules},
		{name: "config without a platform", opts: compileOptions{configFile: rulesOnly}, rules: rules},
		{name: "--platform beats the config's", opts: compileOptions{configFile: cfg, platform: "generic"}, platform: builtin("generic"), rules: rules},
		{name: "--platform-file beats the config's", opts: compileOptions{configFile: cfg, platformFile: board}, platform: boardPlatform, rules: rules},

		{name: "both platform flags", opts: compileOptions{platform: "generic", platformFile: board},
			code: exitUsage, errPart: "use --platform or --platform-file, not both"},
		{name: "unknown built-in", opts: compileOptions{platform: "apollo9"},
			code: exitUsage, errPart: `unknown platform "apollo9"`},
		{name: "bad config", opts: compileOptions{configFile: badCfg},
			code: exitFailure, errPart: badCfg + `: config: line 1: platform: unknown platform "apollo9"`},
		{name: "a bad config is reported before an unknown built-in", opts: compileOptions{configFile: badCfg, platform: "apollo9"},
			code: exitFailure, errPart: badCfg + `: config: line 1:`},
		{name: "missing platform file", opts: compileOptions{platformFile: filepath.Join(dir, "missing.yaml")},
			code: exitFailure, errPart: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var po plan.Options
			_, err := loadConfig(&tt.opts, &po)
			assert.Equal(t, tt.code, exitCode(err), "%v", err)
			if tt.code != exitOK {
				assert.ErrorContains(t, err, tt.errPart)
				return
			}
			assert.Equal(t, plan.Options{Platform: tt.platform, Rules: tt.rules}, po)
		})
	}
}

const microSpeech = "../../testdata/models/micro_speech_quantized.tflite"

// TestKeepInputs: --overwrite-inputs, the default, is accepted and changes
// nothing; --keep-inputs keeps the inputs (plan.json's overwrite_inputs
// absent); both at once are a usage error.
func TestKeepInputs(t *testing.T) {
	dir := t.TempDir()
	plans := map[string]string{}
	for name, flags := range map[string][]string{"default": nil, "overwrite": {"--overwrite-inputs"}, "keep": {"--keep-inputs"}} {
		out := filepath.Join(dir, name)
		code, _, stderr := runHeliac(append([]string{helloWorld, "-o", out, "-q"}, flags...)...)
		require.Equal(t, exitOK, code, stderr)
		data, err := os.ReadFile(filepath.Join(out, "hello_world_int8.plan.json"))
		require.NoError(t, err)
		plans[name] = string(data)
	}
	assert.Equal(t, plans["default"], plans["overwrite"])
	assert.Contains(t, plans["default"], `"overwrite_inputs": true`)
	assert.NotContains(t, plans["keep"], `"overwrite_inputs"`)
	code, _, stderr := runHeliac(helloWorld, "-o", filepath.Join(dir, "both"), "--overwrite-inputs", "--keep-inputs")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--overwrite-inputs (the default) and --keep-inputs contradict")
}

// TestTwoModelsInOneDirectory writes two models' sets into one directory:
// each keeps its own plan file, and verify checks both.
func TestTwoModelsInOneDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	for _, m := range []string{helloWorld, microSpeech} {
		code, _, stderr := runHeliac(m, "-o", dir, "-q")
		require.Equal(t, exitOK, code, stderr)
	}
	for _, f := range []string{"hello_world_int8", "micro_speech_quantized"} {
		js, err := os.ReadFile(filepath.Join(dir, f+".plan.json"))
		require.NoError(t, err)
		assert.Contains(t, string(js), `"name": "`+f+`"`)
	}
	t.Chdir("../../testdata/models") // where verify finds the models
	code, stdout, stderr := runHeliac("verify", dir)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, filepath.Join(dir, "hello_world_int8.plan.json")+": ok\n"+
		filepath.Join(dir, "micro_speech_quantized.plan.json")+": ok\n", stdout)
}

// TestCompileRefusesToReplace checks that a run never silently replaces
// files of the set's names that another model's run, or not heliac, wrote;
// --force replaces them.
func TestCompileRefusesToReplace(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		errPart string
	}{
		{name: "another model's set of the same prefix", setup: func(t *testing.T, dir string) {
			code, _, stderr := runHeliac(microSpeech, "-o", dir, "--prefix", "net", "-q")
			require.Equal(t, exitOK, code, stderr)
		}, errPart: `net.plan.json holds the plan of model "micro_speech_quantized", not "hello_world_int8"; give this model another --prefix or -o, or replace the file with --force`},
		{name: "a header of the user's", setup: func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "net.h"), []byte("#define NET 1\n"), 0o644))
		}, errPart: `net.h is not a C file heliac wrote; give this model another --prefix or -o, or replace the file with --force`},
		{name: "a plan file heliac did not write", setup: func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "net.plan.json"), []byte("{}"), 0o644))
		}, errPart: `net.plan.json is not a plan heliac wrote`},
		{name: "a binary file no C file of heliac's includes", setup: func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "net.constant_flash.bin"), []byte("mine"), 0o644))
		}, errPart: `net.constant_flash.bin is not a file of constants that heliac's C files beside it include`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			before := readDir(t, dir)
			code, _, stderr := runHeliac(helloWorld, "-o", dir, "--prefix", "net", "-q", "--constants", "incbin")
			assert.Equal(t, exitFailure, code)
			assert.Contains(t, stderr, tt.errPart)
			assert.Equal(t, before, readDir(t, dir), "nothing is written")

			code, _, stderr = runHeliac(helloWorld, "-o", dir, "--prefix", "net", "-q", "--constants", "incbin", "--force")
			require.Equal(t, exitOK, code, stderr)
			js, err := os.ReadFile(filepath.Join(dir, "net.plan.json"))
			require.NoError(t, err)
			assert.Contains(t, string(js), `"name": "hello_world_int8"`)
		})
	}
	// The same model again replaces its own set.
	dir := t.TempDir()
	for range 2 {
		code, _, stderr := runHeliac(helloWorld, "-o", dir, "-q")
		require.Equal(t, exitOK, code, stderr)
	}
}

// TestCompileNeverWritesOverTheInput puts the model where an output of the
// set goes, under the output's name or linked to it: heliac must leave it
// as it was, with or without --force.
func TestCompileNeverWritesOverTheInput(t *testing.T) {
	model, err := os.ReadFile(helloWorld)
	require.NoError(t, err)
	tests := []struct {
		name   string
		file   string   // where the model is, in the output directory
		link   string   // another name for it there: "hard" or "symbolic" link
		args   []string // besides the model and -o
		refuse bool
	}{
		{name: "model named plan.json", file: "plan.json"},
		{name: "model named as the plan file", file: "hw.plan.json", args: []string{"--prefix", "hw"}, refuse: true},
		{name: "model named as the header", file: "net.h", args: []string{"--prefix", "net"}, refuse: true},
		{name: "model named as the source, --force", file: "net.c", args: []string{"--prefix", "net", "--force"}, refuse: true},
		{name: "model named as the written model", file: "net.tflite", args: []string{"--prefix", "net", "--emit-tflite"}, refuse: true},
		{name: "hard link as the source", file: "m.tflite", link: "hard", args: []string{"--prefix", "net"}, refuse: true},
		{name: "symbolic link as the header", file: "m.tflite", link: "symbolic", args: []string{"--prefix", "net", "--force"}, refuse: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tt.file)
			require.NoError(t, os.WriteFile(path, model, 0o644))
			switch tt.link {
			case "hard":
				require.NoError(t, os.Link(path, filepath.Join(dir, "net.c")))
			case "symbolic":
				require.NoError(t, os.Symlink(path, filepath.Join(dir, "net.h")))
			}
			before := readDir(t, dir)
			code, _, stderr := runHeliac(append([]string{path, "-o", dir, "-q"}, tt.args...)...)
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, model, after, "the model is as it was")
			if !tt.refuse {
				assert.Equal(t, exitOK, code, stderr)
				return
			}
			assert.Equal(t, exitFailure, code)
			assert.Contains(t, stderr, "would replace the input model; choose another -o or --prefix")
			assert.Equal(t, before, readDir(t, dir), "nothing is written")
		})
	}
}

// TestCompileConstantsForms writes a model's set with its constants in
// each form in turn: a set holds the files of its form only (the stub and
// binary files of an earlier form go), verifies, and leaves other files,
// including another model's binary files, alone.
func TestCompileConstantsForms(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runHeliac(microSpeech, "-o", dir, "-q", "--constants", "incbin")
	require.Equal(t, exitOK, code, stderr)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.bin"), []byte("mine"), 0o644))
	for _, tc := range []struct {
		form  string
		extra []string // the set's files beside .h, .c and .plan.json
	}{
		{"incbin", []string{"hello_world_int8.constant_flash.bin", "hello_world_int8.constants.S"}},
		{"c", nil},
		{"embed", []string{"hello_world_int8.constant_flash.bin"}},
		{"incbin", []string{"hello_world_int8.constant_flash.bin", "hello_world_int8.constants.S"}},
		{"c", nil},
	} {
		code, _, stderr := runHeliac(helloWorld, "-o", dir, "-q", "--constants", tc.form)
		require.Equal(t, exitOK, code, "%s: %s", tc.form, stderr)
		var got []string
		for name := range readDir(t, dir) {
			if strings.HasPrefix(name, "hello_world_int8.") {
				got = append(got, name)
			}
		}
		want := append([]string{"hello_world_int8.c", "hello_world_int8.h", "hello_world_int8.plan.json"}, tc.extra...)
		assert.ElementsMatch(t, want, got, tc.form)
		code, _, stderr = runHeliac("verify", helloWorld, filepath.Join(dir, "hello_world_int8.plan.json"))
		assert.Equal(t, exitOK, code, "%s: %s", tc.form, stderr)
	}
	// A binary file of constants changed after the run is seen.
	code, _, stderr = runHeliac(helloWorld, "-o", dir, "-q", "--constants", "incbin")
	require.Equal(t, exitOK, code, stderr)
	bin := filepath.Join(dir, "hello_world_int8.constant_flash.bin")
	data, err := os.ReadFile(bin)
	require.NoError(t, err)
	data[0] ^= 0xff
	require.NoError(t, os.WriteFile(bin, data, 0o644))
	code, _, stderr = runHeliac("verify", helloWorld, filepath.Join(dir, "hello_world_int8.plan.json"))
	assert.Equal(t, exitVerify, code, stderr)
	assert.Contains(t, stderr, "hello_world_int8.constant_flash.bin: byte 0 of hello_world_int8_constant_flash")

	files := readDir(t, dir)
	assert.Contains(t, files, "notes.bin", "a file of the user's stays")
	assert.Contains(t, files, "micro_speech_quantized.constants.S", "another model's set stays")
	assert.Contains(t, files, "micro_speech_quantized.constant_flash.bin")
}

// TestCompileExternalArenas: --external-arenas leaves every writable arena
// to the application; the config can name one.
func TestCompileExternalArenas(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runHeliac(helloWorld, "-o", dir, "-q", "--external-arenas")
	require.Equal(t, exitOK, code, stderr)
	h := readDir(t, dir)["hello_world_int8.h"]
	assert.Contains(t, h, "#define HELLO_WORLD_INT8_SCRATCH_SRAM_EXTERNAL 1\n")
	assert.NotContains(t, h, "extern uint8_t hello_world_int8_scratch_sram[", "no storage for an external arena")

	cfg := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("external_arenas: [scratch_sram]\n"), 0o644))
	code, _, stderr = runHeliac(microSpeech, "-o", dir, "-q", "--config", cfg)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, readDir(t, dir)["micro_speech_quantized.h"], "#define MICRO_SPEECH_QUANTIZED_SCRATCH_SRAM_EXTERNAL 1\n")

	require.NoError(t, os.WriteFile(cfg, []byte("external_arenas: [scratch_psram]\n"), 0o644))
	code, _, stderr = runHeliac(microSpeech, "-o", dir, "-q", "--config", cfg)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, `plan: external arena "scratch_psram" names no arena of the plan`)
}

// TestCompileSet: several models at once are one firmware: each model's
// set, the shared module, a summary line per shared arena, and heliac
// verify accepts every plan with its C.
func TestCompileSet(t *testing.T) {
	out := filepath.Join(t.TempDir(), "set")
	models := []string{"../../testdata/models/keyword_scrambled_8bit.tflite", "../../testdata/models/micro_speech_quantized.tflite", helloWorld}
	code, stdout, stderr := runHeliac(append(models, "-o", out)...)
	require.Equal(t, exitOK, code, stderr)
	for _, name := range []string{"keyword_scrambled_8bit", "micro_speech_quantized", "hello_world_int8"} {
		assert.FileExists(t, filepath.Join(out, name+".plan.json"))
		assert.Contains(t, stdout, name+".tflite: 1 subgraph(s)")
	}
	for _, name := range []string{"heliac_shared.h", "heliac_shared.c"} {
		assert.FileExists(t, filepath.Join(out, name))
	}
	assert.Regexp(t, `shared: scratch_sram in SRAM is one buffer of \d+ B for 3 model\(s\), instead of \d+ B apart\n`, stdout)
	for i, name := range []string{"keyword_scrambled_8bit", "micro_speech_quantized", "hello_world_int8"} {
		code, stdout, stderr = runHeliac("verify", models[i], filepath.Join(out, name+".plan.json"))
		assert.Equal(t, exitOK, code, stderr+stdout)
	}
}

// TestCompileSetKeepsOtherModelsFiles: a set's shared module is named
// heliac_shared; it never replaces the set of a model of that prefix (not
// even with --force), nor a file heliac did not write (unless --force), and
// a model compiled alone never replaces a set's shared module (unless
// --force). A refused run writes nothing.
func TestCompileSetKeepsOtherModelsFiles(t *testing.T) {
	set := []string{"../../testdata/models/keyword_scrambled_8bit.tflite", "../../testdata/models/micro_speech_quantized.tflite"}
	model, err := os.ReadFile(helloWorld)
	require.NoError(t, err)
	named := filepath.Join(t.TempDir(), "heliac_shared.tflite")
	require.NoError(t, os.WriteFile(named, model, 0o644))
	tests := []struct {
		name   string
		before func(t *testing.T, dir string) // what dir holds before the set
		force  bool
		want   string // "" when the set is written
	}{
		{"a model named heliac_shared", func(t *testing.T, dir string) {
			code, _, stderr := runHeliac(named, "-o", dir, "-q")
			require.Equal(t, exitOK, code, stderr)
		}, false, "heliac_shared.plan.json is the set of a model of prefix heliac_shared"},
		{"a model named heliac_shared, forced", func(t *testing.T, dir string) {
			code, _, stderr := runHeliac(named, "-o", dir, "-q")
			require.Equal(t, exitOK, code, stderr)
		}, true, "heliac_shared.plan.json is the set of a model of prefix heliac_shared"},
		{"its C files without its plan", func(t *testing.T, dir string) {
			code, _, stderr := runHeliac(named, "-o", dir, "-q")
			require.Equal(t, exitOK, code, stderr)
			require.NoError(t, os.Remove(filepath.Join(dir, "heliac_shared.plan.json")))
		}, true, "heliac_shared.h is a C file of the set of a model of prefix heliac_shared"},
		{"a hand-written file", func(t *testing.T, dir string) {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "heliac_shared.c"), []byte("int mine;\n"), 0o644))
		}, false, "heliac_shared.c is not a shared module heliac wrote"},
		{"a hand-written file, forced", func(t *testing.T, dir string) {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "heliac_shared.c"), []byte("int mine;\n"), 0o644))
		}, true, ""},
		{"an earlier set", func(t *testing.T, dir string) {
			code, _, stderr := runHeliac(append(set, "-o", dir, "-q")...)
			require.Equal(t, exitOK, code, stderr)
		}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			tt.before(t, dir)
			before := readDir(t, dir)
			args := append(set, "-o", dir, "-q")
			if tt.force {
				args = append(args, "--force")
			}
			code, _, stderr := runHeliac(args...)
			if tt.want == "" {
				require.Equal(t, exitOK, code, stderr)
				shared, err := os.ReadFile(filepath.Join(dir, "heliac_shared.c"))
				require.NoError(t, err)
				assert.Contains(t, string(shared), "heliac_shared_bind")
				return
			}
			assert.Equal(t, exitFailure, code)
			assert.Contains(t, stderr, tt.want)
			assert.Equal(t, before, readDir(t, dir), "a refused run writes nothing")
		})
	}

	// A model of the set whose prefix is heliac_shared is refused.
	code, _, stderr := runHeliac(set[0], named, "-o", filepath.Join(t.TempDir(), "out"), "-q")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "heliac_shared names the set's shared module; rename the model")

	// A model alone does not replace a set's shared module.
	dir := filepath.Join(t.TempDir(), "out")
	code, _, stderr = runHeliac(append(set, "-o", dir, "-q")...)
	require.Equal(t, exitOK, code, stderr)
	code, _, stderr = runHeliac(named, "-o", dir, "-q")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "heliac_shared.h is the shared module of a set of models")
}

// TestVerifySetDir: heliac verify DIR checks a set's shared module against
// the plans too: a buffer shrunk to 16 B is refused.
func TestVerifySetDir(t *testing.T) {
	models := copyModels(t)
	out := filepath.Join(models, "set")
	code, _, stderr := runHeliac(filepath.Join(models, "keyword_scrambled_8bit.tflite"), filepath.Join(models, "hello_world_int8.tflite"), "-o", out, "-q")
	require.Equal(t, exitOK, code, stderr)
	code, stdout, stderr := runHeliac("verify", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, filepath.Join(out, "heliac_shared.c")+": ok\n")

	h := filepath.Join(out, "heliac_shared.h")
	data, err := os.ReadFile(h)
	require.NoError(t, err)
	shrunk := regexp.MustCompile(`(#define HELIAC_SHARED_\w+_SIZE )\d+u`).ReplaceAll(data, []byte("${1}16u"))
	require.NotEqual(t, data, shrunk)
	require.NoError(t, os.WriteFile(h, shrunk, 0o644))
	code, _, stderr = runHeliac("verify", out)
	assert.NotEqual(t, exitOK, code)
	assert.Contains(t, stderr, "_SIZE is 16u, but shared arena")
}
