package driver_test

import (
	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/tflmarena"
)

// cmsisRunner is a build of tflm_run (../shared/tools/README.md): its
// file, the code path its kernels take, the heliac options that plan for
// it (--cpu, --tflm-target), whether it is an emulated board (slow, its
// RAM bounded) and the library of ../shared/tflm it was linked with.
type cmsisRunner struct {
	name   string
	isa    kernels.ISA
	cpu    string
	target tflmarena.Target
	qemu   bool
	lib    tflmLib
}

// cmsisRunners are the CMSIS-NN runners, one per code path of CMSIS-NN:
// the host's portable C, the Cortex-M4's DSP code and the Cortex-M55's
// MVE code.
var cmsisRunners = []cmsisRunner{
	{name: "tflm_run_cmsis", isa: kernels.NoDSP, cpu: kernels.GenericCPU, target: tflmarena.Host64, lib: hostCMSISNN},
	{name: "tflm_run_m4_cmsis", isa: kernels.DSP, cpu: "cortex-m4", target: tflmarena.CortexM, qemu: true,
		lib: tflmLib{dir: "cortex-m4-cmsis-nn", cmsisNN: true}},
	{name: "tflm_run_m55_cmsis", isa: kernels.MVE, cpu: "cortex-m55", target: tflmarena.CortexM, qemu: true,
		lib: tflmLib{dir: "cortex-m55-cmsis-nn", cmsisNN: true}},
}
