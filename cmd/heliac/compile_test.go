package main

import (
	"os"
	"path/filepath"
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
			err := loadPlatform(&tt.opts, &po)
			assert.Equal(t, tt.code, exitCode(err), "%v", err)
			if tt.code != exitOK {
				assert.ErrorContains(t, err, tt.errPart)
				return
			}
			assert.Equal(t, plan.Options{Platform: tt.platform, Rules: tt.rules}, po)
		})
	}
}
