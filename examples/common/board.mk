# The make rules every example board shares (examples/cortex-m55,
# examples/cortex-m4): a model built into a bare-metal program for one of
# QEMU's Arm boards. heliac plans the model for the board's memories (its
# platform file), writes the C module with its runtime over TFLM's
# kernels, and the program links TFLM's library for the board's core
# (reference or CMSIS-NN kernels). A board's Makefile sets what is its own
# and includes this file:
#
#   HERE            the board's folder
#   BOARD_MACHINE   QEMU's -M (mps3-an547, mps2-an386)
#   BOARD_ARCH      the compiler's core flags (-mcpu=... -mfloat-abi=hard ...)
#   BOARD_CPU       heliac's --cpu with KERNELS=cmsis-nn (CMSIS-NN's code path)
#   BOARD_LIB       TFLM's library folder under lib/ (-cmsis-nn appended for CMSIS-NN)
#   BOARD_RUNNER    the runner under ../shared/tools (_cmsis appended for CMSIS-NN)
#   BOARD_PLATFORM  heliac's platform file: the board's memories as banks
#   BOARD_LDSCRIPT  the linker script that puts the banks' sections there
#   BOARD_RAM       the board's RAM, START-END ranges joined by commas (for measure)
#   BOARD_STAGE     rules.py's arguments: the bank constants are staged
#                   into and the bank they are read from
#   TFLM_RUN        the runner for make measure, by default the board's
#                   variable (TFLM_RUN_M55, TFLM_RUN_M4)
#   REF_ARENA_BYTES the reference's tensor arena (in the board's biggest RAM)
#
# Targets (each board's Makefile lists them too):
#
#   make MODEL=path/to/model.tflite    build $(OUT)/app.elf (main.c)
#   make run MODEL=...                 build and run it under QEMU
#   make check MODEL=...               the harness on heliac's module: tflm_run's lines
#   make check-ref MODEL=...           the harness on TFLM's MicroInterpreter, same board
#   make measure MODEL=...             flash, RAM and instructions per inference:
#                                      heliac vs TFLM's MicroInterpreter
#   make clean
#
# Variables: KERNELS (TFLM's kernel build: reference, the default, or
# cmsis-nn: heliac plans with --kernels cmsis-nn --cpu $(BOARD_CPU), every
# C and C++ file is compiled with -DCMSIS_NN and both programs link
# lib/$(BOARD_LIB)-cmsis-nn; OUT is build/cmsis-nn by default, and a
# change of KERNELS in one OUT rebuilds what depends on it), HELIAC (the
# heliac binary; built from this repository when unset), TFLM_DIR (TFLM
# headers + libraries, ../shared/tflm beside the repository by default),
# RULES (heliac config with placement rules: by default stage-none.yaml,
# every constant cold in the image, the least RAM; RULES=rules.py
# generates rules.py's, every other small constant staged into RAM and
# the rest cold; the board's stage-all.yaml stages every constant; make
# measure prints which), ARGS (the harness's options: --seed N --invokes K
# --float-range R), TIMEOUT (seconds QEMU may run), QEMU (the emulator,
# with options if need be: QEMU='qemu-system-arm -plugin ...'), INSN_COUNT
# (for measure: the QEMU plugin insn_count.so, which counts guest
# instructions) and INSN_INVOKES (K: an inference is N(K+1) - N(K)
# instructions). For builds of many models (the tests): FIXED (where the
# model-independent objects go, $(OUT) by default: C that includes neither
# TFLM's headers nor heliac's, the same bytes with -DCMSIS_NN or without,
# so both kernel builds share them) and PCH (dir/tflm_pch.h: `make pch`
# precompiles the TFLM headers once per kernel build, into
# dir/$(KERNELS)/; every C++ compile then includes that one).

MODEL    ?=
KERNELS  ?= reference
# Per kernel build: heliac's options, the define of every C and C++ file
# (heliac's model.h and <prefix>.tflm.cc check it against the plan), the
# library and the runner that gives TFLM's arena figure.
ifeq ($(KERNELS),reference)
OUT      ?= build
HELIAC_KERNELS := --kernels tflm-reference
KERNELS_FLAGS :=
LIBTFLM_DIR := $(BOARD_LIB)
TFLM_RUN_NAME := $(BOARD_RUNNER)
else ifeq ($(KERNELS),cmsis-nn)
OUT      ?= build/cmsis-nn
HELIAC_KERNELS := --kernels cmsis-nn --cpu $(BOARD_CPU)
KERNELS_FLAGS := -DCMSIS_NN
LIBTFLM_DIR := $(BOARD_LIB)-cmsis-nn
TFLM_RUN_NAME := $(BOARD_RUNNER)_cmsis
else
$(error KERNELS=$(KERNELS): reference or cmsis-nn)
endif
ARGS     ?= --seed 1 --invokes 3
TIMEOUT  ?= 300
COMMON   := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
REPO     := $(abspath $(COMMON)/../..)
TFLM_DIR ?= $(abspath $(REPO)/../shared/tflm)
INSN_COUNT ?= $(abspath $(TFLM_DIR)/../tools/insn_count.so)
INSN_INVOKES ?= 1
HELIAC   ?= $(OUT)/heliac
RULES    ?= $(COMMON)/stage-none.yaml
# RULES=rules.py: the rules rules.py writes for the model ($(OUT)/gen/rules.yaml).
ifeq ($(RULES),rules.py)
override RULES := $(OUT)/gen/rules.yaml
endif
QEMU     ?= qemu-system-arm
# The harness (driver/testdata/runtime): tflm_run's input fill and output
# lines over heliac's module or TFLM's MicroInterpreter.
HARNESS  := $(REPO)/driver/testdata/runtime

CC       := arm-none-eabi-gcc
CXX      := arm-none-eabi-g++
SIZE     := arm-none-eabi-size
ARCH     := $(BOARD_ARCH)
OPT      := -O2 -ffunction-sections -fdata-sections
CFLAGS   := $(ARCH) $(OPT) -std=c11 $(KERNELS_FLAGS) -Wall -Wextra -I$(HERE) -I$(COMMON) -I$(HARNESS) -I$(OUT)/gen
# The flags ../shared/tflm/README.md requires of code that includes TFLM's headers.
CXXFLAGS := $(ARCH) $(OPT) -std=c++17 -fno-rtti -fno-exceptions -fno-threadsafe-statics \
	-DTF_LITE_STATIC_MEMORY -DTF_LITE_MCU_DEBUG_LOG $(KERNELS_FLAGS) -Wall -Wextra \
	-isystem $(TFLM_DIR)/include -I$(HERE) -I$(COMMON) -I$(HARNESS) -I$(OUT)/gen
# PCH: the precompiled header of the harness's tflm_pch.h, built by
# `make pch` with exactly CXXFLAGS, one per kernel build (PCH_FILE:
# dir/$(KERNELS)/tflm_pch.h for PCH=dir/tflm_pch.h); an unusable one is an
# error.
PCH      ?=
PCH_CXXFLAGS := $(CXXFLAGS)
ifneq ($(PCH),)
PCH_FILE := $(patsubst %/,%,$(dir $(PCH)))/$(KERNELS)/$(notdir $(PCH))
CXXFLAGS += -include $(PCH_FILE) -Winvalid-pch -Werror=invalid-pch
endif
LDFLAGS  := $(ARCH) --specs=nano.specs -nostartfiles -T $(BOARD_LDSCRIPT) -Wl,--gc-sections
LIBTFLM  := $(TFLM_DIR)/lib/$(LIBTFLM_DIR)/libtflm.a

FIXED    ?= $(OUT)
PLATFORM := $(FIXED)/startup.o $(FIXED)/syscalls.o $(FIXED)/debug_log.o
MODULE   := $(OUT)/model.o $(OUT)/model.tflm.o

.PHONY: all run check check-ref measure pch clean check-model FORCE
all: $(OUT)/app.elf

check-model:
	@test -n "$(MODEL)" || { echo "usage: make MODEL=path/to/model.tflite [run|check|check-ref|measure]" >&2; exit 2; }

$(OUT)/heliac: FORCE
	@mkdir -p $(OUT)
	cd $(REPO) && go build -o $(abspath $@) ./cmd/heliac

$(OUT)/gen/rules.yaml: $(MODEL) $(HELIAC) $(COMMON)/rules.py | check-model
	@mkdir -p $(OUT)/gen
	$(HELIAC) inspect $(MODEL) --json | python3 $(COMMON)/rules.py $(BOARD_STAGE) > $@

# The rules file's name, rewritten when RULES names another.
$(OUT)/gen/rules.name: FORCE
	@mkdir -p $(OUT)/gen
	@echo '$(RULES)' | cmp -s - $@ || echo '$(RULES)' > $@

# The kernel build the objects of $(OUT) are for, rewritten when KERNELS
# names another: everything built for one kernel build depends on it, so
# the two never mix in one OUT.
$(OUT)/kernels.name: FORCE
	@mkdir -p $(OUT)
	@echo '$(KERNELS)' | cmp -s - $@ || echo '$(KERNELS)' > $@

# The C module and its runtime, regenerated when the model, the platform,
# the rules or KERNELS change; planned for the kernel build LIBTFLM holds.
$(OUT)/gen/model.c: $(MODEL) $(BOARD_PLATFORM) $(RULES) $(OUT)/gen/rules.name $(OUT)/kernels.name $(HELIAC) | check-model
	@mkdir -p $(OUT)/gen
	$(HELIAC) $(MODEL) --prefix model --force -q -o $(OUT)/gen \
		--platform-file $(BOARD_PLATFORM) --config $(RULES) --runtime tflm $(HELIAC_KERNELS)

$(OUT)/%.o: $(HERE)/%.c
	@mkdir -p $(OUT)
	$(CC) $(CFLAGS) -c $< -o $@
$(OUT)/%.o: $(COMMON)/%.c
	@mkdir -p $(OUT)
	$(CC) $(CFLAGS) -c $< -o $@
$(OUT)/%.o: $(HARNESS)/%.c
	@mkdir -p $(OUT)
	$(CC) $(CFLAGS) -c $< -o $@
$(FIXED)/%.o: $(HERE)/%.c
	@mkdir -p $(FIXED)
	$(CC) $(CFLAGS) -c $< -o $@
$(FIXED)/%.o: $(COMMON)/%.c
	@mkdir -p $(FIXED)
	$(CC) $(CFLAGS) -c $< -o $@
$(FIXED)/%.o: $(HARNESS)/%.c
	@mkdir -p $(FIXED)
	$(CC) $(CFLAGS) -c $< -o $@
$(OUT)/main.o: $(COMMON)/main.c $(OUT)/gen/model.c
	$(CC) $(CFLAGS) -c $< -o $@
$(OUT)/model.o: $(OUT)/gen/model.c
	$(CC) $(CFLAGS) -c $< -o $@
$(OUT)/model.tflm.o: $(OUT)/gen/model.c
	$(CXX) $(CXXFLAGS) -c $(OUT)/gen/model.tflm.cc -o $@
$(OUT)/backend_heliac.o: $(HARNESS)/backend_heliac.c $(OUT)/gen/model.c
	$(CC) $(CFLAGS) -DHELIAC_PREFIX=model -DHARNESS_NO_MALLOC -c $< -o $@

$(OUT)/app.elf: $(PLATFORM) $(OUT)/main.o $(MODULE) $(OUT)/kernels.name
	$(CXX) $(LDFLAGS) $(filter %.o,$^) $(LIBTFLM) -lm -o $@ -Wl,-Map,$(OUT)/app.map
	@$(SIZE) -A $@ | awk 'NR > 2 && $$2 > 0 && $$1 !~ /^\.(ARM\.attributes|comment|debug)/'
$(OUT)/check.elf: $(PLATFORM) $(FIXED)/harness.o $(OUT)/backend_heliac.o $(MODULE) $(OUT)/kernels.name
	$(CXX) $(LDFLAGS) $(filter %.o,$^) $(LIBTFLM) -lm -o $@ -Wl,-Map,$(OUT)/check.map

# The reference: the original model under TFLM's MicroInterpreter, with
# only the model's operators registered (ops.h, from resolver.py).
$(OUT)/gen/ops.h: $(MODEL) $(HELIAC) $(COMMON)/resolver.py | check-model
	@mkdir -p $(OUT)/gen
	$(HELIAC) inspect $(MODEL) --json | python3 $(COMMON)/resolver.py \
		$(TFLM_DIR)/include/tensorflow/lite/micro/micro_mutable_op_resolver.h > $@
$(OUT)/backend_tflm.o: $(HARNESS)/backend_tflm.cc $(OUT)/gen/ops.h $(OUT)/kernels.name
	$(CXX) $(CXXFLAGS) -DHELIAC_PREFIX=model -DHELIAC_TFLITE_HEADER='"model_data.h"' \
		-DHARNESS_TFLM_OPS='"ops.h"' -DHARNESS_TFLM_ARENA_BYTES=$(REF_ARENA_BYTES) -c $< -o $@
$(OUT)/model_data.o: $(COMMON)/model_data.S $(MODEL) | check-model
	$(CC) $(ARCH) -DMODEL_FILE='"$(abspath $(MODEL))"' -c $< -o $@
$(OUT)/ref.elf: $(PLATFORM) $(FIXED)/harness.o $(OUT)/backend_tflm.o $(OUT)/model_data.o $(OUT)/kernels.name
	$(CXX) $(LDFLAGS) $(filter %.o,$^) $(LIBTFLM) -lm -o $@ -Wl,-Map,$(OUT)/ref.map

# QEMU_RUN(program, arguments[, emulator]): $(OUT)/<program>.elf under
# QEMU (or the emulator given), the arguments its command line.
comma := ,
QEMU_RUN = timeout $(TIMEOUT) $(or $(3),$(QEMU)) -M $(BOARD_MACHINE) -nographic -monitor none -serial null -semihosting \
	-semihosting-config enable=on,target=native,arg=$(1)$(subst $(eval) ,,$(addprefix $(comma)arg=,$(2))) \
	-kernel $(OUT)/$(1).elf </dev/null

run: $(OUT)/app.elf
	$(call QEMU_RUN,app,$(ARGS))
check: $(OUT)/check.elf
	$(call QEMU_RUN,check,$(ARGS))
check-ref: $(OUT)/ref.elf
	$(call QEMU_RUN,ref,$(ARGS))

# Flash, RAM and instructions per inference (internal/cmd/boardsize):
# heliac's harness program against the reference, the same harness on TFLM;
# TFLM's arena is what TFLM_RUN (the runner of this kernel build)
# reports it uses for the model on this core; BOARD_RAM and the
# platform file say which sections are RAM and which heliac's arenas. The first lines name the
# rules file heliac planned with (rules=) and the kernel build (kernels=).
# The runner gets QEMU's first word only: it passes its own options.
$(OUT)/tflm_run.out: $(MODEL) $(OUT)/kernels.name | check-model
	QEMU='$(firstword $(QEMU))' $(TFLM_RUN) --invokes 1 --arena-bytes $(REF_ARENA_BYTES) $(abspath $(MODEL)) > $@.tmp && mv $@.tmp $@

# Instructions: each program runs with ARGS and --invokes K, then K+1
# (K = INSN_INVOKES), under the plugin insn_count.so, which appends
# qemu_insns=N (the whole run's guest instructions) to the file out= names;
# boardsize prints N(K+1) - N(K), one inference's. The runs' own output goes
# to <file>.out. Run on every make measure: the counts follow ARGS. A
# -plugin option QEMU carries is left out of these runs: QEMU 7.2 loads
# the .so once, so two instances share its counter and out= path (named by
# two paths, as ../shared and a symlink to it, each instruction counts
# twice).
drop_plugin = $(if $(1),$(if $(filter -plugin --plugin,$(firstword $(1))),$(call drop_plugin,$(wordlist 3,$(words $(1)),$(1))),$(firstword $(1)) $(call drop_plugin,$(wordlist 2,$(words $(1)),$(1)))))
QEMU_COUNT_RUN = $(call QEMU_RUN,$(1),$(ARGS) --invokes $(2),$(call drop_plugin,$(QEMU)) -plugin $(INSN_COUNT)$(comma)out=$(abspath $(3)))
INSN_RUNS := $(foreach p,check ref,$(foreach k,$(INSN_INVOKES) $(shell expr $(INSN_INVOKES) + 1),$(OUT)/insns/$(p).$(k)))
$(OUT)/insns/check.%: $(OUT)/check.elf FORCE
	@mkdir -p $(OUT)/insns
	@rm -f $@ $@.tmp
	@$(call QEMU_COUNT_RUN,check,$*,$@.tmp) > $@.out || \
		{ cat $@.out >&2; exit 1; }
	@mv $@.tmp $@
$(OUT)/insns/ref.%: $(OUT)/ref.elf FORCE
	@mkdir -p $(OUT)/insns
	@rm -f $@ $@.tmp
	@$(call QEMU_COUNT_RUN,ref,$*,$@.tmp) > $@.out || \
		{ cat $@.out >&2; exit 1; }
	@mv $@.tmp $@

measure: $(OUT)/check.elf $(OUT)/ref.elf $(OUT)/tflm_run.out $(INSN_RUNS)
	@echo "rules=$(RULES)"
	@echo "kernels=$(KERNELS)"
	@cd $(REPO) && go run ./internal/cmd/boardsize -ram $(BOARD_RAM) -platform $(BOARD_PLATFORM) \
		-insns-heliac $(subst $(eval) ,$(comma),$(abspath $(filter $(OUT)/insns/check.%,$(INSN_RUNS)))) \
		-insns-tflm $(subst $(eval) ,$(comma),$(abspath $(filter $(OUT)/insns/ref.%,$(INSN_RUNS)))) \
		$(abspath $(OUT)/check.elf) $(abspath $(OUT)/ref.elf) \
		$(abspath $(OUT)/tflm_run.out) $(abspath $(OUT)/gen/model.plan.json)

pch:
	@test -n "$(PCH)" || { echo "usage: make pch PCH=dir/tflm_pch.h" >&2; exit 2; }
	@mkdir -p $(dir $(PCH_FILE))
	cp $(HARNESS)/tflm_pch.h $(PCH_FILE)
	$(CXX) $(PCH_CXXFLAGS) -x c++-header $(PCH_FILE) -o $(PCH_FILE).gch

clean:
	rm -rf $(OUT)

FORCE:
