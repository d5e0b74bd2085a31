package plan_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

func TestParseConfig(t *testing.T) {
	ap510 := builtin(t, "apollo510")
	tests := []struct {
		name string
		in   string
		want func() plan.Config
	}{
		{
			name: "empty input",
			in:   "",
			want: func() plan.Config { return plan.Config{} },
		},
		{
			name: "comments and null only",
			in:   "# nothing yet\n~\n",
			want: func() plan.Config { return plan.Config{} },
		},
		{
			name: "built-in platform by name",
			in:   "platform: Apollo510\n",
			want: func() plan.Config { return plan.Config{Platform: ap510} },
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
			want: func() plan.Config {
				return plan.Config{Platform: ap510, Rules: []plan.Rule{
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
			want: func() plan.Config {
				return plan.Config{Platform: edit(ap510, func(p *plan.Platform) {
					p.Name = "my-board"
					p.ConstantBank = ""
					p.Banks[0].Capacity = 0
					p.Banks[1].Writable = false
					p.Banks[1].Order = 7
				})}
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
			want: func() plan.Config {
				return plan.Config{
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
			want: func() plan.Config {
				return plan.Config{Platform: plan.Platform{Name: "tiny", Banks: []plan.Bank{
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
			want: func() plan.Config {
				return plan.Config{Rules: []plan.Rule{{Class: "scratch", Memory: "DTCM"}, {Class: "constant", Memory: "DTCM"}}}
			},
		},
		{
			name: "null platform is no platform",
			in:   "platform: null\nrules: []\n",
			want: func() plan.Config { return plan.Config{Rules: []plan.Rule{}} },
		},
		{
			name: "JSON",
			in: `{
	"platform": {"base": "apollo330p", "banks": [{"name": "DTCM", "capacity": 131072}]},
	"rules": [{"class": "persistent", "memory": "DTCM"}, {"tensor": "0:4", "memory": "SRAM"}]
}`,
			want: func() plan.Config {
				return plan.Config{
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
			want: func() plan.Config {
				return plan.Config{
					Platform: edit(builtin(t, "generic"), func(p *plan.Platform) { p.Banks[0].Capacity = 1024 }),
					Rules:    []plan.Rule{{Class: "scratch", Memory: "SRAM"}},
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
			want: func() plan.Config {
				return plan.Config{
					Platform: edit(ap510, func(p *plan.Platform) { p.Banks[0].BootInit = true }),
					Rules:    []plan.Rule{{Class: "constant", Memory: "DTCM"}},
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := plan.ParseConfig([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want(), got)
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	const banks510 = "(banks: DTCM, SRAM, MRAM)"
	tests := []struct {
		name, in, err string
	}{
		{
			name: "unknown top-level key",
			in:   "platform: generic\nrule:\n  - class: scratch\n",
			err:  `plan: config: line 2: unknown key "rule" in the config (known: platform, rules)`,
		},
		{
			name: "unknown platform key",
			in:   "platform:\n  base: generic\n  banks: []\n  cpu: m55\n",
			err:  `plan: config: line 4: unknown key "cpu" in platform (known: base, name, constant_bank, banks)`,
		},
		{
			name: "unknown bank key",
			in:   "platform:\n  base: generic\n  banks:\n    - name: SRAM\n      size: 4\n",
			err:  `plan: config: line 5: unknown key "size" in platform.banks[0] (known: name, capacity, writable, boot_init, alignment, order)`,
		},
		{
			name: "unknown rule key",
			in:   "platform: generic\nrules:\n  - class: scratch\n    memory: SRAM\n  - class: scratch\n    bank: SRAM\n",
			err:  `plan: config: line 6: unknown key "bank" in rules[1] (known: class, tensor, name, memory, source)`,
		},
		{
			name: "unknown key in JSON",
			in:   "{\"platform\": \"generic\",\n \"extra\": 1}",
			err:  `plan: config: line 2: unknown key "extra" in the config (known: platform, rules)`,
		},
		{
			name: "key given twice",
			in:   "platform:\n  base: generic\n  name: a\n  name: b\n",
			err:  `plan: config: line 4: platform: key "name" is already given at line 3`,
		},
		{
			name: "capacity not an integer",
			in:   "platform:\n  base: generic\n  banks:\n    - name: SRAM\n      capacity: 512K\n",
			err:  `plan: config: line 5: platform.banks[0].capacity: want an integer, got "512K"`,
		},
		{
			name: "capacity a fraction",
			in:   "platform:\n  base: generic\n  banks:\n    - name: SRAM\n      capacity: 1.5\n",
			err:  `plan: config: line 5: platform.banks[0].capacity: want an integer, got "1.5"`,
		},
		{
			name: "capacity out of range",
			in:   "platform:\n  base: generic\n  banks:\n    - name: SRAM\n      capacity: 99999999999999999999\n",
			err:  `plan: config: line 5: platform.banks[0].capacity: 99999999999999999999 is out of range`,
		},
		{
			name: "order out of range",
			in:   "platform:\n  base: generic\n  banks:\n    - name: SRAM\n      order: 9223372036854775808\n",
			err:  `plan: config: line 5: platform.banks[0].order: 9223372036854775808 is out of range`,
		},
		{
			name: "writable not a boolean",
			in:   "platform:\n  base: generic\n  banks:\n    - name: SRAM\n      writable: yes\n",
			err:  `plan: config: line 5: platform.banks[0].writable: want true or false, got "yes"`,
		},
		{
			name: "banks not a list",
			in:   "platform:\n  base: generic\n  banks:\n    SRAM: {capacity: 4}\n",
			err:  `plan: config: line 4: platform.banks: want a list, got a mapping`,
		},
		{
			name: "rule not a mapping",
			in:   "platform: generic\nrules:\n  - scratch\n",
			err:  `plan: config: line 3: rules[0]: want a mapping, got "scratch"`,
		},
		{
			name: "memory not a string",
			in:   "platform: generic\nrules:\n  - class: scratch\n    memory: [SRAM]\n",
			err:  `plan: config: line 4: rules[0].memory: want a string, got a list`,
		},
		{
			name: "config not a mapping",
			in:   "- platform: generic\n",
			err:  `plan: config: line 1: want a mapping with platform and rules, got a list`,
		},
		{
			name: "platform neither a name nor a mapping",
			in:   "platform: [apollo510]\n",
			err:  `plan: config: line 1: platform: want a built-in platform name or a mapping, got a list`,
		},
		{
			name: "platform a number",
			in:   "platform: 510\n",
			err:  `plan: config: line 1: platform: want a built-in platform name or a mapping, got "510"`,
		},
		{
			name: "unknown built-in",
			in:   "\nplatform: apollo9\n",
			err:  `plan: config: line 2: platform: unknown platform "apollo9" (known: apollo330p, apollo3p, apollo4l, apollo4p, apollo510, generic)`,
		},
		{
			name: "unknown base",
			in:   "platform:\n  base: apollo9\n",
			err:  `plan: config: line 2: platform.base: unknown platform "apollo9" (known: apollo330p, apollo3p, apollo4l, apollo4p, apollo510, generic)`,
		},
		{
			name: "bank without name",
			in:   "platform:\n  base: generic\n  banks:\n    - name: SRAM\n    - capacity: 4\n",
			err:  `plan: config: line 5: platform.banks[1]: name is missing`,
		},
		{
			name: "bank given twice",
			in:   "platform:\n  banks:\n    - {name: SRAM, writable: true}\n    - {name: SRAM, capacity: 4}\n",
			err:  `plan: config: line 4: platform.banks[1]: bank "SRAM" is already given at platform.banks[0]`,
		},
		{
			name: "merge keys",
			in:   "platform:\n  base: generic\n  banks:\n    - <<: {name: SRAM}\n",
			err:  `plan: config: line 4: platform.banks[0]: merge keys (<<) are not supported`,
		},
		{
			name: "bad YAML",
			in:   "platform: generic\n  rules: []\n",
			err:  `plan: config: line 2: mapping values are not allowed in this context`,
		},
		{
			name: "bad JSON",
			in:   "{\"platform\": \"generic\"\n",
			err:  `plan: config: line 1: did not find expected ',' or '}'`,
		},
		{
			name: "two documents",
			in:   "platform: generic\n---\nplatform: apollo510\n",
			err:  `plan: config: line 2: a second document; give one`,
		},
		{
			name: "invalid platform",
			in:   "platform:\n  banks:\n    - {name: FLASH, capacity: -1}\n",
			err: "plan: bank \"FLASH\": capacity -1 is negative\n" +
				"plan: the platform has no writable bank",
		},
		{
			name: "rule naming no bank of the platform",
			in:   "platform: apollo510\nrules:\n  - {class: scratch, memory: PSRAM}\n",
			err:  `plan: rule 0: memory "PSRAM" is not a bank of platform "apollo510" ` + banks510,
		},
		{
			name: "rules are checked without a platform",
			in:   "rules:\n  - {class: scratch, tensor: \"0:1\", memory: X}\n  - {class: weights, memory: X}\n",
			err: "plan: rule 0: give only one of class, tensor or name, not class and tensor\n" +
				`plan: rule 1: class "weights" is not scratch, persistent or constant`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := plan.ParseConfig([]byte(tt.in))
			assert.EqualError(t, err, tt.err)
			assert.Equal(t, plan.Config{}, got)
		})
	}
}

func TestParsePlatform(t *testing.T) {
	p, err := plan.ParsePlatform([]byte("apollo4L\n"))
	require.NoError(t, err)
	assert.Equal(t, builtin(t, "apollo4l"), p)

	p, err = plan.ParsePlatform([]byte("base: apollo3p\nbanks:\n  - {name: TCM, capacity: 32768}\n"))
	require.NoError(t, err)
	assert.Equal(t, edit(builtin(t, "apollo3p"), func(p *plan.Platform) { p.Banks[0].Capacity = 32768 }), p)

	for in, want := range map[string]string{
		"":                                     "plan: config: the platform file is empty",
		"# nothing\n":                          "plan: config: the platform file is empty",
		"platform: apollo510\n":                `plan: config: line 1: unknown key "platform" in platform (known: base, name, constant_bank, banks)`,
		"base: generic\nrules:\n":              `plan: config: line 2: unknown key "rules" in platform (known: base, name, constant_bank, banks)`,
		"[generic]\n":                          `plan: config: line 1: platform: want a built-in platform name or a mapping, got a list`,
		"base: generic\nconstant_bank: SRAM\n": `plan: constant_bank "SRAM" is writable; cold constants need a read-only bank`,
	} {
		_, err := plan.ParsePlatform([]byte(in))
		assert.EqualError(t, err, want, "%q", in)
	}
}

// TestPlatformFiles parses the examples in testdata/platforms: config-*
// with ParseConfig, bad-* with ParseConfig against the error in the .err
// file beside it, and the rest with ParsePlatform.
func TestPlatformFiles(t *testing.T) {
	ap510 := builtin(t, "apollo510")
	platforms := map[string]plan.Platform{
		"apollo510-psram.yaml": edit(ap510, func(p *plan.Platform) {
			p.Name = "apollo510-psram"
			p.Banks[0].Capacity = 384 * 1024
			p.Banks = append(p.Banks, plan.Bank{Name: "PSRAM", Capacity: 8 << 20, Writable: true, Order: 5})
		}),
		"custom.json": {Name: "custom-m7", ConstantBank: "QSPI", Banks: []plan.Bank{
			{Name: "DTCM", Capacity: 128 * 1024, Writable: true, Alignment: 32},
			{Name: "AXISRAM", Capacity: 512 * 1024, Writable: true, BootInit: true, Order: 1},
			{Name: "FLASH", Capacity: 2 << 20},
			{Name: "QSPI", Capacity: 16 << 20},
		}},
	}
	configs := map[string]plan.Config{
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
				_, err = plan.ParseConfig(data)
				assert.EqualError(t, err, strings.TrimSuffix(string(want), "\n"))
			case strings.HasPrefix(name, "config-"):
				want, ok := configs[name]
				require.True(t, ok, "TestPlatformFiles has no expectation for %s", name)
				got, err := plan.ParseConfig(data)
				require.NoError(t, err)
				assert.Equal(t, want, got)
			default:
				want, ok := platforms[name]
				require.True(t, ok, "TestPlatformFiles has no expectation for %s", name)
				got, err := plan.ParsePlatform(data)
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

// FuzzParseConfig checks that no input makes the parsers panic, and that a
// config they accept is valid.
func FuzzParseConfig(f *testing.F) {
	files, _ := filepath.Glob("testdata/platforms/*")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if cfg, err := plan.ParseConfig(data); err == nil && cfg.Platform.Banks != nil {
			assert.NoError(t, cfg.Platform.Validate())
			assert.NoError(t, plan.ValidateRules(cfg.Rules, cfg.Platform))
		}
		if p, err := plan.ParsePlatform(data); err == nil {
			assert.NoError(t, p.Validate())
		}
	})
}
