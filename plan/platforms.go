package plan

import (
	"fmt"
	"sort"
	"strings"
)

// Built-in platforms.
//
// Sizes are the silicon's published figures in bytes, taken from Ambiq's own
// headers and linker scripts (cited beside each platform). They are upper
// bounds, not what a program has left: the start-up code, stack, heap and
// .data/.bss share the RAM banks, and a boot loader reserves the bottom of
// MRAM/flash. Give the bytes heliac may really use with a platform file or a
// config (base: apollo510, then override capacity), as the linker map says.
//
// Each Ambiq platform lists its writable banks fastest first: the
// tightly-coupled RAM (DTCM, or TCM on Cortex-M4 parts), then the shared
// system SRAM. ITCM is left out on purpose: Ambiq's linker scripts keep it for
// hot code (.itcm_text), and a bank in the spill order would be filled with
// tensors as soon as SRAM ran out. A board that wants tensors there adds it in
// a platform file. The non-volatile memory (MRAM, or flash on Apollo3) is the
// read-only bank that holds cold constants.
//
// BootInit is false everywhere: whether start-up code copies an image into a
// bank is decided by the linker script and start-up code, not by the chip, so
// heliac stages constants explicitly unless a platform file says otherwise.
//
// Section and InitSection are the output sections of Ambiq's own GNU ld
// scripts for each part, AmbiqAI/nsx-ambiq-sdk
// modules/nsx-core/src/<part>/gcc/linker_script*.ld (commit a7ad0012 for
// apollo4l, apollo4p, apollo510 and apollo330P; aa917d45 for apollo3p), so a
// module compiled for a built-in Apollo platform lands in the right memory
// with the linker script the SDK ships. In all of them the read-only bank's
// data is the .text output section, which takes every input section
// .rodata*: constants go to ".rodata". For the RAM banks, see each platform.
// The start-up code that fills .data-like sections and zeroes .bss-like ones
// was read for apollo510 only (its startup_gcc.c copies .data and .shared
// from MRAM and zeroes .bss and .sram_bss); for the other parts the sections'
// roles are those their linker scripts give (AT>, NOLOAD, symbol names).
// The C module zeroes persistent arenas itself, so it does not rely on it.

// builtins maps each lower-case built-in name to its constructor. Each call
// builds a new Platform, so callers may change what they get.
var builtins = map[string]func() Platform{
	"generic":    genericPlatform,
	"apollo3p":   apollo3p,
	"apollo4l":   apollo4l,
	"apollo4p":   apollo4p,
	"apollo510":  apollo510,
	"apollo330p": apollo330p,
}

// DefaultPlatform is the name of the platform used when none is given.
const DefaultPlatform = "generic"

// BuiltinPlatform returns the built-in platform with the given name, compared
// without regard to case.
func BuiltinPlatform(name string) (Platform, error) {
	f, ok := builtins[strings.ToLower(name)]
	if !ok {
		return Platform{}, fmt.Errorf("plan: %s", unknownPlatform(name))
	}
	return f(), nil
}

// BuiltinPlatformNames returns the names of the built-in platforms, sorted.
func BuiltinPlatformNames() []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func unknownPlatform(name string) string {
	return fmt.Sprintf("unknown platform %q (known: %s)", name, strings.Join(BuiltinPlatformNames(), ", "))
}

// genericPlatform is one unlimited RAM and one unlimited read-only memory for cold
// constants: the plan reports how much of each a model needs.
func genericPlatform() Platform {
	return Platform{
		Name: "generic",
		Banks: []Bank{
			{Name: "SRAM", Writable: true, Order: 0},
			{Name: "FLASH", Order: 1},
		},
	}
}

// apollo3p is the Apollo3 Blue Plus (Cortex-M4F): 2 MB flash, 768 KB SRAM of
// which the first 64 KB is TCM.
//
//   - TCM 64 KB at 0x10000000 and SRAM 704 KB (0xB0000) at 0x10010000: Zephyr
//     dts/arm/ambiq/ambiq_apollo3p_blue.dtsi (tcm and sram0 nodes).
//   - FLASH 2 MB: the same file maps 0x1F4000 bytes from 0xC000, the first
//     48 KB (0xC000) being the boot loader's; 0xC000 + 0x1F4000 = 2 MB.
//     AmbiqSuite's apollo3p linker scripts (ROMEM at 0xC000, 2048000 bytes)
//     agree.
//   - Sections, from nsx-ambiq-sdk's apollo3p/gcc/linker_script.ld: TCM
//     ".tcm_bss" (NOLOAD in TCM, "uninitialized data in the real low-latency
//     TCM") and ".tcm" (TCM AT>ROMEM, copied from _init_tcm); SRAM, the
//     script's RWMEM, ".bss" and ".data" (RWMEM AT>ROMEM), the defaults on
//     this part. The script's RWMEM starts 4 KB later than SRAM here
//     (STACKMEM takes 0x10010000).
func apollo3p() Platform {
	return tcmSRAMNVM("apollo3p", "cortex-m4", "TCM", 64, 704, "FLASH", 2048, sections{
		tcm: ".tcm_bss", tcmInit: ".tcm", sram: ".bss", sramInit: ".data", nvm: ".rodata"})
}

// apollo4l is the Apollo4 Lite (Cortex-M4F): 2 MB MRAM, 384 KB TCM and 1 MB
// shared SRAM.
//
//   - Taken from the gcc linker script Ambiq ships for the part,
//     AmbiqAI/nsx-ambiq-sdk modules/nsx-core/src/apollo4l/gcc/linker_script.ld:
//     MCU_TCM 393216 bytes at 0x10000000, SHARED_SRAM 1048576 bytes at
//     0x10060000, MCU_MRAM 1998848 bytes from 0x18000 (0x18000 + 1998848 =
//     2 MB; the first 96 KB hold the boot loader). A third-party port
//     (tikuOS arch/ambiq/devices/apollo4l.ld, citing AmbiqSuite R4.5.0
//     apollo4l_evb) gives the same map.
//   - Not confirmed against an Apollo4 Lite datasheet or a register header:
//     none was found. Check before relying on the SRAM figure.
//   - Sections, from the same linker script: TCM ".bss" and ".data"
//     (MCU_TCM AT>MCU_MRAM), the defaults on this part; SRAM ".sram_bss"
//     (NOLOAD in SHARED_SRAM: "Place with
//     __attribute__((section(".sram_bss")))") and ".shared" (SHARED_SRAM
//     AT>MCU_MRAM, loaded from _init_data_sram).
func apollo4l() Platform {
	return tcmSRAMNVM("apollo4l", "cortex-m4", "TCM", 384, 1024, "MRAM", 2048, ambiqSections)
}

// apollo4p is the Apollo4 Plus (Cortex-M4F): 2 MB MRAM and 2.75 MB RAM, of
// which 384 KB is TCM.
//
//   - zephyrproject-rtos/hal_ambiq mcu/apollo4p/regs/am_reg_base_addresses.h
//     (AmbiqSuite SDK 4.4.0): TCM_MAX_SIZE 384 KB at 0x10000000, then one
//     contiguous range of SSRAM0 1024 KB, extended RAM 384 KB (the former
//     DSP RAM) and SSRAM1 1024 KB, which is NONTCM_MAX_SIZE = 2432 KB from
//     0x10060000; MRAM_MAX_SIZE 2048 KB at 0x0.
//   - Zephyr's apollo4p_evb board page: "up to 2 MB of NVM, up to 2.75 MB of
//     RAM, 384 kB tightly coupled RAM, 384 kB extended RAM"
//     (384 + 2432 = 2816 KB = 2.75 MB). Zephyr's ambiq_apollo4p.dtsi maps
//     the same 0x2C0000 bytes of RAM from 0x10000000.
//   - SRAM here is the whole 2432 KB range; Ambiq's example linker scripts
//     name only its first 1 MB SHARED_SRAM.
//   - Sections, from nsx-ambiq-sdk's apollo4p/gcc/linker_script.ld, laid out
//     as apollo4l's: TCM ".bss" and ".data", SRAM ".sram_bss" and ".shared"
//     (which that script places in its 1 MB SHARED_SRAM).
func apollo4p() Platform {
	return tcmSRAMNVM("apollo4p", "cortex-m4", "TCM", 384, 2432, "MRAM", 2048, ambiqSections)
}

// apollo510 is the Apollo510 (Cortex-M55): 4 MB MRAM, 512 KB DTCM, 256 KB
// ITCM (left out, see above) and 3 MB shared SRAM.
//
//   - zephyrproject-rtos/hal_ambiq mcu/apollo510/regs/am_reg_base_addresses.h
//     (AmbiqSuite SDK 5.0.0): ITCM_MAX_SIZE 256 KB at 0x0, DTCM_MAX_SIZE
//     512 KB at 0x20000000, SSRAM_MAX_SIZE 3072 KB at 0x20080000,
//     MRAM_MAX_SIZE 4096 KB at 0x400000.
//   - Zephyr's dts/arm/ambiq/ambiq_apollo510.dtsi takes its itcm, dtcm, sram
//     and flash0 nodes from macros of the same names in Ambiq's devicetree
//     header apollo510/am_apollo510.h, which trims DTCM to 0x7C000 (496 KB)
//     and starts MRAM at 0x410000, after the 64 KB secure boot loader.
//   - Ambiq's neuralspotx memory-placement guide: MRAM 4 MB, TCM 496 KB
//     usable, ITCM 256 KB, shared SRAM 3 MB.
//   - Sections, from nsx-ambiq-sdk's apollo510/gcc/linker_script_sbl.ld:
//     DTCM (the script's MCU_TCM) ".bss" and ".data" (MCU_TCM AT>MCU_MRAM),
//     the defaults on this part; SRAM ".sram_bss" (NOLOAD in SHARED_SRAM)
//     and ".shared" (SHARED_SRAM AT>MCU_MRAM). Its startup_gcc.c copies
//     .data and .shared from MRAM and zeroes .bss and .sram_bss.
func apollo510() Platform {
	return tcmSRAMNVM("apollo510", "cortex-m55", "DTCM", 512, 3072, "MRAM", 4096, ambiqSections)
}

// apollo330p is the Apollo330 Plus (Cortex-M55): 2 MB MRAM, 256 KB DTCM, no
// ITCM and 1.75 MB shared SRAM.
//
//   - zephyrproject-rtos/hal_ambiq mcu/apollo330P/regs/am_reg_base_addresses.h
//     (AmbiqSuite SDK 5.2): DTCM_MAX_SIZE 256 KB at 0x20000000,
//     SSRAM_MAX_SIZE 1792 KB at 0x20080000, MRAM_MAX_SIZE 2048 KB at
//     0x400000, "ITCM: None". The header calls these the maximum sizes of the
//     family; "specific SKUs may vary".
//   - Ambiq's apollo330mP_evb linker script (nsx-ambiq-sdk
//     modules/nsx-core/src/apollo330P/gcc/linker_script_sbl.ld) agrees:
//     SHARED_SRAM 1835008 bytes, MCU_MRAM 2031616 bytes from 0x410000.
//   - No datasheet was found to confirm the figures per SKU.
//   - Sections, from the same linker script, laid out as apollo510's: DTCM
//     ".bss" and ".data", SRAM ".sram_bss" and ".shared".
func apollo330p() Platform {
	return tcmSRAMNVM("apollo330p", "cortex-m55", "DTCM", 256, 1792, "MRAM", 2048, ambiqSections)
}

// Bank returns the bank with the given name, compared with case.
func (p Platform) Bank(name string) (Bank, bool) {
	if i := p.bankIndex(name); i >= 0 {
		return p.Banks[i], true
	}
	return Bank{}, false
}

func (p Platform) bankIndex(name string) int {
	for i, b := range p.Banks {
		if b.Name == name {
			return i
		}
	}
	return -1
}

// WritableBanks returns the writable banks in allocation order: by Order,
// ties in the order of Banks. The slice is new.
func (p Platform) WritableBanks() []Bank {
	var w []Bank
	for _, b := range p.Banks {
		if b.Writable {
			w = append(w, b)
		}
	}
	sort.SliceStable(w, func(i, j int) bool { return w[i].Order < w[j].Order })
	return w
}

// ConstBank returns the bank cold constants live in: ConstantBank when set,
// otherwise the first read-only bank. ok is false when there is none.
func (p Platform) ConstBank() (Bank, bool) {
	if p.ConstantBank != "" {
		return p.Bank(p.ConstantBank)
	}
	for _, b := range p.Banks {
		if !b.Writable {
			return b, true
		}
	}
	return Bank{}, false
}

// bankNames lists the platform's bank names for messages.
func (p Platform) bankNames() string {
	names := make([]string, len(p.Banks))
	for i, b := range p.Banks {
		names[i] = b.Name
	}
	return strings.Join(names, ", ")
}

// sections are the linker sections of a built-in Ambiq part's banks.
type sections struct {
	tcm, tcmInit, sram, sramInit, nvm string
}

// ambiqSections are the sections of the nsx-ambiq-sdk linker scripts of
// the Apollo4 and Apollo5 parts: .data and .bss go to the TCM, .sram_bss
// and .shared to the shared SRAM, .rodata to MRAM.
var ambiqSections = sections{tcm: ".bss", tcmInit: ".data", sram: ".sram_bss", sramInit: ".shared", nvm: ".rodata"}

// tcmSRAMNVM builds the shape every built-in Ambiq part shares: a tightly
// coupled RAM allocated first, shared SRAM next, and a read-only
// non-volatile bank (flash or MRAM) for cold constants, and a CPU (GCC's
// -mcpu name). Sizes are in KiB.
func tcmSRAMNVM(name, cpu, tcm string, tcmKiB, sramKiB int64, nvm string, nvmKiB int64, s sections) Platform {
	return Platform{
		Name: name,
		CPU:  cpu,
		Banks: []Bank{
			{Name: tcm, Capacity: tcmKiB * 1024, Writable: true, Order: 0, Section: s.tcm, InitSection: s.tcmInit},
			{Name: "SRAM", Capacity: sramKiB * 1024, Writable: true, Order: 1, Section: s.sram, InitSection: s.sramInit},
			{Name: nvm, Capacity: nvmKiB * 1024, Order: 2, Section: s.nvm},
		},
		ConstantBank: nvm,
	}
}
