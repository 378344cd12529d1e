# sgemm-ladder - `make help` lists the targets.

CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
CC        := gcc
BUILD     := build
BIN       := bin

# ---- target architecture: the GPU's own, ARCH=sm_XY, or a spread when there is no GPU
ifeq ($(origin ARCH),undefined)
  GPU_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .\r')
  ifneq ($(GPU_CC),)
    ARCH := sm_$(GPU_CC)
  endif
endif
ifdef ARCH
  ARCH_LIST := $(subst sm_,,$(ARCH))
else
  # Without a GPU, a spread of architectures; nvcc 13 dropped sm_70 (Volta), so the list is
  # whichever of these the installed nvcc can build.
  NVCC_CODES := $(shell $(NVCC) --list-gpu-code 2>/dev/null)
  ARCH_LIST  := $(foreach a,70 75 80 86 89 90,$(if $(filter sm_$(a),$(NVCC_CODES)),$(a)))
endif
GENCODE := $(foreach a,$(ARCH_LIST),-gencode arch=compute_$(a),code=sm_$(a))

NVCCFLAGS ?= -O3 -lineinfo
NVCCFLAGS += -std=c++17 $(GENCODE) -Xptxas -v -Xptxas -warn-spills -Xcompiler -Wall,-Wextra
CFLAGS    ?= -O2 -g
CFLAGS    += -std=c11 -Wall -Wextra -Wpedantic -I$(CUDA_HOME)/include
LDLIBS    := -lcublas -ldl -lpthread -lm

# ---- cmocka: the system's, or one unpacked into .deps/ (scripts/deps.sh)
DEPS_LIBDIR := $(firstword $(wildcard .deps/usr/lib/*-linux-gnu))
ifneq ($(wildcard .deps/usr/include/cmocka.h),)
  CMOCKA_CFLAGS := -I.deps/usr/include
  CMOCKA_LIBS   := -L$(DEPS_LIBDIR) -Wl,-rpath,$(abspath $(DEPS_LIBDIR)) -lcmocka
else
  CMOCKA_LIBS   := -lcmocka
endif

# ---- rungs
STEP_SRCS := $(sort $(wildcard steps/[0-9][0-9]_*.cu))
STEP_NUMS := $(foreach s,$(STEP_SRCS),$(firstword $(subst _, ,$(notdir $(s)))))
STEP_OBJS := $(patsubst steps/%.cu,$(BUILD)/steps/%.o,$(STEP_SRCS))
STEP_BINS := $(addprefix $(BIN)/step,$(STEP_NUMS))

HARNESS_SRCS := $(filter-out harness/main.c,$(wildcard harness/*.c))
HARNESS_OBJS := $(patsubst harness/%.c,$(BUILD)/harness/%.o,$(HARNESS_SRCS))
COMMON_OBJS  := $(BUILD)/common/sgemm_common.o $(BUILD)/common/sgemm_workspace.o
# The host tests link only the parts that need no GPU.
PURE_OBJS    := $(addprefix $(BUILD)/harness/,args.o stats.o verify.o report.o check_cases.o fill.o telemetry.o)

# step=N (1 or 01) selects one rung; step=cublas is accepted by `profile`.
ifdef step
  ifeq ($(step),cublas)
    NN := cublas
  else
    # expr reads 08 and 09 as decimal (printf alone takes a leading 0 as octal)
    NN := $(shell n=$$(expr '$(step)' + 0 2>/dev/null) && printf '%02d' "$$n")
    STEP_SRC := $(wildcard steps/$(NN)_*.cu)
    ifeq ($(STEP_SRC),)
      $(error step=$(step): no rung steps/$(NN)_*.cu (rungs: $(STEP_NUMS)))
    endif
    STEP_BIN := $(BIN)/step$(NN)
  endif
endif

.DEFAULT_GOAL := default
.SECONDARY:
.PHONY: default all run test host-tests gpu-tests build-test plot-test deps help clean \
        all-bench plots readme-table diff sass ptx regs profile sanitize FORCE

default: $(if $(STEP_BIN),$(STEP_BIN),all)
all: $(STEP_BINS)

# Rebuild everything when the architecture list changes.
$(BUILD)/gencode.txt: FORCE
	@mkdir -p $(@D)
	@echo '$(GENCODE)' | cmp -s - $@ || echo '$(GENCODE)' > $@

$(BUILD)/steps/%.o: steps/%.cu common/step.h common/sgemm_common.h common/sgemm_workspace.h common/cp_async.cuh $(BUILD)/gencode.txt
	@echo "  NVCC  $<"
	@scripts/logged.sh $(BUILD)/steps/$*.log $(NVCC) $(NVCCFLAGS) -c $< -o $@

$(BUILD)/common/%.o: common/%.cu common/sgemm_common.h common/sgemm_workspace.h $(BUILD)/gencode.txt
	@echo "  NVCC  $<"
	@scripts/logged.sh $(BUILD)/common/$*.log $(NVCC) $(NVCCFLAGS) -c $< -o $@

$(BUILD)/harness/%.o: harness/%.c $(wildcard harness/*.h) common/step.h
	@echo "  CC    $<"
	@scripts/logged.sh $(BUILD)/harness/$*.log $(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/harness/main_%.o: harness/main.c $(wildcard harness/*.h) common/step.h
	@echo "  CC    $< (rung $*)"
	@scripts/logged.sh $(BUILD)/harness/main_$*.log $(CC) $(CFLAGS) -DSTEP_SYMBOL=step_$* -c $< -o $@

# bin/stepNN: the harness, linked with rung NN alone.
define STEP_BIN_RULE
$(BIN)/step$(1): $(BUILD)/harness/main_$(1).o $(patsubst steps/%.cu,$(BUILD)/steps/%.o,$(wildcard steps/$(1)_*.cu)) $(HARNESS_OBJS) $(COMMON_OBJS)
	@mkdir -p $$(@D)
	@echo "  LINK  $$@"
	@$$(NVCC) $$(GENCODE) -o $$@ $$^ $$(LDLIBS)
endef
$(foreach n,$(STEP_NUMS),$(eval $(call STEP_BIN_RULE,$(n))))

run: $(STEP_BIN)
	$(if $(STEP_BIN),,$(error run needs step=N, e.g. make step=1 run))
	$(STEP_BIN) $(ARGS)

# ---- tests
TEST_SRCS := $(wildcard tests/test_*.c)
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))

# The bank-conflict test includes the rungs' own shared-memory layout functions.
$(BUILD)/tests/test_banks: tests/banks_rung.h $(wildcard steps/0[5-9]_*.cu steps/1[0-9]_*.cu)

$(BUILD)/tests/test_%: tests/test_%.c $(PURE_OBJS) | deps
	@mkdir -p $(@D)
	@echo "  CC    $<"
	@scripts/logged.sh $(BUILD)/tests/test_$*.log $(CC) $(CFLAGS) $(CMOCKA_CFLAGS) -o $@ $< \
	    $(PURE_OBJS) $(CMOCKA_LIBS) -L$(CUDA_HOME)/lib64 -lcudart_static -lrt -ldl -lpthread -lm

# The check-matrix test reads the case count README.md states.
$(BUILD)/tests/test_check_cases: CFLAGS += -DREADME_MD='"$(CURDIR)/README.md"'

# The telemetry test loads a stand-in NVML from beside its executable.
$(BUILD)/tests/libfake_nvml.so: tests/fake_nvml.c
	@mkdir -p $(@D)
	@scripts/logged.sh $(BUILD)/tests/libfake_nvml.log $(CC) $(CFLAGS) -shared -fPIC -o $@ $<
$(BUILD)/tests/test_telemetry: $(BUILD)/tests/libfake_nvml.so

deps:
	@scripts/deps.sh

test: deps all $(TEST_BINS)
	@tests/run_tests.sh $(TEST_BINS)

host-tests: deps $(TEST_BINS)
	@tests/run_tests.sh --host-only $(TEST_BINS)

gpu-tests: all
	@tests/gpu_tests.sh $(STEP_BINS)

# ---- launch-contract tests (begin) ------------------------------------------------------------
# $(BUILD)/tests/contract_NN: tests/gpu_contract.c linked with rung NN alone (like bin/stepNN,
# without the harness or cuBLAS). tests/gpu_tests.sh runs it beside bin/stepNN: the process's
# first launch captured into a CUDA graph, four streams and two host threads at once, each
# bit-identical to sequential launches.
#
CONTRACT_BINS := $(addprefix $(BUILD)/tests/contract_,$(STEP_NUMS))

$(BUILD)/tests/contract_%.o: tests/gpu_contract.c common/step.h
	@mkdir -p $(@D)
	@echo "  CC    $< (rung $*)"
	@scripts/logged.sh $(BUILD)/tests/contract_$*.log $(CC) $(CFLAGS) -DSTEP_SYMBOL=step_$* -c $< -o $@

define CONTRACT_BIN_RULE
$(BUILD)/tests/contract_$(1): $(BUILD)/tests/contract_$(2).o $(3) $(COMMON_OBJS)
	@echo "  LINK  $$@"
	@$$(NVCC) $$(GENCODE) -o $$@ $$^ -lpthread
endef
$(foreach n,$(STEP_NUMS),$(eval $(call CONTRACT_BIN_RULE,$(n),$(n),$(patsubst steps/%.cu,$(BUILD)/steps/%.o,$(wildcard steps/$(n)_*.cu)))))

all: $(CONTRACT_BINS)
# ---- launch-contract tests (end) --------------------------------------------------------------

# ---- look inside a rung
diff sass ptx regs profile sanitize: $(if $(filter-out cublas,$(NN)),$(STEP_BIN))
	$(if $(NN),,$(error $@ needs step=N, e.g. make step=5 $@))
	@NVCC='$(NVCC)' NVCCFLAGS='$(NVCCFLAGS)' GENCODE='$(GENCODE)' ARCH='$(ARCH)' BUILD='$(BUILD)' BIN='$(BIN)' \
	    scripts/inspect.sh $@ $(NN)

# ---- benchmarks and plots
all-bench: all
	@BIN='$(BIN)' STEPS='$(STEPS)' SWEEP='$(SWEEP)' scripts/sweep.sh

plots:
	@scripts/plots.sh

readme-table:
	@scripts/readme_table.sh "$(BENCH_CSV)"

help:
	@echo "sgemm-ladder: a CUDA SGEMM ladder, each rung checked against and timed beside cuBLAS"
	@echo ""
	@echo "  make test              build every rung, run the host tests, and the GPU tests when a GPU is present"
	@echo "  make step=N run        build rung N (1..14), check it against cuBLAS, time it (ARGS=\"--sizes 4096\")"
	@echo "  make step=N            build bin/stepNN only"
	@echo "  make all               build every rung (and the launch-contract tests)"
	@echo "  make step=N diff       what rung N changes from rung N-1"
	@echo "  make step=N sass|ptx   the rung's machine code / PTX"
	@echo "  make step=N regs       registers, shared memory, spills per kernel"
	@echo "  make step=N profile    Nsight Compute counters at 4096 (step=cublas too)"
	@echo "  make step=N sanitize   compute-sanitizer memcheck, racecheck, synccheck, initcheck"
	@echo "  make all-bench         sweep every rung beside cuBLAS, write results/<gpu>/, plot (STEPS=\"5 9\" SWEEP=full)"
	@echo "  make plots             render the plots again from results/*/bench.csv (no GPU needed)"
	@echo "  make readme-table      write the 4096 table into README.md"
	@echo "  make clean             remove build/ and bin/"
	@echo ""
	@echo "  variables: ARCH=sm_90 (default: the GPU's, else sm_70,80,86,89,90), CUDA_HOME, NVCC, ARGS"
	@echo "  rungs: $(STEP_NUMS)"

clean:
	rm -rf $(BUILD) $(BIN)
