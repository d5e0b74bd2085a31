package cortexm4_test

import (
	"testing"

	"github.com/heliac/heliac/internal/exampletest"
)

// board is the AN386 as TestQEMU runs it: scratch in SSRAM2, constants
// cold in SSRAM1 (the program's image) or staged into SSRAM3, the
// reference's arena in PSRAM (8 MiB: tflm_run_m4 holds model and arena in
// the board's 16 MiB).
var board = exampletest.Board{
	// TFLM's reference kernels, and CMSIS-NN's (their DSP code on the
	// M4: heliac plans with --kernels cmsis-nn --cpu cortex-m4).
	Builds: []exampletest.KernelBuild{
		{Name: "reference", Lib: "cortex-m4", Runner: "tflm_run_m4"},
		{Name: "cmsis-nn", Lib: "cortex-m4-cmsis-nn", Runner: "tflm_run_m4_cmsis"},
	},
	RefArenaBytes: 8 << 20,
	Scratch:       "SSRAM2",
	Stage:         "SSRAM3",
	Image:         "SSRAM1",
	MeasureEnv:    "HELIAC_M4_MEASURE",
	CorpusModels:  exampletest.CorpusModels,
	// make test's corpus model, with both kernel builds: the M55's
	// (resource variables; CONV_2D, DEPTHWISE_CONV_2D and
	// FULLY_CONNECTED on CMSIS-NN's DSP code). HELIAC_FULL_SWEEP=1 or
	// HELIAC_M4_MEASURE (make full-sweep, make bench-m4) run every one of
	// CorpusModels.
	CIModels:    map[string]bool{"esphome-mww/vad_v2.tflite": true},
	ShortModels: map[string]bool{"hello_world_int8.tflite": true, "call_once_mul.tflite": true},
	RefModels:   map[string]bool{"hello_world_int8.tflite": true},
	// make test stages the first only; make bench-m4 all.
	StagedModels: map[string]bool{"hello_world_int8.tflite": true, "call_once_mul.tflite": true,
		"tflite-micro/person_detect.tflite": true},
	// What make test runs of them, to keep CI's minutes; make bench-m4
	// measures every model.
	MeasuredModels: map[string]bool{"hello_world_int8.tflite": true, "call_once_mul.tflite": true,
		"esphome-mww/vad_v2.tflite": true},
}

// TestQEMU is the Cortex-M55 example's test (examples/cortex-m55/test) on
// the Cortex-M4F: it builds the example for the bundled models and a set
// of corpus models, each planned on the AN386's banks with the default
// rules (stage-none.yaml: scratch in SSRAM2, every constant cold in
// SSRAM1), with each of TFLM's kernel builds (KERNELS=reference,
// KERNELS=cmsis-nn), runs it under QEMU's -M mps2-an386 and compares every
// output line of the harness on heliac's module with the build's runner
// (tflm_run_m4, tflm_run_m4_cmsis) on the original model (two seeds, three
// invocations). The harness on TFLM's MicroInterpreter must match the
// runner too (RefModels). make measure must show heliac's program below
// TFLM's in flash and in RAM on every model it measures (MeasuredModels;
// every model with HELIAC_M4_MEASURE, make bench-m4), name the rules file
// and the kernels, and count instructions per inference for both; the
// figures are logged, and written with HELIAC_M4_MEASURE. StagedModels run
// again with constants staged into SSRAM3 (RULES=rules.py, reference
// kernels), bit-exact too. The example's own main.c must run as well
// (exampletest.Run).
func TestQEMU(t *testing.T) {
	skipUnderRace(t)
	exampletest.Run(t, board)
}
