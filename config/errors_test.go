package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/heliac/heliac/config"
)

func TestParseErrors(t *testing.T) {
	const banks510 = "(banks: DTCM, SRAM, MRAM)"
	tests := []struct {
		name, in, err string
	}{
		{
			name: "unknown top-level key",
			in:   "platform: generic\nrule:\n  - class: scratch\n",
			err:  `config: line 2: unknown key "rule" in the config (known: platform, rules, external_arenas, kernel_scratch)`,
		},
		{
			name: "unknown platform key",
			in:   "platform:\n  base: generic\n  banks: []\n  cpu: m55\n",
			err:  `config: line 4: unknown key "cpu" in platform (known: base, name, constant_bank, banks)`,
		},
		{
			name: "unknown bank key",
			in:   "platform:\n  base: generic\n  banks:\n    - name: SRAM\n      size: 4\n",
			err:  `config: line 5: unknown key "size" in platform.banks[0] (known: name, capacity, writable, boot_init, alignment, order, section, init_section)`,
		},
		{
			name: "unknown rule key",
			in:   "platform: generic\nrules:\n  - class: scratch\n    memory: SRAM\n  - class: scratch\n    bank: SRAM\n",
			err:  `config: line 6: unknown key "bank" in rules[1] (known: class, tensor, name, memory, source, hottest)`,
		},
		{
			name: "unknown key in JSON",
			in:   "{\"platform\": \"generic\",\n \"extra\": 1}",
			err:  `config: line 2: unknown key "extra" in the config (known: platform, rules, external_arenas, kernel_scratch)`,
		},
		{
			name: "key given twice",
			in:   "platform:\n  base: generic\n  name: a\n  name: b\n",
			err:  `config: line 4: platform: key "name" is already given at line 3`,
		},
		{
			name: "an alignment C cannot say",
			in:   "platform:\n  base: generic\n  banks:\n    - name: SRAM\n      alignment: 1073741824\n",
			err:  `plan: bank "SRAM": alignment 1073741824 is more than 268435456, the most C compilers accept in _Alignas`,
		},
		{
			name: "capacity not an integer",
			in:   "platform:\n  base: generic\n  banks:\n    - name: SRAM\n      capacity: 512K\n",
			err:  `config: line 5: platform.banks[0].capacity: want an integer, got "512K"`,
		},
		{
			name: "capacity a fraction",
			in:   "platform:\n  base: generic\n  banks:\n    - name: SRAM\n      capacity: 1.5\n",
			err:  `config: line 5: platform.banks[0].capacity: want an integer, got "1.5"`,
		},
		{
			name: "capacity out of range",
			in:   "platform:\n  base: generic\n  banks:\n    - name: SRAM\n      capacity: 99999999999999999999\n",
			err:  `config: line 5: platform.banks[0].capacity: 99999999999999999999 is out of range`,
		},
		{
			name: "order out of range",
			in:   "platform:\n  base: generic\n  banks:\n    - name: SRAM\n      order: 9223372036854775808\n",
			err:  `config: line 5: platform.banks[0].order: 9223372036854775808 is out of range`,
		},
		{
			name: "writable not a boolean",
			in:   "platform:\n  base: generic\n  banks:\n    - name: SRAM\n      writable: yes\n",
			err:  `config: line 5: platform.banks[0].writable: want true or false, got "yes"`,
		},
		{
			name: "banks not a list",
			in:   "platform:\n  base: generic\n  banks:\n    SRAM: {capacity: 4}\n",
			err:  `config: line 4: platform.banks: want a list, got a mapping`,
		},
		{
			name: "rule not a mapping",
			in:   "platform: generic\nrules:\n  - scratch\n",
			err:  `config: line 3: rules[0]: want a mapping, got "scratch"`,
		},
		{
			name: "memory not a string",
			in:   "platform: generic\nrules:\n  - class: scratch\n    memory: [SRAM]\n",
			err:  `config: line 4: rules[0].memory: want a string, got a list`,
		},
		{
			name: "config not a mapping",
			in:   "- platform: generic\n",
			err:  `config: line 1: want a mapping with platform and rules, got a list`,
		},
		{
			name: "platform neither a name nor a mapping",
			in:   "platform: [apollo510]\n",
			err:  `config: line 1: platform: want a built-in platform name or a mapping, got a list`,
		},
		{
			name: "platform a number",
			in:   "platform: 510\n",
			err:  `config: line 1: platform: want a built-in platform name or a mapping, got "510"`,
		},
		{
			name: "unknown built-in",
			in:   "\nplatform: apollo9\n",
			err:  `config: line 2: platform: unknown platform "apollo9" (known: apollo330p, apollo3p, apollo4l, apollo4p, apollo510, generic)`,
		},
		{
			name: "unknown base",
			in:   "platform:\n  base: apollo9\n",
			err:  `config: line 2: platform.base: unknown platform "apollo9" (known: apollo330p, apollo3p, apollo4l, apollo4p, apollo510, generic)`,
		},
		{
			name: "bank without name",
			in:   "platform:\n  base: generic\n  banks:\n    - name: SRAM\n    - capacity: 4\n",
			err:  `config: line 5: platform.banks[1]: name is missing`,
		},
		{
			name: "bank given twice",
			in:   "platform:\n  banks:\n    - {name: SRAM, writable: true}\n    - {name: SRAM, capacity: 4}\n",
			err:  `config: line 4: platform.banks[1]: bank "SRAM" is already given at platform.banks[0]`,
		},
		{
			name: "bank given twice, after a null one",
			in:   "platform:\n  banks:\n    - ~\n    - {name: SRAM, writable: true}\n    - {name: SRAM}\n",
			err:  `config: line 5: platform.banks[2]: bank "SRAM" is already given at platform.banks[1]`,
		},
		{
			name: "merge keys",
			in:   "platform:\n  base: generic\n  banks:\n    - <<: {name: SRAM}\n",
			err:  `config: line 4: platform.banks[0]: merge keys (<<) are not supported`,
		},
		{
			name: "bad YAML",
			in:   "platform: generic\n  rules: []\n",
			err:  `config: line 2: mapping values are not allowed in this context`,
		},
		{
			name: "bad JSON",
			in:   "{\"platform\": \"generic\"\n",
			err:  `config: line 1: did not find expected ',' or '}'`,
		},
		{
			name: "two documents",
			in:   "platform: generic\n---\nplatform: apollo510\n",
			err:  `config: line 2: a second document; give one`,
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
			name: "hottest not an integer",
			in:   "platform: apollo510\nrules:\n  - class: constant\n    memory: DTCM\n    source: MRAM\n    hottest: 64k\n",
			err:  `config: line 6: rules[0].hottest: want an integer, got "64k"`,
		},
		{
			name: "hottest negative",
			in:   "platform: apollo510\nrules:\n  - {class: constant, memory: DTCM, source: MRAM, hottest: -1}\n",
			err:  `plan: rule 0: hottest -1 is negative; give a budget in bytes`,
		},
		{
			name: "hottest on a scratch rule",
			in:   "platform: apollo510\nrules:\n  - {class: scratch, memory: DTCM, hottest: 4096}\n",
			err:  `plan: rule 0: hottest is only for class: constant rules (the hottest constants up to a budget in bytes)`,
		},
		{
			name: "hottest on a name rule",
			in:   "platform: apollo510\nrules:\n  - {name: \"w*\", memory: DTCM, source: MRAM, hottest: 4096}\n",
			err:  `plan: rule 0: hottest is only for class: constant rules (the hottest constants up to a budget in bytes)`,
		},
		{
			name: "hottest where every constant is by default",
			in:   "platform: apollo510\nrules:\n  - {class: constant, memory: MRAM, hottest: 4096}\n",
			err:  `plan: rule 0: hottest keeps constants cold in MRAM, where every constant is by default; give memory a faster bank`,
		},
		{
			name: "hottest where another rule puts every constant",
			in:   "platform: apollo510\nrules:\n  - {class: constant, memory: DTCM, source: MRAM, hottest: 4096}\n  - {class: constant, memory: DTCM, source: MRAM}\n",
			err:  `plan: rule 0: hottest puts constants in DTCM staged from MRAM as rule 1 does for every constant; drop one, or send rule 1's elsewhere`,
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
			got, err := config.Parse([]byte(tt.in))
			assert.EqualError(t, err, tt.err)
			assert.Equal(t, config.File{}, got)
		})
	}
}
