package plan

// Bank is one memory of a platform. Sizes are bytes.
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
	Name  string `json:"name" yaml:"name"`
	Banks []Bank `json:"banks" yaml:"banks"`
	// ConstantBank names the read-only bank cold constants live in; ""
	// means the first read-only bank in Banks.
	ConstantBank string `json:"constant_bank,omitempty" yaml:"constant_bank,omitempty"`
}
