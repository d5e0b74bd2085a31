package plan

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Bank is one memory of a platform. Sizes are bytes.
//
// Bank is the one declaration of a bank's fields. Its yaml tags are the keys
// of a bank in config and platform files: package config takes the keys it
// accepts from them. Its json tags name the same keys, those of a bank in
// plan.json; a test in package config checks that the two agree.
type Bank struct {
	// Name identifies the bank in plans and rules: ITCM, DTCM, SRAM, MRAM,
	// PSRAM, FLASH or a user-defined name.
	Name string `json:"name" yaml:"name"`
	// Capacity is the bytes heliac may use in the bank; 0 means unlimited.
	Capacity int64 `json:"capacity" yaml:"capacity"`
	// Writable banks hold scratch, persistent and staged constant arenas;
	// read-only banks (flash, MRAM) hold cold constants.
	Writable bool `json:"writable" yaml:"writable"`
	// BootInit is true for RAM that the start-up code initialises from an
	// image (.data), so it can hold constants without a staging copy.
	BootInit bool `json:"boot_init" yaml:"boot_init"`
	// Alignment is the bank's minimum offset alignment; 0 means the plan's.
	Alignment int64 `json:"alignment" yaml:"alignment"`
	// Order ranks banks for allocation: tensors go to the writable bank
	// with the lowest Order first and spill to the next when it is full.
	// Ties keep the order of Platform.Banks.
	Order int `json:"order" yaml:"order"`
	// Section is the linker section the C module places the bank's arenas
	// in (its <PREFIX>_PUT_IN_<BANK> macro): for a writable bank, one the
	// start-up code does not fill from an image (.bss-like, or NOLOAD); for
	// a read-only bank, where cold constants and staged images lie. "" leaves
	// placement to the compiler and linker's defaults.
	Section string `json:"section" yaml:"section"`
	// InitSection is, for a writable bank, the section the start-up code
	// fills from an image (.data-like): where the C module places constant
	// arenas that a BootInit bank holds without staging (its
	// <PREFIX>_PUT_IN_<BANK>_INIT macro, written for BootInit banks). ""
	// leaves it to the defaults; a read-only bank ignores it.
	InitSection string `json:"init_section" yaml:"init_section"`
}

// maxSection is the longest section name a bank may give.
const maxSection = 128

// checkSection returns why s cannot name a linker section in the C module
// and the assembler stub, or "" when it can: ASCII letters, digits, '.',
// '_' and '-', at most maxSection of them, so that it needs no quoting in C
// strings, assembler directives or linker scripts.
func checkSection(s string) string {
	if len(s) > maxSection {
		return fmt.Sprintf("is %d bytes long, more than %d", len(s), maxSection)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return "may hold only ASCII letters, digits, '.', '_' and '-'"
		}
	}
	return ""
}

// MaxAlignment is the largest alignment, in bytes, a bank or a plan may
// ask for: 2^28 (256 MiB), the most GCC and arm-none-eabi-gcc accept in
// _Alignas for an object, which the emitted C declares every arena with
// (clang accepts more). Larger alignments would give C that does not
// compile.
const MaxAlignment = 1 << 28

// checkAlignment returns why align cannot be an alignment, or "" when it
// can: it must be a power of two no larger than MaxAlignment (or 0 where
// zeroOK says 0 stands for a default).
func checkAlignment(align int64, zeroOK bool) string {
	switch {
	case align == 0 && zeroOK:
		return ""
	case align < 1 || align&(align-1) != 0:
		if zeroOK {
			return fmt.Sprintf("alignment %d is not 0 or a power of two", align)
		}
		return fmt.Sprintf("alignment %d is not a positive power of two", align)
	case align > MaxAlignment:
		return fmt.Sprintf("alignment %d is more than %d, the most C compilers accept in _Alignas", align, MaxAlignment)
	}
	return ""
}

// Platform is a set of memory banks.
type Platform struct {
	// Name identifies the platform in plans and messages.
	Name string `json:"name" yaml:"name"`
	// Banks are the platform's memories.
	Banks []Bank `json:"banks" yaml:"banks"`
	// ConstantBank names the read-only bank cold constants live in; ""
	// means the first read-only bank in Banks.
	ConstantBank string `json:"constant_bank,omitempty" yaml:"constant_bank,omitempty"`
	// CPU is the platform's CPU as GCC's -mcpu names it ("cortex-m55"),
	// which chooses the kernels' code path (kernels.CPU) when the
	// options name none; "" for a platform that does not say.
	CPU string `json:"cpu,omitempty" yaml:"cpu,omitempty"`
}

// Validate checks that bank names and the platform's name are printable
// UTF-8 (they reach summaries, C comments and terminals as they are), bank
// names unique and not empty, capacities not negative, alignments 0 or a
// power of two up to MaxAlignment, section names ones C and linker scripts
// take as they are (checkSection), some bank writable, and ConstantBank, when set, a read-only bank. It
// reports every problem, one a line.
func (p Platform) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf("plan: "+format, args...)) }
	seen := map[string]int{}
	writable := false
	if !printable(p.Name) {
		add("platform name %q is not printable UTF-8", p.Name)
	}
	for i, b := range p.Banks {
		id := fmt.Sprintf("bank %q", b.Name)
		switch j, dup := seen[b.Name]; {
		case b.Name == "":
			id = fmt.Sprintf("bank %d", i)
			add("%s: name is empty", id)
		case !printable(b.Name):
			id = fmt.Sprintf("bank %d", i)
			add("%s: name %q is not printable UTF-8", id, b.Name)
		case dup:
			add("%s: defined twice (banks %d and %d)", id, j, i)
		default:
			seen[b.Name] = i
		}
		if b.Capacity < 0 {
			add("%s: capacity %d is negative", id, b.Capacity)
		}
		if why := checkAlignment(b.Alignment, true); why != "" {
			add("%s: %s", id, why)
		}
		if why := checkSection(b.Section); why != "" {
			add("%s: section %q %s", id, b.Section, why)
		}
		if why := checkSection(b.InitSection); why != "" {
			add("%s: init_section %q %s", id, b.InitSection, why)
		}
		writable = writable || b.Writable
	}
	if !writable {
		add("%s has no writable bank", p.describe())
	}
	if p.ConstantBank != "" {
		if b, ok := p.Bank(p.ConstantBank); !ok {
			add("constant_bank %q is not a bank of %s (banks: %s)", p.ConstantBank, p.describe(), p.bankNames())
		} else if b.Writable {
			add("constant_bank %q is writable; cold constants need a read-only bank", p.ConstantBank)
		}
	}
	return errors.Join(errs...)
}

// describe names the platform in messages.
func (p Platform) describe() string {
	if p.Name == "" {
		return "the platform"
	}
	return fmt.Sprintf("platform %q", p.Name)
}

// printable reports whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}
