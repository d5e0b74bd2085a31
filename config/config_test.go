package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/config"
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/plan"
)

func builtin(t *testing.T, name string) plan.Platform {
	t.Helper()
	p, err := plan.BuiltinPlatform(name)
	require.NoError(t, err)
	return p
}

// edit returns p changed by f, leaving p alone.
func edit(p plan.Platform, f func(*plan.Platform)) plan.Platform {
	p.Banks = append([]plan.Bank(nil), p.Banks...)
	f(&p)
	return p
}

func TestParse(t *testing.T) {
	ap510 := builtin(t, "apollo510")
	tests := []struct {
		name string
		in   string
		want func() config.File
	}{
		{
			name: "empty input",
			in:   "",
			want: func() config.File { return config.File{} },
		},
		{
			name: "comments and null only",
			in:   "# nothing yet\n~\n",
			want: func() config.File { return config.File{} },
		},
		{
			name: "external arenas",
			in:   "external_arenas: [scratch_sram, \"persistent_*\"]\n",
			want: func() config.File { return config.File{External: []string{"scratch_sram", "persistent_*"}} },
		},
		{
			name: "built-in platform by name",
			in:   "platform: Apollo510\n",
			want: func() config.File { return config.File{Platform: ap510} },
		},
		{
			name: "rules of every kind",
			in: `platform: apollo510
rules:
  - class: scratch
    memory: DTCM
  - tensor: 0:12
    memory: SRAM
  - name: "model/conv*"
    memory: SRAM
  - class: constant
    memory: DTCM
    source: MRAM
  - class: constant
    memory: MRAM
  - tensor: "1:3"
    memory: SRAM
    source: MRAM
`,
			want: func() config.File {
				return config.File{Platform: ap510, Rules: []plan.Rule{
					{Class: "scratch", Memory: "DTCM"},
					{Tensor: "0:12", Memory: "SRAM"},
					{Name: "model/conv*", Memory: "SRAM"},
					{Class: "constant", Memory: "DTCM", Source: "MRAM"},
					{Class: "constant", Memory: "MRAM"},
					{Tensor: "1:3", Memory: "SRAM", Source: "MRAM"},
				}}
			},
		},
		{
			name: "inline platform with base, overrides to zero and false",
			in: `platform:
  base: apollo510
  name: my-board
  constant_bank: ""
  banks:
    - name: DTCM
      capacity: 0
      order: 0
    - name: SRAM
      writable: false
      order: 7
`,
			want: func() config.File {
				return config.File{Platform: edit(ap510, func(p *plan.Platform) {
					p.Name = "my-board"
					p.ConstantBank = ""
					p.Banks[0].Capacity = 0
					p.Banks[1].Writable = false
					p.Banks[1].Order = 7
				})}
			},
		},
		{
			name: "a null value leaves the base's",
			in: `platform:
  base: apollo510
  banks:
    - {name: DTCM, capacity: null, order: ~, alignment: 64}
`,
			want: func() config.File {
				return config.File{Platform: edit(ap510, func(p *plan.Platform) { p.Banks[0].Alignment = 64 })}
			},
		},
		{
			name: "a null bank is absent",
			in: `platform:
  base: apollo510
  banks: [~, {name: DTCM, capacity: 5}]
`,
			want: func() config.File {
				return config.File{Platform: edit(ap510, func(p *plan.Platform) { p.Banks[0].Capacity = 5 })}
			},
		},
		{
			name: "new bank appended with the fields given, the rest zero",
			in: `platform:
  base: apollo4p
  banks:
    - name: PSRAM
      capacity: 0x800000
      writable: true
      boot_init: false
      alignment: 32
      order: 5
    - name: OTP
rules:
  - name: "*weights*"
    memory: PSRAM
    source: MRAM
`,
			want: func() config.File {
				return config.File{
					Platform: edit(builtin(t, "apollo4p"), func(p *plan.Platform) {
						p.Banks = append(p.Banks,
							plan.Bank{Name: "PSRAM", Capacity: 8 << 20, Writable: true, Alignment: 32, Order: 5},
							plan.Bank{Name: "OTP"})
					}),
					Rules: []plan.Rule{{Name: "*weights*", Memory: "PSRAM", Source: "MRAM"}},
				}
			},
		},
		{
			name: "inline platform without base",
			in: `platform:
  name: tiny
  banks:
    - {name: RAM, capacity: 65536, writable: true}
    - {name: ROM, capacity: 262144}
`,
			want: func() config.File {
				return config.File{Platform: plan.Platform{Name: "tiny", Banks: []plan.Bank{
					{Name: "RAM", Capacity: 65536, Writable: true},
					{Name: "ROM", Capacity: 262144},
				}}}
			},
		},
		{
			name: "no platform: rules are kept for the caller to check",
			in: `rules:
  - class: scratch
    memory: DTCM
  - class: constant
    memory: DTCM
`,
			want: func() config.File {
				return config.File{Rules: []plan.Rule{{Class: "scratch", Memory: "DTCM"}, {Class: "constant", Memory: "DTCM"}}}
			},
		},
		{
			name: "null platform is no platform",
			in:   "platform: null\nrules: []\n",
			want: func() config.File { return config.File{Rules: []plan.Rule{}} },
		},
		{
			name: "JSON",
			in: `{
	"platform": {"base": "apollo330p", "banks": [{"name": "DTCM", "capacity": 131072}]},
	"rules": [{"class": "persistent", "memory": "DTCM"}, {"tensor": "0:4", "memory": "SRAM"}]
}`,
			want: func() config.File {
				return config.File{
					Platform: edit(builtin(t, "apollo330p"), func(p *plan.Platform) { p.Banks[0].Capacity = 131072 }),
					Rules:    []plan.Rule{{Class: "persistent", Memory: "DTCM"}, {Tensor: "0:4", Memory: "SRAM"}},
				}
			},
		},
		{
			name: "anchors and aliases",
			in: `platform:
  base: generic
  banks:
    - &ram {name: SRAM, capacity: 1024}
rules:
  - {class: scratch, memory: SRAM}
`,
			want: func() config.File {
				return config.File{
					Platform: edit(builtin(t, "generic"), func(p *plan.Platform) { p.Banks[0].Capacity = 1024 }),
					Rules:    []plan.Rule{{Class: "scratch", Memory: "SRAM"}},
				}
			},
		},
		{
			name: "aliases of a value and of a list",
			in: `rules:
  - {class: scratch, memory: &ram SRAM}
  - {class: persistent, memory: *ram}
kernel_scratch:
  - {custom: MyOp, buffers: &two [{bytes: 64}, {bytes: 128}]}
  - {custom: OtherOp, buffers: *two}
`,
			want: func() config.File {
				two := []kernels.ScratchBuffer{{Bytes: 64}, {Bytes: 128}}
				return config.File{
					Rules:         []plan.Rule{{Class: "scratch", Memory: "SRAM"}, {Class: "persistent", Memory: "SRAM"}},
					KernelScratch: []kernels.ScratchOverride{{Custom: "MyOp", Buffers: two, Line: 5}, {Custom: "OtherOp", Buffers: two, Line: 6}},
				}
			},
		},
		{
			name: "a constant rule may name RAM that is initialised at boot",
			in: `platform:
  base: apollo510
  banks: [{name: DTCM, boot_init: true}]
rules: [{class: constant, memory: DTCM}]
`,
			want: func() config.File {
				return config.File{
					Platform: edit(ap510, func(p *plan.Platform) { p.Banks[0].BootInit = true }),
					Rules:    []plan.Rule{{Class: "constant", Memory: "DTCM"}},
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := config.Parse([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want(), got)
		})
	}
}

func TestParsePlatform(t *testing.T) {
	p, err := config.ParsePlatform([]byte("apollo4L\n"))
	require.NoError(t, err)
	assert.Equal(t, builtin(t, "apollo4l"), p)

	p, err = config.ParsePlatform([]byte("base: apollo3p\nbanks:\n  - {name: TCM, capacity: 32768}\n"))
	require.NoError(t, err)
	assert.Equal(t, edit(builtin(t, "apollo3p"), func(p *plan.Platform) { p.Banks[0].Capacity = 32768 }), p)

	for in, want := range map[string]string{
		"":                                     "config: the platform file is empty",
		"# nothing\n":                          "config: the platform file is empty",
		"platform: apollo510\n":                `config: line 1: unknown key "platform" in platform (known: base, name, constant_bank, banks)`,
		"base: generic\nrules:\n":              `config: line 2: unknown key "rules" in platform (known: base, name, constant_bank, banks)`,
		"[generic]\n":                          `config: line 1: platform: want a built-in platform name or a mapping, got a list`,
		"base: generic\nconstant_bank: SRAM\n": `plan: constant_bank "SRAM" is writable; cold constants need a read-only bank`,
	} {
		_, err := config.ParsePlatform([]byte(in))
		assert.EqualError(t, err, want, "%q", in)
	}
}

// TestPlatformFiles parses the examples in testdata/platforms: config-*
// with Parse, bad-* with Parse against the error in the .err
// file beside it, and the rest with ParsePlatform.
func TestPlatformFiles(t *testing.T) {
	ap510 := builtin(t, "apollo510")
	platforms := map[string]plan.Platform{
		"apollo510-psram.yaml": edit(ap510, func(p *plan.Platform) {
			p.Name = "apollo510-psram"
			p.Banks[0].Capacity = 384 * 1024
			p.Banks = append(p.Banks, plan.Bank{Name: "PSRAM", Capacity: 8 << 20, Writable: true, Order: 5, Section: ".psram_bss"})
		}),
		"custom.json": {Name: "custom-m7", ConstantBank: "QSPI", Banks: []plan.Bank{
			{Name: "DTCM", Capacity: 128 * 1024, Writable: true, Alignment: 32},
			{Name: "AXISRAM", Capacity: 512 * 1024, Writable: true, BootInit: true, Order: 1},
			{Name: "FLASH", Capacity: 2 << 20},
			{Name: "QSPI", Capacity: 16 << 20},
		}},
	}
	configs := map[string]config.File{
		"config-apollo510.yaml": {
			Platform: edit(ap510, func(p *plan.Platform) { p.Banks[1].Capacity = 2 << 20 }),
			Rules: []plan.Rule{
				{Class: "scratch", Memory: "DTCM"},
				{Tensor: "0:12", Memory: "SRAM"},
				{Name: "model/conv*", Memory: "SRAM"},
				{Class: "constant", Memory: "DTCM", Source: "MRAM"},
			},
		},
	}

	files, err := filepath.Glob("testdata/platforms/*")
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, file := range files {
		name := filepath.Base(file)
		if strings.HasSuffix(name, ".err") {
			continue
		}
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			switch {
			case strings.HasPrefix(name, "bad-"):
				want, err := os.ReadFile(strings.TrimSuffix(file, filepath.Ext(file)) + ".err")
				require.NoError(t, err, "a bad- file has its error beside it")
				_, err = config.Parse(data)
				assert.EqualError(t, err, strings.TrimSuffix(string(want), "\n"))
			case strings.HasPrefix(name, "config-"):
				want, ok := configs[name]
				require.True(t, ok, "TestPlatformFiles has no expectation for %s", name)
				got, err := config.Parse(data)
				require.NoError(t, err)
				assert.Equal(t, want, got)
			default:
				want, ok := platforms[name]
				require.True(t, ok, "TestPlatformFiles has no expectation for %s", name)
				got, err := config.ParsePlatform(data)
				require.NoError(t, err)
				assert.Equal(t, want, got)
			}
		})
	}
	for name := range platforms {
		assert.True(t, seen[name], "testdata/platforms/%s is missing", name)
	}
	for name := range configs {
		assert.True(t, seen[name], "testdata/platforms/%s is missing", name)
	}
}

// FuzzParse checks that no input makes the parsers panic, and that a
// config they accept is valid.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/platforms/*")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if cfg, err := config.Parse(data); err == nil && cfg.Platform.Banks != nil {
			assert.NoError(t, cfg.Platform.Validate())
			assert.NoError(t, plan.ValidateRules(cfg.Rules, cfg.Platform))
		}
		if p, err := config.ParsePlatform(data); err == nil {
			assert.NoError(t, p.Validate())
		}
	})
}

func TestOptions(t *testing.T) {
	ap510 := builtin(t, "apollo510")
	generic := builtin(t, "generic")
	rules := []plan.Rule{{Class: "scratch", Memory: "SRAM"}}
	tests := []struct {
		name   string
		file   config.File
		chosen *plan.Platform
		want   *plan.Platform
	}{
		{"nothing: plan's default", config.File{}, nil, nil},
		{"rules alone: plan's default", config.File{Rules: rules}, nil, nil},
		{"the file's platform", config.File{Platform: ap510, Rules: rules}, nil, &ap510},
		{"a chosen platform beats the file's", config.File{Platform: ap510, Rules: rules}, &generic, &generic},
		{"a chosen platform without one in the file", config.File{Rules: rules}, &generic, &generic},
		{"external arenas", config.File{External: []string{"scratch_*"}}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.file.Options(tt.chosen)
			assert.Equal(t, plan.Options{Platform: tt.want, Rules: tt.file.Rules, External: tt.file.External}, got)
		})
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
		return path
	}

	f, err := config.Read("testdata/platforms/config-apollo510.yaml")
	require.NoError(t, err)
	assert.Len(t, f.Rules, 4)
	p, err := config.ReadPlatform("testdata/platforms/custom.json")
	require.NoError(t, err)
	assert.Equal(t, "custom-m7", p.Name)

	bad := write("bad.yaml", "platform: apollo9\n")
	_, err = config.Read(bad)
	assert.EqualError(t, err, bad+`: config: line 1: platform: unknown platform "apollo9" (known: apollo330p, apollo3p, apollo4l, apollo4p, apollo510, generic)`)
	empty := write("empty.yaml", "")
	_, err = config.ReadPlatform(empty)
	assert.EqualError(t, err, empty+": config: the platform file is empty")

	missing := filepath.Join(dir, "missing.yaml")
	_, err = config.Read(missing)
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = config.ReadPlatform(missing)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestParseKernelScratch reads kernel_scratch entries as
// kernels.ScratchOverride values with their lines, and refuses a
// malformed one by line.
func TestParseKernelScratch(t *testing.T) {
	f, err := config.Parse([]byte("kernel_scratch:\n  - custom: MyOp\n    buffers:\n      - bytes: 64\n      - per_input_element: 2\n        input: 1\n  - builtin: CONV_2D\n    buffers: []\n"))
	require.NoError(t, err)
	assert.Equal(t, []kernels.ScratchOverride{
		{Custom: "MyOp", Buffers: []kernels.ScratchBuffer{{Bytes: 64}, {PerInputElement: 2, Input: 1}}, Line: 2},
		{Builtin: "CONV_2D", Buffers: []kernels.ScratchBuffer{}, Line: 7},
	}, f.KernelScratch)

	_, err = config.Parse([]byte("kernel_scratch:\n  - custom: MyOp\n    buffers:\n      - bytes: many\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "config: line 4:")
	assert.Contains(t, err.Error(), "kernel_scratch[0].buffers[0].bytes")

	// Values that cannot apply are refused at once, naming the entry and
	// its line.
	tests := []struct{ name, yaml, want string }{
		{"bytes that would overflow", "kernel_scratch:\n  - custom: A\n  - custom: MyOp\n    buffers:\n      - bytes: 9223372036854775807\n",
			"kernel_scratch entry 2 (CUSTOM:MyOp, line 3): buffer 1: bytes 9223372036854775807 is more than 4294967295"},
		{"a factor that would overflow", "kernel_scratch:\n  - builtin: ADD\n    buffers:\n      - per_output_element: 4294967296\n",
			"kernel_scratch entry 1 (ADD, line 2): buffer 1: per_output_element 4294967296 is more than 4294967295"},
		{"neither name", "kernel_scratch:\n  - buffers: []\n", "kernel_scratch entry 1 (line 2): give either builtin or custom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tt.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
