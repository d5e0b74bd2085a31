package kernels

import (
	"fmt"
	"strings"
)

// ISA is the instruction-set extension of an Arm Cortex-M CPU that
// CMSIS-NN chooses its kernels by (Include/arm_nn_math_types.h 56-66:
// ARM_MATH_DSP from __ARM_FEATURE_DSP, ARM_MATH_MVEI from
// __ARM_FEATURE_MVE).
type ISA uint8

// The extensions.
const (
	// NoDSP is plain C kernels (Cortex-M0, M0+, M3).
	NoDSP ISA = iota
	// DSP is the DSP extension (Cortex-M4, M7, M33, M35P): ARM_MATH_DSP.
	DSP
	// MVE is Helium, the M-profile vector extension (Cortex-M55, M85):
	// ARM_MATH_MVEI.
	MVE
)

// String names the extension as heliac's messages do.
func (i ISA) String() string {
	switch i {
	case NoDSP:
		return "no DSP extension"
	case DSP:
		return "DSP extension"
	case MVE:
		return "MVE (Helium)"
	}
	return fmt.Sprintf("ISA(%d)", int(i))
}

// GenericCPU names a CPU of neither extension: CMSIS-NN's portable C
// code, as it runs on any host (TFLM's x86-64 build of its CMSIS-NN
// kernels) and on Cortex-M0/M0+/M3/M23.
const GenericCPU = "generic"

// cpus are the CPUs --cpu knows, as GCC's -mcpu names them, with their
// extension (TFLM's cortex_m_generic_makefile.inc 38-105 builds them so),
// and GenericCPU.
var cpus = []struct {
	name string
	isa  ISA
}{
	{GenericCPU, NoDSP},
	{"cortex-m0", NoDSP}, {"cortex-m0plus", NoDSP}, {"cortex-m3", NoDSP}, {"cortex-m23", NoDSP},
	{"cortex-m4", DSP}, {"cortex-m7", DSP}, {"cortex-m33", DSP}, {"cortex-m35p", DSP},
	{"cortex-m55", MVE}, {"cortex-m85", MVE},
}

// CPUs lists the CPU names CPU knows.
func CPUs() []string {
	out := make([]string, len(cpus))
	for i, c := range cpus {
		out[i] = c.name
	}
	return out
}

// CPU returns the target of a Cortex-M CPU named as GCC's -mcpu names it
// ("cortex-m55"), or an error listing the names it knows.
func CPU(name string) (Target, error) {
	for _, c := range cpus {
		if c.name == name {
			return Target{CPU: c.name, PointerSize: 4, ISA: c.isa}, nil
		}
	}
	return Target{}, fmt.Errorf("kernels: unknown CPU %q (known: %s)", name, strings.Join(CPUs(), ", "))
}
