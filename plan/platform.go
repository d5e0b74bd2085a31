package plan

import (
	"errors"
	"fmt"
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
}

// Validate checks that bank names are unique and not empty, capacities are
// not negative, alignments are 0 or a power of two, some bank is writable
// and ConstantBank, when set, names a read-only bank. It reports every
// problem, one a line.
func (p Platform) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf("plan: "+format, args...)) }
	seen := map[string]int{}
	writable := false
	for i, b := range p.Banks {
		id := fmt.Sprintf("bank %q", b.Name)
		switch j, dup := seen[b.Name]; {
		case b.Name == "":
			id = fmt.Sprintf("bank %d", i)
			add("%s: name is empty", id)
		case dup:
			add("%s: defined twice (banks %d and %d)", id, j, i)
		default:
			seen[b.Name] = i
		}
		if b.Capacity < 0 {
			add("%s: capacity %d is negative", id, b.Capacity)
		}
		if b.Alignment < 0 || b.Alignment&(b.Alignment-1) != 0 {
			add("%s: alignment %d is not 0 or a power of two", id, b.Alignment)
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
