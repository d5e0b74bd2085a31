package cortexm55_test

import (
	"testing"

	"github.com/heliac/heliac/internal/exampletest"
)

// board is the AN547 as TestQEMU runs it: scratch in DTCM, constants cold
// in FLASH (the QSPI image) or staged into SRAM, the reference's arena in
// DDR.
var board = exampletest.Board{
	// TFLM's reference kernels, and CMSIS-NN's (their MVE code on the
	// M55: heliac plans with --kernels cmsis-nn --cpu cortex-m55).
	Builds: []exampletest.KernelBuild{
		{Name: "reference", Lib: "cortex-m55", Runner: "tflm_run_m55"},
		{Name: "cmsis-nn", Lib: "cortex-m55-cmsis-nn", Runner: "tflm_run_m55_cmsis"},
	},
	RefArenaBytes: 16 << 20,
	Scratch:       "DTCM",
	Stage:         "SRAM",
	Image:         "FLASH",
	MeasureEnv:    "HELIAC_M55_MEASURE",
	CorpusModels:  exampletest.CorpusModels,
	// make test's corpus model, with both kernel builds: a voice
	// activity detector streaming through resource variables, with
	// CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED for CMSIS-NN (the
	// bundled models bring WHILE and CALL_ONCE, TestTFLiteCRunsInTFLM
	// person_detect on the M55). HELIAC_FULL_SWEEP=1 or
	// HELIAC_M55_MEASURE (make full-sweep, make bench-m55) run every one
	// of CorpusModels.
	CIModels:    map[string]bool{"esphome-mww/vad_v2.tflite": true},
	ShortModels: map[string]bool{"hello_world_int8.tflite": true, "call_once_mul.tflite": true},
	RefModels:   map[string]bool{"hello_world_int8.tflite": true, "call_once_mul.tflite": true},
	// make test stages the first only; make bench-m55 all.
	StagedModels: map[string]bool{"hello_world_int8.tflite": true, "call_once_mul.tflite": true,
		"tflite-micro/person_detect.tflite": true},
	// One of each kind, to keep CI's minutes; make bench-m55 measures
	// every model.
	MeasuredModels: map[string]bool{"hello_world_int8.tflite": true, "call_once_mul.tflite": true,
		"tflite-micro/person_detect.tflite": true, "esphome-mww/vad_v2.tflite": true, "mlperf-tiny/kws_ref_model.tflite": true,
		"tflite-micro/trained_lstm_int8.tflite": true},
}

// TestQEMU builds the example for the bundled models and a set of corpus
// models, each planned on the AN547's banks with the default rules
// (stage-none.yaml: scratch in DTCM, every constant cold in FLASH), with
// each of TFLM's kernel builds (KERNELS=reference, KERNELS=cmsis-nn), runs
// it under QEMU and compares every output line of the harness
// (driver/testdata/runtime) on heliac's module with the build's runner
// (tflm_run_m55, tflm_run_m55_cmsis) on the original model (two seeds,
// three invocations). The harness on TFLM's MicroInterpreter, on the same
// start-up code, linker script and kernels, must match the runner too
// (RefModels). make measure must show heliac's program below TFLM's
// MicroInterpreter in flash and in RAM on every model it measures
// (MeasuredModels; every model with HELIAC_M55_MEASURE, make bench-m55),
// name the rules file and the kernels, and count instructions per
// inference for both; the figures are logged, and written with
// HELIAC_M55_MEASURE. StagedModels run again with constants staged into
// SRAM (RULES=rules.py, reference kernels), bit-exact too. The example's
// own main.c must run as well (exampletest.Run).
func TestQEMU(t *testing.T) {
	skipUnderRace(t)
	exampletest.Run(t, board)
}

// speed is stage-hot.yaml as TestQEMUSpeed runs it: the hottest constants
// staged from FLASH into DTCM within 16 KiB, with CMSIS-NN's kernels.
var speed = exampletest.SpeedRules{
	File:   "stage-hot.yaml",
	Build:  exampletest.KernelBuild{Name: "cmsis-nn", Lib: "cortex-m55-cmsis-nn", Runner: "tflm_run_m55_cmsis"},
	Fast:   "DTCM",
	Budget: 16384,
	// make test's model: a streaming wake word detector (resource
	// variables) whose constants do not all fit the budget, so the rule
	// chooses; HELIAC_FULL_SWEEP=1 (make full-sweep) runs every one of
	// CorpusModels.
	CIModel: "esphome-mww/okay_nabu_v2.tflite",
}

// TestQEMUSpeed runs the example with the rules that choose its banks for
// speed (stage-hot.yaml) under KERNELS=cmsis-nn: heliac's program prints
// tflm_run_m55_cmsis's lines on the original model, the hottest constants
// are staged into DTCM within the budget, and FLASH reads fewer bytes per
// inference than with the default rules, every bank together the same
// (exampletest.RunSpeed).
func TestQEMUSpeed(t *testing.T) {
	skipUnderRace(t)
	exampletest.RunSpeed(t, board, speed)
}
