# heliac — ahead-of-time memory planner for TFLite models.
# `make help` lists the targets.

GO        ?= go
PKGS      := ./...
FUZZTIME  ?= 60s
FUZZ      ?=
BIN       := bin/heliac

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## build bin/heliac
	$(GO) build -trimpath -o $(BIN) ./cmd/heliac

.PHONY: test
# internal/cmd/testprogress runs go test -json and prints a line as each
# package starts and ends, failed tests whole, and the count of passed,
# failed and skipped tests with the skips' reasons. The test targets end
# with a note of the tests skipped for want of ../shared (or
# $$HELIAC_SHARED), whether or not the tests passed.
# SWEEPS are the corpus sweeps of the driver, of the Cortex-M55 and Cortex-M4
# examples, of stripe, of emit and of the command's zoo (SWEEP_PKGS): heliac once per model, then
# external tools (tflm_run, QEMU, compilers, Python). They skip under the race detector, which slows them
# tenfold and finds nothing there, and run in a second step without it
# (driver's TestSweepsListed keeps the list whole).
SWEEPS := ^(TestApplyBitExactTFLM|TestBreakMirrorPad|TestCCompilesCorpus|TestCMSISNNConvContracts|TestCMSISNNCorpus|TestCMSISNNDepthwiseContracts|TestCMSISNNDepthwisePlans|TestCompileBuiltinPlatforms|TestCompileSetCorpus|TestDefaultPlansOnEveryRunner|TestDifferentialRuntime|TestDispatcherRunsEveryModel|TestDispatcherSeesAClobber|TestKernelScratchAtBound|TestMemoryPlanCheck|TestNeverWorseThanTFLM|TestOverwriteInputsNeverLarger|TestPatchesAutoChoice|TestPatchesAutoFitsFirst|TestPatchesAutoJudgedOnWholeArena|TestPatchesAutoTFLM|TestQEMU|TestQEMUSpeed|TestRuntimeBitExact|TestRuntimeBitExactCMSISNN|TestRuntimeBrokenPlans|TestRuntimeCMSISNNBrokenPlans|TestRuntimeEveryOperator|TestRuntimeHarnessTFLMBackend|TestRuntimeSeesAClobber|TestStripeRebuildMatchesApplyCachedCorpus|TestStripeRebuildMatchesApplyCorpus|TestStripeRebuildMatchesApplyGroupsCorpus|TestTFLMArenaDecode|TestTFLMArenaExact|TestTFLMArenaExactCMSISNN|TestTFLMArenaKernelVariants|TestTFLMArenaMathOps|TestTFLMArenaShapeOps|TestTFLMCMSISNNElementwise|TestTFLMHeadWithTFLMPlanner|TestTFLMInPlaceContractsBite|TestTFLMOneScratchBank|TestTFLMPlansVerify|TestTFLMRewriteChangesNothing|TestTFLMRunsHeliacPlans|TestTFLMRunsTFLMPlacement|TestTFLMSeesAClobber|TestTFLiteCRunsInTFLM|TestZooCorpus)$$
SWEEP_PKGS := ./driver/ ./examples/cortex-m55/test/ ./examples/cortex-m4/test/ ./stripe/ ./emit/ ./cmd/heliac/
# SWEEPS_SPLIT are driver sweeps make test runs in a second go test beside
# the others, so that the driver's long sweeps use both cores: about half
# the driver's sweep time, by the slowest-tests lines make test prints.
SWEEPS_SPLIT := ^(TestTFLMArenaExact|TestRuntimeBitExact|TestTFLiteCRunsInTFLM|TestDifferentialRuntime|TestCMSISNNDepthwiseContracts|TestTFLMRunsHeliacPlans|TestCMSISNNConvContracts|TestDefaultPlansOnEveryRunner|TestCMSISNNDepthwisePlans|TestDispatcherSeesAClobber|TestTFLMArenaExactCMSISNN)$$

test: ## run every test with the race detector, then the corpus sweeps without it (uses ../shared when present; says when it is absent)
	@status=0; $(GO) run ./internal/cmd/testprogress $(GO) test -race -count=1 -timeout 30m -json $(PKGS) || status=$$?; \
		{ $(GO) run ./internal/cmd/testprogress $(GO) test -count=1 -timeout 30m -json -run '$(SWEEPS_SPLIT)' ./driver/ & split=$$!; }; \
		$(GO) run ./internal/cmd/testprogress $(GO) test -count=1 -timeout 30m -json -run '$(SWEEPS)' -skip '$(SWEEPS_SPLIT)' $(SWEEP_PKGS) || status=$$?; \
		wait $$split || status=$$?; \
		$(GO) run ./internal/cmd/skips; exit $$status

.PHONY: test-short
test-short: ## run the quick tests only
	@status=0; $(GO) run ./internal/cmd/testprogress $(GO) test -short -json $(PKGS) || status=$$?; \
		$(GO) run ./internal/cmd/skips; exit $$status

.PHONY: vet
vet: ## go vet
	$(GO) vet $(PKGS)

.PHONY: fmt-check
fmt-check: ## fail when a file is not gofmt-formatted
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi

# staticcheck is pinned and run with `go run`, so it needs no install step
# and no entry in go.mod.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: staticcheck
staticcheck: ## run staticcheck (pinned version)
	$(GO) run $(STATICCHECK) $(PKGS)

.PHONY: lint
lint: vet fmt-check staticcheck ## vet, fmt-check and staticcheck

.PHONY: golden
golden: ## rewrite golden files from the current code
	HELIAC_UPDATE=1 $(GO) test -count=1 $(PKGS)

# Every fuzz target, as package:Function; fuzz_test.go at the root checks
# that the list names them all.
FUZZ_TARGETS := tflite:FuzzLoad tflite:FuzzSetMetadata verify:FuzzPlan verify:FuzzBlocks \
	config:FuzzParse plan/dsa:FuzzReadCSV verify:FuzzC verify:FuzzNames verify:FuzzFastJSON verify:FuzzStripeRecord

.PHONY: fuzz
fuzz: ## fuzz every target for FUZZTIME each (default 60s); FUZZ=FuzzLoad runs one
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; \
		if [ -n "$(FUZZ)" ] && [ "$(FUZZ)" != "$$name" ]; then continue; fi; \
		echo "fuzz $$name (./$$pkg) for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 3s ./$$pkg/ || exit 1; \
	done

.PHONY: check-c
check-c: ## compile the golden C sources with every available C compiler
	$(GO) test -count=1 -run 'Compile' ./emit/

.PHONY: schema
schema: ## regenerate tflite/schema from schema.fbs (needs flatc)
	sh tflite/schema/generate.sh

.PHONY: interop
interop: ## run stock TFLM (../shared/tools/tflm_run) on heliac's plans for every corpus model and print the report
	$(GO) test -count=1 -run 'TestTFLM' -v ./driver/ | grep -v -e '^=== ' -e '^    --- PASS'

# The long differential test: DIFF_TIME of random models (or DIFF_MODELS of
# them), from seed DIFF_SEED; failing models are kept (HELIAC_DIFF_KEEP).
# DIFF_RUNTIME=1 also runs every model through heliac's runtime (--runtime
# tflm built against ../shared/tflm: a g++ build per model, so fewer models
# in the same time). DIFF_PATCHES=1 also runs the stripe differential on every
# model with regions to stripe: random regions and uneven rows through
# stripe.Apply, the verifier's rebuild and TFLM, and one model in three
# through --patches auto --emit-tflite (driver/stripediff_test.go).
DIFF_TIME    ?= 10m
DIFF_MODELS  ?=
DIFF_SEED    ?= 1
DIFF_RUNTIME ?=
DIFF_PATCHES ?=

.PHONY: difftest
difftest: ## compare stock TFLM on random valid models and on heliac's --emit-tflite of them (DIFF_RUNTIME=1: and heliac's runtime; DIFF_PATCHES=1: and random stripe rewrites of them) for DIFF_TIME (default 10m), or DIFF_MODELS models, from DIFF_SEED; prints the coverage
	@out=$$(mktemp); status=0; \
	HELIAC_DIFF_TIME=$(DIFF_TIME) HELIAC_DIFF_MODELS=$(DIFF_MODELS) HELIAC_DIFF_SEED=$(DIFF_SEED) HELIAC_DIFF_RUNTIME=$(DIFF_RUNTIME) HELIAC_DIFF_PATCHES=$(DIFF_PATCHES) \
		$(GO) test -count=1 -timeout 0 -run '^TestDifferentialTFLM$$' -v ./driver/ >$$out 2>&1 || status=$$?; \
	grep -v -e '^=== ' -e '^        --- PASS' -e '^    --- PASS' $$out; rm -f $$out; exit $$status

.PHONY: cmsis-sweep
cmsis-sweep: ## every corpus model TFLM runs on the emulated Cortex-M4F and M55 with CMSIS-NN too (make test runs a subset there): the default plan on all four runners, seeds 1 and 2; --kernels cmsis-nn's TFLM arena exact on each CMSIS-NN runner
	@out=$$(mktemp); status=0; \
	HELIAC_FULL_SWEEP=1 $(GO) test -count=1 -timeout 120m -run '^(TestDefaultPlansOnEveryRunner|TestTFLMArenaExactCMSISNN)$$' -v ./driver/ >$$out 2>&1 || status=$$?; \
	grep -v -e '^=== ' -e '--- PASS' $$out; rm -f $$out; exit $$status

.PHONY: full-sweep
full-sweep: ## the driver's and the Cortex-M55 and Cortex-M4 examples' sweeps in full (make test runs subsets to stay under 15 minutes): every runner and model of cmsis-sweep, every one-operator model on tflm_run_m55 and through the runtime on both host libraries, the runtime on every corpus model (both plans) and 25 random ones, the README's TFLM program on the M55 for each model, every example model measured against TFLM, the Cortex-M55 example with stage-hot.yaml (CMSIS-NN) on every corpus model it runs
	@out=$$(mktemp); status=0; \
	HELIAC_FULL_SWEEP=1 HELIAC_OP_SWEEP=1 HELIAC_M55_MEASURE=$$(mktemp) HELIAC_M4_MEASURE=$$(mktemp) $(GO) test -count=1 -timeout 180m -run '$(SWEEPS)' -v $(SWEEP_PKGS) >$$out 2>&1 || status=$$?; \
	grep -v -e '^=== ' -e '--- PASS' $$out; rm -f $$out; exit $$status

.PHONY: stripe-proof
stripe-proof: ## the whole stripe proof: every proof model (the 224 MobileNetV2s too), several regions, k = 2, 3, 4, 7, 10, in stock TFLM (make test runs a subset)
	HELIAC_STRIPE_PROOF=full $(GO) test -count=1 -timeout 60m -run '^TestApplyBitExactTFLM$$' -v ./stripe/

.PHONY: bench
bench: ## print arena sizes vs lower bound vs TFLM, and planning time, for every corpus model; then the Cortex-M55 and Cortex-M4 flash, RAM and instructions tables (bench-m55, bench-m4)
	$(GO) run ./internal/cmd/bench
	@if command -v arm-none-eabi-g++ >/dev/null && command -v qemu-system-arm >/dev/null && \
		test -f "$${HELIAC_SHARED:-../shared}/tflm/lib/cortex-m55/libtflm.a"; then \
		echo; echo "Cortex-M55 (examples/cortex-m55, under QEMU): flash, RAM and instructions per inference of heliac's program vs TFLM's MicroInterpreter, reference and CMSIS-NN kernels"; \
		$(MAKE) --no-print-directory bench-m55; \
	else echo; echo "Cortex-M55 flash/RAM/instructions table skipped: needs arm-none-eabi-g++, qemu-system-arm and ../shared (make bench-m55)"; fi
	@if command -v arm-none-eabi-g++ >/dev/null && command -v qemu-system-arm >/dev/null && \
		test -f "$${HELIAC_SHARED:-../shared}/tflm/lib/cortex-m4/libtflm.a"; then \
		echo; echo "Cortex-M4F (examples/cortex-m4, under QEMU): flash, RAM and instructions per inference of heliac's program vs TFLM's MicroInterpreter, reference and CMSIS-NN kernels"; \
		$(MAKE) --no-print-directory bench-m4; \
	else echo; echo "Cortex-M4F flash/RAM/instructions table skipped: needs arm-none-eabi-g++, qemu-system-arm and ../shared (make bench-m4)"; fi

# BENCH_BOARD(board folder, measure variable): the board's TestQEMU with
# every model measured, then boardsize's table of the figures.
BENCH_BOARD = fig=$$(mktemp); status=0; \
	$(2)=$$fig $(GO) test -count=1 -v -timeout 90m -run '^TestQEMU$$' ./examples/$(1)/test/ | \
		grep -E -e 'per model|bit-exact|differs|error|not built|^(ok|FAIL|---)' || status=1; \
	$(GO) run ./internal/cmd/boardsize -table $$fig || status=1; rm -f $$fig; exit $$status

.PHONY: bench-m55
bench-m55: ## flash, RAM and instructions per inference (QEMU's insn_count.so) of heliac's Cortex-M55 program vs TFLM's MicroInterpreter, per model and kernel build (reference, CMSIS-NN), under QEMU (examples/cortex-m55)
	@$(call BENCH_BOARD,cortex-m55,HELIAC_M55_MEASURE)

.PHONY: bench-m4
bench-m4: ## the same of heliac's Cortex-M4F program (examples/cortex-m4, QEMU's mps2-an386)
	@$(call BENCH_BOARD,cortex-m4,HELIAC_M4_MEASURE)

.PHONY: bench-go
bench-go: ## run the Go benchmarks
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

.PHONY: run-example
run-example: ## run heliac on a bundled model into out/
	$(GO) run ./cmd/heliac testdata/models/hello_world_int8.tflite -o out/

.PHONY: assert-nothing-changed
assert-nothing-changed: ## fail when generation or tidying changed tracked files
	@git diff --exit-code || (echo "generated or formatted files are out of date; run make schema, go mod tidy, gofmt"; exit 1)

.PHONY: clean
clean: ## remove build output
	rm -rf bin out
