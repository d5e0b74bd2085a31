package driver_test

import (
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/tflmarena"
)

// cmsisRunner is a build of tflm_run (../shared/tools/README.md): its
// file, the code path its kernels take, the heliac options that plan for
// it (--cpu, --tflm-target) and whether it is an emulated board (slow,
// its RAM bounded).
type cmsisRunner struct {
	name   string
	isa    kernels.ISA
	cpu    string
	target tflmarena.Target
	qemu   bool
}

// cmsisRunners are the CMSIS-NN runners, one per code path of CMSIS-NN:
// the host's portable C, the Cortex-M4's DSP code and the Cortex-M55's
// MVE code.
var cmsisRunners = []cmsisRunner{
	{name: "tflm_run_cmsis", isa: kernels.NoDSP, cpu: kernels.GenericCPU, target: tflmarena.Host64},
	{name: "tflm_run_m4_cmsis", isa: kernels.DSP, cpu: "cortex-m4", target: tflmarena.CortexM, qemu: true},
	{name: "tflm_run_m55_cmsis", isa: kernels.MVE, cpu: "cortex-m55", target: tflmarena.CortexM, qemu: true},
}
