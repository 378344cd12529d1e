# sgemm-ladder - `make help` lists the targets.

CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
CC        := gcc
BUILD     := build
BIN       := bin

comma := ,

# Parallel by default, one job per core: a fresh `make test` builds 25 rungs for 5 architectures
# (-jN on the command line, or in MAKEFLAGS, overrides it).
ifeq ($(filter -j% --jobs%,$(MAKEFLAGS)),)
  MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

# ---- target architecture: the GPU's own, ARCH=sm_XY, or a spread when there is no GPU
# nvidia-smi's compute_cap counts only when it is a number ("9.0" -> 90); anything else it
# prints (an error, "[N/A]") means no GPU here. Hopper (9.0) builds sm_90a, sm_90 with its
# architecture-specific instructions (wgmma, setmaxnreg: rungs 23-27); such code runs on 9.0 only.
ifeq ($(origin ARCH),undefined)
  GPU_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' \r' | grep -xE '[0-9]+\.[0-9]+' | tr -d .)
  ifneq ($(GPU_CC),)
    ARCH := sm_$(GPU_CC)$(if $(filter 90,$(GPU_CC)),a)
  endif
endif
# Without a GPU, a spread of architectures: whichever of these the installed nvcc can build
# (CUDA 13 dropped sm_70, Volta), plus PTX for the newest, which the driver compiles for GPUs
# newer than any of them. Hopper's cubin is sm_90a (above); the PTX stays compute_90.
override NOGPU_ARCHS = $(strip $(foreach a,70 75 80 86 89 90,$(if $(filter sm_$(a),$(NVCC_CODES)),$(a))))
override NVCC_CODES  = $(shell $(NVCC) --list-gpu-code 2>/dev/null)
ifdef ARCH
  override ARCH_LIST := $(subst sm_,,$(ARCH))
  override PTX_ARCH  :=
else
  override ARCH_LIST := $(patsubst 90,90a,$(NOGPU_ARCHS))
  override PTX_ARCH  := $(lastword $(NOGPU_ARCHS))
endif
override GENCODE := $(foreach a,$(ARCH_LIST),-gencode arch=compute_$(a),code=sm_$(a)) \
           $(if $(PTX_ARCH),-gencode arch=compute_$(PTX_ARCH)$(comma)code=compute_$(PTX_ARCH))
# A build with no architecture is refused (the goals that compile nothing go on without nvcc).
ifneq ($(filter-out help clean deps plots readme-table,$(or $(MAKECMDGOALS),default)),)
  ifeq ($(filter code=sm_%,$(subst $(comma), ,$(GENCODE))),)
    $(error no architecture to build: no ARCH, no GPU, and '$(NVCC) --list-gpu-code' names none of sm_70..sm_90)
  endif
endif

# ---- flags: NVCCFLAGS, CFLAGS and LDLIBS (make's command line or the environment) are the
# user's: optimization, debug information, extra defines. They are added to the flags the
# build needs, which they cannot replace: architectures, ptxas's resource report and spill
# warnings (the build test reads them), the language standards, the warnings. The variables
# below that make's command line must not set are marked override.
NVCCFLAGS_DEFAULT := -O3 -lineinfo
CFLAGS_DEFAULT    := -O2 -g
NVCCFLAGS ?= $(NVCCFLAGS_DEFAULT)
CFLAGS    ?= $(CFLAGS_DEFAULT)
override NVCC_REQUIRED := -std=c++17 $(GENCODE) -Xptxas -v -Xptxas -warn-spills -Xcompiler -Wall,-Wextra
override CC_REQUIRED   := -std=c11 -Wall -Wextra -Wpedantic -I$(CUDA_HOME)/include
override ALL_NVCCFLAGS  = $(NVCCFLAGS) $(NVCC_REQUIRED)
override ALL_CFLAGS     = $(CFLAGS) $(CC_REQUIRED)
override ALL_LDLIBS     = -lcublas -ldl -lpthread -lm $(LDLIBS)

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
COMMON_OBJS  := $(patsubst common/%.cu,$(BUILD)/common/%.o,$(wildcard common/*.cu))
COMMON_HDRS  := $(wildcard common/*.h common/*.cuh)
# The host tests link only the parts that need no GPU.
PURE_OBJS    := $(addprefix $(BUILD)/harness/,args.o stats.o verify.o report.o check_cases.o fill.o telemetry.o precision.o split.o random_shapes.o)

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
        all-bench plots readme-table diff sass ptx regs profile sanitize defects FORCE

default: $(if $(STEP_BIN),$(STEP_BIN),all)
all: $(STEP_BINS)

# ---- flag stamps: build/flags/nvcc.txt and build/flags/cc.txt hold the whole compile and link
# lines of each compiler. A stamp is rewritten only when its line changes (another ARCH, other
# NVCCFLAGS or CFLAGS, another compiler), and everything that compiler builds depends on it, so
# a change of flags rebuilds all of it, `make -n` included.
override TEST_LIBS   := -L$(CUDA_HOME)/lib64 -lcudart_static -lrt -ldl -lpthread -lm
override NVCC_STAMP   = compile: $(NVCC) $(ALL_NVCCFLAGS) | link: $(NVCC) $(GENCODE) $(ALL_LDLIBS)
override CC_STAMP     = compile: $(CC) $(ALL_CFLAGS) | tests: $(CMOCKA_CFLAGS) $(CMOCKA_LIBS) $(TEST_LIBS)
NVCC_FLAGS_STAMP := $(BUILD)/flags/nvcc.txt
CC_FLAGS_STAMP   := $(BUILD)/flags/cc.txt

# $(call FLAGS_STAMP,FILE,VARIABLE): FILE holds the text of VARIABLE, remade only when it differs.
define FLAGS_STAMP
ifneq ($$(strip $$(shell cat $(1) 2>/dev/null)),$$(strip $$($(2))))
$(1): FORCE
endif
$(1):
	@mkdir -p $$(@D)
	@printf '%s\n' '$$(subst ','\'',$$($(2)))' >$$@
endef
$(eval $(call FLAGS_STAMP,$(NVCC_FLAGS_STAMP),NVCC_STAMP))
$(eval $(call FLAGS_STAMP,$(CC_FLAGS_STAMP),CC_STAMP))

$(BUILD)/steps/%.o: steps/%.cu $(COMMON_HDRS) $(NVCC_FLAGS_STAMP)
	@echo "  NVCC  $<"
	@scripts/logged.sh $(BUILD)/steps/$*.log $(NVCC) $(ALL_NVCCFLAGS) -c $< -o $@

$(BUILD)/common/%.o: common/%.cu $(COMMON_HDRS) $(NVCC_FLAGS_STAMP)
	@echo "  NVCC  $<"
	@scripts/logged.sh $(BUILD)/common/$*.log $(NVCC) $(ALL_NVCCFLAGS) -c $< -o $@

$(BUILD)/harness/%.o: harness/%.c $(wildcard harness/*.h) common/step.h $(CC_FLAGS_STAMP)
	@echo "  CC    $<"
	@scripts/logged.sh $(BUILD)/harness/$*.log $(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/harness/main_%.o: harness/main.c $(wildcard harness/*.h) common/step.h $(CC_FLAGS_STAMP)
	@echo "  CC    $< (rung $*)"
	@scripts/logged.sh $(BUILD)/harness/main_$*.log $(CC) $(ALL_CFLAGS) -DSTEP_SYMBOL=step_$* -c $< -o $@

# A rung that calls other rungs names them, and the rungs they call (their step_NN): they link
# with it.
RUNG_USES_28 := 27
RUNG_USES_29 := 19 28 27
rung_objs = $(patsubst steps/%.cu,$(BUILD)/steps/%.o,$(foreach n,$(1) $(RUNG_USES_$(1)),$(wildcard steps/$(n)_*.cu)))

# bin/stepNN: the harness, linked with rung NN alone (and the rungs it routes to).
define STEP_BIN_RULE
$(BIN)/step$(1): $(BUILD)/harness/main_$(1).o $(call rung_objs,$(1)) $(HARNESS_OBJS) $(COMMON_OBJS) $(NVCC_FLAGS_STAMP)
	@mkdir -p $$(@D)
	@echo "  LINK  $$@"
	@$$(NVCC) $$(GENCODE) -o $$@ $$(filter %.o,$$^) $$(ALL_LDLIBS)
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
$(BUILD)/tests/test_gpu_startup: harness/gpu_startup.c harness/gpu_startup.h

$(BUILD)/tests/test_%: tests/test_%.c $(PURE_OBJS) $(CC_FLAGS_STAMP) | deps
	@mkdir -p $(@D)
	@echo "  CC    $<"
	@scripts/logged.sh $(BUILD)/tests/test_$*.log $(CC) $(ALL_CFLAGS) $(TEST_DEFS_$*) $(CMOCKA_CFLAGS) -o $@ $< \
	    $(PURE_OBJS) $(TEST_OBJS_$*) $(CMOCKA_LIBS) $(TEST_LIBS)

# The trace test calls sgemm_trace() of the rungs' shared helpers (host code; no GPU needed).
TEST_OBJS_trace := $(BUILD)/common/sgemm_common.o -lstdc++
$(BUILD)/tests/test_trace: $(BUILD)/common/sgemm_common.o

# The plan test calls the FFMA rungs' plans (host code of common/ffma_plan.cu; no GPU needed).
TEST_OBJS_plan := $(BUILD)/common/ffma_plan.o -lstdc++
$(BUILD)/tests/test_plan: $(BUILD)/common/ffma_plan.o

# The check-matrix test reads the case count README.md states.
TEST_DEFS_check_cases := -DREADME_MD='"$(CURDIR)/README.md"'

# The telemetry test loads a stand-in NVML from beside its executable.
$(BUILD)/tests/libfake_nvml.so: tests/fake_nvml.c $(CC_FLAGS_STAMP)
	@mkdir -p $(@D)
	@scripts/logged.sh $(BUILD)/tests/libfake_nvml.log $(CC) $(ALL_CFLAGS) -shared -fPIC -o $@ $<
$(BUILD)/tests/test_telemetry: $(BUILD)/tests/libfake_nvml.so

deps:
	@scripts/deps.sh

test: deps all $(TEST_BINS)
	@tests/run_tests.sh $(TEST_BINS)

# Each planted defect of tests/defects/ on a scratch copy of the tree: the GPU suite must catch it.
defects:
	@tests/defects.sh

# The host tests include the build test, which reads the logs of every rung's build: `all` first.
host-tests: deps all $(TEST_BINS)
	@tests/run_tests.sh --host-only $(TEST_BINS)

# Every binary in bin/ (as `make test` runs them), the rungs' own and any variant built beside them.
gpu-tests: all
	@tests/gpu_tests.sh $(BIN)/step*

# ---- launch-contract tests (begin) ------------------------------------------------------------
# $(BUILD)/tests/contract_NN: tests/gpu_contract.c linked with rung NN alone (like bin/stepNN,
# without the harness or cuBLAS). tests/gpu_tests.sh runs it beside bin/stepNN: the process's
# first launch captured into a CUDA graph, four streams and two host threads at once, a host
# thread on each GPU where there are several, each bit-identical to sequential launches.
#
CONTRACT_BINS := $(addprefix $(BUILD)/tests/contract_,$(STEP_NUMS))

$(BUILD)/tests/contract_%.o: tests/gpu_contract.c common/step.h $(CC_FLAGS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC    $< (rung $*)"
	@scripts/logged.sh $(BUILD)/tests/contract_$*.log $(CC) $(ALL_CFLAGS) -DSTEP_SYMBOL=step_$* -c $< -o $@

define CONTRACT_BIN_RULE
$(BUILD)/tests/contract_$(1): $(BUILD)/tests/contract_$(2).o $(3) $(COMMON_OBJS) $(NVCC_FLAGS_STAMP)
	@echo "  LINK  $$@"
	@$$(NVCC) $$(GENCODE) -o $$@ $$(filter %.o,$$^) -lpthread
endef
$(foreach n,$(STEP_NUMS),$(eval $(call CONTRACT_BIN_RULE,$(n),$(n),$(call rung_objs,$(n)))))

all: $(CONTRACT_BINS)
# ---- launch-contract tests (end) --------------------------------------------------------------

# $(BUILD)/tests/all_rungs: every rung linked into one program (common/step.h: a rung exports
# step_NN alone, so the link fails on any other symbol two rungs define); run by `make test`.
ALL_RUNGS_BIN := $(BUILD)/tests/all_rungs
RUNGS_STAMP := $(BUILD)/flags/rungs.txt
$(eval $(call FLAGS_STAMP,$(RUNGS_STAMP),STEP_NUMS))
$(BUILD)/tests/all_rungs.o: tests/all_rungs.c common/step.h $(CC_FLAGS_STAMP) $(RUNGS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC    $<"
	@scripts/logged.sh $(BUILD)/tests/all_rungs.log $(CC) $(ALL_CFLAGS) \
	    -DRUNG_LIST='$(foreach n,$(STEP_NUMS),X($(n)))' -c $< -o $@
$(ALL_RUNGS_BIN): $(BUILD)/tests/all_rungs.o $(STEP_OBJS) $(COMMON_OBJS) $(NVCC_FLAGS_STAMP)
	@echo "  LINK  $@"
	@$(NVCC) $(GENCODE) -o $@ $(filter %.o,$^) -lpthread
all: $(ALL_RUNGS_BIN)

# bin/ladder: the harness linked with every rung: each point's inputs drawn once and every
# rung timed on them beside cuBLAS, in one process (make all-bench; --steps picks rungs).
LADDER_BIN := $(BIN)/ladder
$(BUILD)/harness/main_ladder.o: harness/main.c $(wildcard harness/*.h) common/step.h $(CC_FLAGS_STAMP) $(RUNGS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC    $< (every rung)"
	@scripts/logged.sh $(BUILD)/harness/main_ladder.log $(CC) $(ALL_CFLAGS) \
	    -DRUNG_LIST='$(foreach n,$(STEP_NUMS),X($(n)))' -c $< -o $@
$(LADDER_BIN): $(BUILD)/harness/main_ladder.o $(STEP_OBJS) $(HARNESS_OBJS) $(COMMON_OBJS) $(NVCC_FLAGS_STAMP)
	@mkdir -p $(@D)
	@echo "  LINK  $@"
	@$(NVCC) $(GENCODE) -o $@ $(filter %.o,$^) $(ALL_LDLIBS)
all: $(LADDER_BIN)

# ---- look inside a rung
diff sass ptx regs profile sanitize: $(if $(filter-out cublas,$(NN)),$(STEP_BIN))
	$(if $(NN),,$(error $@ needs step=N, e.g. make step=5 $@))
	@NVCC='$(NVCC)' NVCCFLAGS='$(ALL_NVCCFLAGS)' GENCODE='$(GENCODE)' ARCH='$(ARCH)' BUILD='$(BUILD)' BIN='$(BIN)' \
	    scripts/inspect.sh $@ $(NN)

# ---- benchmarks and plots
all-bench: all
	@BIN='$(BIN)' STEPS='$(STEPS)' scripts/sweep.sh

plots:
	@scripts/plots.sh

readme-table:
	@scripts/readme_table.sh "$(BENCH_CSV)"

help:
	@echo "sgemm-ladder: a CUDA SGEMM ladder, each rung checked against and timed beside cuBLAS"
	@echo ""
	@echo "  make test              build every rung, run the host tests, and the GPU tests when a GPU is present"
	@echo "  make host-tests        build every rung, run the tests that need no GPU (cmocka, build test, scripts)"
	@echo "  make gpu-tests         build every rung, run the GPU tests on every bin/stepNN"
	@echo "  make defects           plant each defect of tests/defects/ in a copy, check it is caught (GPU)"
	@echo "  make step=N run        build rung N ($(firstword $(STEP_NUMS))..$(lastword $(STEP_NUMS))), check it against cuBLAS, time it (ARGS=\"--sizes 4096\")"
	@echo "  make step=N            build bin/stepNN only"
	@echo "  make all               build every rung, bin/ladder (every rung in one program) and the contract tests"
	@echo "  make step=N diff       what rung N changes from rung N-1"
	@echo "  make step=N sass|ptx   the rung's machine code / PTX"
	@echo "  make step=N regs       registers, shared memory, spills per kernel"
	@echo "  make step=N profile    Nsight Compute counters at 4096 (step=cublas too)"
	@echo "  make step=N sanitize   compute-sanitizer memcheck, racecheck, synccheck, initcheck"
	@echo "  make all-bench         time every rung beside cuBLAS (bin/ladder, a process a point set), write results/<gpu>/, plot (STEPS=\"5 9\")"
	@echo "  make plots             render the plots again from results/*/bench.csv (no GPU needed)"
	@echo "  make readme-table      write the 4096 table into README.md"
	@echo "  make clean             remove build/ and bin/"
	@echo ""
	@echo "  variables:"
	@echo "    ARCH=sm_86         one architecture (default: the GPU's; without a GPU, with this nvcc:"
	@echo "                       $(if $(NOGPU_ARCHS),$(patsubst %,sm_%,$(patsubst 90,90a,$(NOGPU_ARCHS))) and PTX for compute_$(lastword $(NOGPU_ARCHS)),none: no nvcc at $(NVCC)))"
	@echo "    NVCCFLAGS, CFLAGS  added to the flags the build needs (architectures, ptxas -v -warn-spills,"
	@echo "                       -std, warnings), which stay; defaults: $(NVCCFLAGS_DEFAULT), $(CFLAGS_DEFAULT)"
	@echo "    LDLIBS             added to the libraries the rungs link; CUDA_HOME, NVCC, ARGS"
	@echo "  rungs: $(STEP_NUMS)"

clean:
	rm -rf $(BUILD) $(BIN)
