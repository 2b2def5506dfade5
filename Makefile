# Makefile - the one build of Loom.
#   make            build everything (CLI build/bin/loom, RTL of the default config)
#   make run        the main job: a trained CNN on the RTL (loom eval), accuracy and profile
#   make test       set up, build, and run the test suite (CI runs this)
#   make test-full  longer suites
#   make bench      benchmarks, results into docs/PERFORMANCE.md
#   make lint       the house rules (layers, file and function sizes), C and Verilator linters
#   make rtl HW=NAME [HWCFG=path]   verilate one configuration into build/hw/NAME
# Every target first runs scripts/setup.sh when the tools are missing.

# every core unless the command line says otherwise (make -j1 builds serially)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)

BUILD   := build
HW      ?= default
# configs/NAME.cfg, else tests/configs/NAME.cfg (configurations only the tests use)
HWCFG   ?= $(firstword $(wildcard configs/$(HW).cfg tests/configs/$(HW).cfg) configs/$(HW).cfg)
HWDIR   := $(BUILD)/hw/$(HW)
CC      := gcc
CXX     := g++
WARN    := -Wall -Wextra -Werror
CFLAGS  := -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE -Iinclude -I. -MMD -MP
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDLIBS  := -ldl -lm
CCACHE  := $(shell command -v ccache 2>/dev/null)
SETUP   := $(BUILD)/.setup-stamp

# the control-core firmware: build/firmware/loom_fw.elf (make firmware)
.DEFAULT_GOAL := all
include firmware/firmware.mk

# ------------------------------------------------------------------ sources
# One folder per layer (docs/ARCHITECTURE.md); every .c file of a folder is
# part of its layer, so splitting a file needs no change here.
#   common/   configurations, ISA encodings and checks, the timing model
#   hw/       the hardware-access interface: opening a backend (include/loom/hw.h)
#   cmodel/   the C model backend and the control core's ISS
#   ir/       the graph IR and the .loom model file
#   runtime/  the float CPU kernels, the reference executor, running a model
#   compiler/ ONNX import, passes, calibration, quantization, lowering;
#   compiler/npu/  the NPU back end: tiling, instruction emission, verifier
#   cosim/    the random program generator and the int8 golden layers
#   sweep/    design-space exploration (loom sweep): grid, points, area, energy
#   driver/   libloom (include/loom/loom.h)
#   tools/    the loom CLI, one file per subcommand
GEN_HW_SRC := common/gen_hw.c
CORE_SRCS := $(filter-out $(GEN_HW_SRC),$(sort $(wildcard common/*.c))) $(sort $(wildcard hw/*.c cmodel/*.c ir/*.c \
             runtime/*.c compiler/*.c compiler/npu/*.c cosim/*.c sweep/*.c))
LOOM_SRCS := $(sort $(wildcard tools/*.c))
# libloom, the driver (include/loom/loom.h); it reads firmware ELFs with libelf
DRIVER_SRCS := $(sort $(wildcard driver/*.c))
DRIVER_LDLIBS := -lelf -lpthread
# the RTL file list (the generated package comes first, from build/hw/NAME)
RTL_SRCS  := $(shell cat rtl/npu.f)
TB_SRCS   := verilator_tb/tb_dram.sv verilator_tb/tb_top.sv
TB_CPP    := verilator_tb/sim.cpp

CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/obj/%.o)
SAN_OBJS  := $(CORE_SRCS:%.c=$(BUILD)/san/%.o)
# the ONNX protobuf code, generated into build/gen (rules below); read with libprotobuf-c
CORE_OBJS += $(BUILD)/obj/gen/onnx.pb-c.o
SAN_OBJS  += $(BUILD)/san/gen/onnx.pb-c.o
LDLIBS    += -lprotobuf-c -lelf -lpthread
LOOM      := $(BUILD)/bin/loom
LOOM_SAN  := $(BUILD)/bin/loom-san
LIBLOOM   := $(BUILD)/libloom.a
LIBLOOM_SAN := $(BUILD)/libloom-san.a
STUB_FW   := $(BUILD)/tests/stub_fw.elf
GEN_HW    := $(BUILD)/bin/gen_hw

UNIT_TESTS := test_cmodel test_cosim_gen test_rv_iss
UNIT_TESTS += test_cmodel_paths
UNIT_TESTS += test_tsim
UNIT_TESTS += test_onnx
UNIT_TESTS += test_cpu_shape
UNIT_TESTS += test_cpu_ops
UNIT_TESTS += test_passes
UNIT_TESTS += test_calib
UNIT_TESTS += test_modelfile
UNIT_TESTS += test_compile
UNIT_TESTS += test_compile_stem
UNIT_TESTS += test_plan_choice
UNIT_TESTS += test_exec_req
UNIT_TESTS += test_sweep
UNIT_TESTS += test_area
UNIT_TESTS += test_gemm
HW_TEST    := $(BUILD)/tests/test_hw
UNIT_BINS  := $(UNIT_TESTS:%=$(BUILD)/tests/%)
SAN_BINS   := $(UNIT_TESTS:%=$(BUILD)/tests/san_%) $(BUILD)/tests/san_test_directed
DRIVER_BINS := $(BUILD)/tests/test_driver $(BUILD)/tests/san_test_driver $(LOOM_SAN) $(STUB_FW)
DIRECTED   := $(BUILD)/tests/test_directed

.PHONY: FORCE all run run-resnet50 test test-full bench lint rtl block clean setup cli tests-built tests-hw synth bench-array fuzz \
        systemc systemc-rtl
all: cli rtl firmware systemc

setup: $(SETUP)
$(SETUP): scripts/setup.sh
	@mkdir -p $(BUILD)
	sh scripts/setup.sh
	@touch $@

cli: $(LOOM) $(GEN_HW)

$(BUILD)/obj/%.o: %.c | $(SETUP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@
# the timing model times every candidate program of the compiler's planners
# (ResNet-50: 124): -O3 plans 5-8% faster than -O2 (docs/PERFORMANCE.md)
$(BUILD)/obj/common/tsim.o: CFLAGS += -O3
$(BUILD)/san/%.o: %.c | $(SETUP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -c $< -o $@

# ONNX's protobuf in C, generated from Debian's onnx.proto (libonnx-dev), and
# what includes it
ONNX_PROTO := /usr/include/onnx/onnx.proto
$(BUILD)/gen/onnx.pb-c.c $(BUILD)/gen/onnx.pb-c.h &: $(wildcard $(ONNX_PROTO)) | $(SETUP)
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen --proto_path=$(dir $(ONNX_PROTO)) $(notdir $(ONNX_PROTO))
$(BUILD)/obj/gen/onnx.pb-c.o: $(BUILD)/gen/onnx.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@
$(BUILD)/san/gen/onnx.pb-c.o: $(BUILD)/gen/onnx.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -c $< -o $@
ONNX_PB_USERS := $(BUILD)/obj/compiler/onnx.o $(BUILD)/san/compiler/onnx.o \
                 $(BUILD)/tests/test_onnx $(BUILD)/tests/san_test_onnx
$(ONNX_PB_USERS): $(BUILD)/gen/onnx.pb-c.h
$(ONNX_PB_USERS): CFLAGS += -I$(BUILD)/gen

$(BUILD)/libloomcore.a: $(CORE_OBJS)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/libloomcore-san.a: $(SAN_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(LIBLOOM): $(DRIVER_SRCS:%.c=$(BUILD)/obj/%.o)
	@rm -f $@
	ar rcs $@ $^
$(LIBLOOM_SAN): $(DRIVER_SRCS:%.c=$(BUILD)/san/%.o)
	@rm -f $@
	ar rcs $@ $^

# (libloomcore's runtime calls libloom, libloom calls libloomcore's backends: one link group)
$(LOOM): $(LOOM_SRCS:%.c=$(BUILD)/obj/%.o) $(LIBLOOM) $(BUILD)/libloomcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.o,$^) -Wl,--start-group $(filter %.a,$^) -Wl,--end-group $(DRIVER_LDLIBS) $(LDLIBS)
# the CLI under AddressSanitizer/UBSan (make test runs its selftest on the C model)
$(LOOM_SAN): $(LOOM_SRCS:%.c=$(BUILD)/san/%.o) $(LIBLOOM_SAN) $(BUILD)/libloomcore-san.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $(filter %.o,$^) -Wl,--start-group $(filter %.a,$^) -Wl,--end-group $(DRIVER_LDLIBS) $(LDLIBS)

$(GEN_HW): $(BUILD)/obj/common/gen_hw.o $(BUILD)/obj/common/isa.o $(BUILD)/obj/common/hwcfg.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.o,$^)

# ------------------------------------------------------------------ RTL
# One verilated model per configuration, cached in build/hw/NAME.
VERILATOR_FLAGS :=
# C++ model plus our own harness, built into a shared library
VERILATOR_FLAGS += --cc --exe --build -j 2
# speed: optimise the model, no X-propagation bookkeeping, no assertions
VERILATOR_FLAGS += -O3 --x-assign fast --x-initial fast --noassert
# waveforms on demand (opened only when asked for)
VERILATOR_FLAGS += --trace-fst --trace-structs
VERILATOR_FLAGS += --top-module tb_top -Wno-fatal
# Hidden visibility: the library exports loom_rtl_open and loom_rtl_fingerprint
# (verilator_tb/sim.cpp) and nothing else, so calls between the model's
# functions are direct (and may be inlined) rather than through the PLT, as
# -fPIC with default visibility makes them (any symbol could be interposed).
VERILATOR_CFLAGS := -fPIC -fvisibility=hidden -fvisibility-inlines-hidden -I$(CURDIR)/include -I$(CURDIR)/$(HWDIR)
# optimise the per-cycle code, not the (large) one-time initialisation code
VERILATOR_MAKEFLAGS := OPT_FAST=-O2 OPT_SLOW=-O0 OPT_GLOBAL=-O2

rtl: $(HWDIR)/libloom_rtl.so

$(HWDIR)/npu_pkg.sv $(HWDIR)/loom_cfg.h &: $(HWCFG) $(GEN_HW)
	@mkdir -p $(HWDIR)
	$(GEN_HW) $(HWCFG) $(HWDIR)

# Profile-guided optimisation (GCC's -fprofile-generate / -fprofile-use) of
# the default configuration's model, the one `loom run --backend rtl` and the
# benchmarks use: the model is built instrumented, runs a training workload
# (every `loom demo` layer and `loom selftest` on the rtl backend: the array,
# both DMA engines, the vector unit's kinds, the control core and its error
# paths), then is compiled again with the profile. Same source, so the same
# behaviour (the whole test suite runs on it); measured in
# docs/PERFORMANCE.md ("Simulation speed"). Other configurations are built
# once, without it (loom sweep and the tests build several); RTL_PGO=1 or 0
# on the command line decides for any.
RTL_PGO ?= $(if $(filter default,$(HW)),1,0)
RTL_PGO_GEN := OPT_FAST="-O2 -fprofile-generate -fprofile-update=atomic" OPT_SLOW=-O0 \
               OPT_GLOBAL="-O2 -fprofile-generate -fprofile-update=atomic" LDFLAGS="-shared -fprofile-generate"
RTL_PGO_USE := OPT_FAST="-O2 -fprofile-use -fprofile-partial-training -Wno-missing-profile" OPT_SLOW=-O0 \
               OPT_GLOBAL="-O2 -fprofile-use -fprofile-partial-training -Wno-missing-profile" LDFLAGS="-shared"

# The flags the model is built with, in a file rewritten only when they
# change: a build by hand with other flags (a plain -g one, say) is rebuilt
# by the next `make`, not taken for the configured one because it is newer.
RTL_FLAGS_TEXT = $(VERILATOR_FLAGS) | $(VERILATOR_CFLAGS) | RTL_PGO=$(RTL_PGO) | \
                 $(if $(filter 1,$(RTL_PGO)),$(RTL_PGO_GEN) | $(RTL_PGO_USE),$(VERILATOR_MAKEFLAGS))
$(HWDIR)/rtl_flags.txt: FORCE
	@mkdir -p $(dir $@)
	@echo '$(RTL_FLAGS_TEXT)' | cmp -s - $@ || echo '$(RTL_FLAGS_TEXT)' > $@
FORCE:

$(HWDIR)/libloom_rtl.so: $(HWDIR)/npu_pkg.sv $(RTL_SRCS) $(TB_SRCS) $(TB_CPP) include/loom/hw.h scripts/rtl_clocks.sh \
                         $(HWDIR)/rtl_flags.txt $(if $(filter 1,$(RTL_PGO)),| $(LOOM) $(FW_ELF))
	rm -f $(HWDIR)/obj/*.gcda
	verilator $(filter-out --build,$(VERILATOR_FLAGS)) -Mdir $(HWDIR)/obj \
	  -CFLAGS "$(VERILATOR_CFLAGS)" -LDFLAGS "-shared" -o libloom_rtl.so \
	  $(HWDIR)/npu_pkg.sv $(RTL_SRCS) $(TB_SRCS) $(CURDIR)/$(TB_CPP) > $(HWDIR)/verilator.log 2>&1 \
	  || { tail -40 $(HWDIR)/verilator.log; exit 1; }
	sh scripts/rtl_clocks.sh $(HWDIR)/obj
ifneq ($(RTL_PGO),1)
	$(MAKE) -C $(HWDIR)/obj -f Vtb_top.mk $(VERILATOR_MAKEFLAGS) OBJCACHE=$(CCACHE) >> $(HWDIR)/verilator.log 2>&1 \
	  || { tail -40 $(HWDIR)/verilator.log; exit 1; }
	cp $(HWDIR)/obj/libloom_rtl.so $@
else
	$(MAKE) -C $(HWDIR)/obj -f Vtb_top.mk $(RTL_PGO_GEN) OBJCACHE=$(CCACHE) >> $(HWDIR)/verilator.log 2>&1 \
	  || { tail -40 $(HWDIR)/verilator.log; exit 1; }
	cp $(HWDIR)/obj/libloom_rtl.so $@
	{ env -u LOOM_REBUILD $(LOOM) demo --hw $(HWCFG) --backend rtl && \
	  env -u LOOM_REBUILD $(LOOM) selftest --hw $(HWCFG) --backend rtl; } > $(HWDIR)/pgo-train.log 2>&1 \
	  || { rm -f $@; tail -40 $(HWDIR)/pgo-train.log; exit 1; }
	rm -f $(HWDIR)/obj/*.o $(HWDIR)/obj/*.a $(HWDIR)/obj/libloom_rtl.so
	$(MAKE) -C $(HWDIR)/obj -f Vtb_top.mk $(RTL_PGO_USE) OBJCACHE=$(CCACHE) >> $(HWDIR)/verilator.log 2>&1 \
	  || { rm -f $@; tail -40 $(HWDIR)/verilator.log; exit 1; }
	cp $(HWDIR)/obj/libloom_rtl.so $@
endif

# ------------------------------------------------------------------ SystemC
# The NPU as a SystemC TLM-2.0 module (systemc/, Debian's libsystemc-dev):
#   build/systemc/libloom_npu_sc.a   the module (systemc/loom_npu_sc.h), the
#                                    memory (loom_mem_sc.h) and the C model, for
#                                    a user's own platform (-lsystemc)
#   build/systemc/libloom_systemc.so the reference virtual platform: the
#                                    "systemc" backend, dlopen'ed by hw/hw.c
# Position-independent copies of common/ and cmodel/, symbols hidden but the
# backend's entry point. C++ only here (SystemC is C++). Another SystemC:
# make systemc SYSTEMC_INCLUDE=DIR SYSTEMC_LIBDIR=DIR (docs/SYSTEMC.md).
SYSTEMC_INCLUDE ?= /usr/include
SYSTEMC_LIBDIR  ?= /usr/lib/x86_64-linux-gnu
SC_DIR      := $(BUILD)/systemc
SC_CXXFLAGS := -std=c++17 -O2 -g $(WARN) -fPIC -fvisibility=hidden -Iinclude -I. -MMD -MP \
               $(if $(filter-out /usr/include,$(SYSTEMC_INCLUDE)),-isystem $(SYSTEMC_INCLUDE))
SC_COMMA    := ,
SC_LDLIBS   := $(if $(filter-out /usr/lib/x86_64-linux-gnu,$(SYSTEMC_LIBDIR)),-L$(SYSTEMC_LIBDIR) \
               -Wl$(SC_COMMA)-rpath$(SC_COMMA)$(SYSTEMC_LIBDIR)) -lsystemc -lpthread -ldl -lm
SC_C_SRCS   := $(filter-out $(GEN_HW_SRC),$(sort $(wildcard common/*.c))) $(sort $(wildcard cmodel/*.c))
SC_LIB      := $(SC_DIR)/libloom_npu_sc.a
SC_SO       := $(SC_DIR)/libloom_systemc.so
SC_LIB_OBJS := $(SC_C_SRCS:%.c=$(SC_DIR)/pic/%.o) $(SC_DIR)/obj/npu_lt.o $(SC_DIR)/obj/memory.o

systemc: $(SC_SO) $(SC_LIB)

$(SC_DIR)/pic/%.o: %.c | $(SETUP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@
$(SC_DIR)/obj/%.o: systemc/%.cpp | $(SETUP)
	@mkdir -p $(dir $@)
	$(CXX) $(SC_CXXFLAGS) -c $< -o $@
$(SC_LIB): $(SC_LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^
$(SC_SO): $(SC_DIR)/obj/vp.o $(SC_LIB)
	$(CXX) -shared -o $@ $< $(SC_LIB) -Wl,--no-undefined $(SC_LDLIBS)

# The cycle-accurate module (systemc/loom_npu_ca_sc.h) and its platform, the
# "systemc-rtl" backend, per configuration: make systemc-rtl HW=NAME builds
# build/hw/NAME/libloom_systemc_rtl.so from the same RTL and tb_dram as the
# rtl backend, with the same flags (waveform support included), plus
# verilator_tb/tb_dram_tap.sv, which reports each burst to the module. A
# user's own platform links build/hw/NAME/sc/npu_ca.o, Vtb_top__ALL.a and
# libverilated.a there, and build/systemc/libloom_npu_sc.a (docs/SYSTEMC.md).
SCRTL_DIR  := $(HWDIR)/sc
SCRTL_SO   := $(HWDIR)/libloom_systemc_rtl.so
SCRTL_LIBS := $(SCRTL_DIR)/Vtb_top__ALL.a $(SCRTL_DIR)/libverilated.a
SCRTL_VLOBJ := verilated.o verilated_dpi.o verilated_threads.o verilated_fst_c.o
VL_ROOT     = $(shell verilator --getenv VERILATOR_ROOT)
SCRTL_CXXFLAGS = $(SC_CXXFLAGS) -I$(HWDIR) -I$(SCRTL_DIR) -isystem $(VL_ROOT)/include \
                 -isystem $(VL_ROOT)/include/vltstd -DVM_TRACE=1 -DVM_TRACE_FST=1 -DVM_COVERAGE=0 -DVM_SC=0
systemc-rtl: $(SCRTL_SO) $(HWDIR)/test_npu_ca
$(SCRTL_LIBS) &: $(HWDIR)/npu_pkg.sv $(RTL_SRCS) $(TB_SRCS) verilator_tb/tb_dram_tap.sv scripts/rtl_clocks.sh
	@mkdir -p $(SCRTL_DIR)
	OBJCACHE=$(CCACHE) verilator $(filter-out --exe,$(VERILATOR_FLAGS)) \
	  -Mdir $(SCRTL_DIR) -CFLAGS "-fPIC -fvisibility=hidden" -MAKEFLAGS "$(VERILATOR_MAKEFLAGS)" \
	  $(HWDIR)/npu_pkg.sv $(RTL_SRCS) $(TB_SRCS) verilator_tb/tb_dram_tap.sv > $(SCRTL_DIR)/verilator.log 2>&1 \
	  || { tail -40 $(SCRTL_DIR)/verilator.log; exit 1; }
	sh scripts/rtl_clocks.sh $(SCRTL_DIR)
	$(MAKE) -s -C $(SCRTL_DIR) -f Vtb_top.mk $(VERILATOR_MAKEFLAGS) OBJCACHE=$(CCACHE) $(SCRTL_VLOBJ) \
	  >> $(SCRTL_DIR)/verilator.log 2>&1 || { tail -40 $(SCRTL_DIR)/verilator.log; exit 1; }
	rm -f $(SCRTL_DIR)/libverilated.a
	cd $(SCRTL_DIR) && ar rcs libverilated.a $(SCRTL_VLOBJ)
# (the headers by name: the .d files under build/hw are not read)
SCRTL_HDRS := systemc/loom_npu_ca_sc.h systemc/loom_npu_sc.h systemc/loom_mem_sc.h systemc/vp.cpp include/loom/hw.h
$(SCRTL_DIR)/%.o: systemc/%.cpp $(SCRTL_HDRS) $(SCRTL_LIBS) | $(SETUP)
	$(CXX) $(SCRTL_CXXFLAGS) -c $< -o $@
$(SCRTL_SO): $(SCRTL_DIR)/npu_ca.o $(SCRTL_DIR)/vp_rtl.o $(SCRTL_LIBS) $(SC_LIB)
	$(CXX) -shared -o $@ $(SCRTL_DIR)/npu_ca.o $(SCRTL_DIR)/vp_rtl.o $(SCRTL_LIBS) $(SC_LIB) \
	  -Wl,--no-undefined $(SC_LDLIBS) -lz

# ------------------------------------------------------------------ RTL block tests
# make block BLK=NAME HW=CFG builds build/blocks/CFG/NAME_tb from
# verilator_tb/blocks/NAME_tb.cpp (and the C++ files of BLOCK_NAME_CPP)
# around the top BLOCK_NAME_TOP.
BLOCK_requant_TOP := npu_requant
BLOCK_requant_SV  := rtl/npu_requant.sv
BLOCK_dma_TOP     := dma_tb_top
BLOCK_dma_SV      := rtl/npu_icg.sv rtl/npu_requant.sv rtl/npu_dma_load.sv rtl/npu_dma_store.sv verilator_tb/blocks/dma_tb_top.sv
BLOCK_dma_CPP     := verilator_tb/blocks/dma_tb_ref.cpp verilator_tb/blocks/dma_tb_bench.cpp
BLOCK_compute_TOP := compute_tb_top
BLOCK_compute_SV  := rtl/npu_pe.sv rtl/npu_array.sv rtl/npu_compute.sv verilator_tb/blocks/compute_tb_top.sv
BLOCK_sp_TOP      := npu_sp
BLOCK_sp_SV       := rtl/npu_sram.sv rtl/npu_sp.sv
BLOCK_cpu_TOP     := cpu_tb_top
BLOCK_cpu_SV      := rtl/npu_cpu.sv verilator_tb/blocks/cpu_tb_top.sv
BLOCK_cpu_VFLAGS  := -LDFLAGS -lelf
BLOCK_TESTS       := requant:default dma:small dma:odd dma:limits compute:default compute:odd sp:default sp:odd sp:large \
                     cpu:default
BLK ?= dma
BLKBIN := $(BUILD)/blocks/$(HW)/$(BLK)_tb

block: $(BLKBIN)
$(BLKBIN): $(HWDIR)/npu_pkg.sv $(BLOCK_$(BLK)_SV) verilator_tb/blocks/$(BLK)_tb.cpp $(BLOCK_$(BLK)_CPP) \
           $(wildcard verilator_tb/blocks/$(BLK)_tb.h) common/isa.c common/hwcfg.c
	@mkdir -p $(dir $@)
	OBJCACHE=$(CCACHE) verilator --cc --exe --build -j 2 -O3 -Wall --assert --top-module $(BLOCK_$(BLK)_TOP) $(BLOCK_$(BLK)_VFLAGS) \
	  -Mdir $(BUILD)/blocks/$(HW)/$(BLK).obj -CFLAGS "-I$(CURDIR)/include -I$(CURDIR)/$(HWDIR)" -MAKEFLAGS "$(VERILATOR_MAKEFLAGS)" -o $(BLK)_tb \
	  $(CURDIR)/verilator_tb/lint.vlt $(HWDIR)/npu_pkg.sv $(BLOCK_$(BLK)_SV) \
	  $(CURDIR)/verilator_tb/blocks/$(BLK)_tb.cpp $(BLOCK_$(BLK)_CPP:%=$(CURDIR)/%) $(CURDIR)/common/isa.c $(CURDIR)/common/hwcfg.c \
	  > $(BUILD)/blocks/$(HW)/$(BLK).log 2>&1 || { tail -40 $(BUILD)/blocks/$(HW)/$(BLK).log; exit 1; }
	cp $(BUILD)/blocks/$(HW)/$(BLK).obj/$(BLK)_tb $@

# the bare MAC array, verilated with the same flags as the NPU (make bench;
# scripts/bench.sh simspeed builds another revision's array with
# ARRAY_SV=FILES BENCH_ARRAY=PATH)
ARRAY_SV    := rtl/npu_pe.sv rtl/npu_array.sv
BENCH_ARRAY := $(BUILD)/bench/array_$(HW)/bench_array
bench-array: $(BENCH_ARRAY)
$(BENCH_ARRAY): $(HWDIR)/npu_pkg.sv $(ARRAY_SV) verilator_tb/bench_array.cpp scripts/rtl_clocks.sh
	@mkdir -p $(dir $@)
	verilator $(filter-out --build --top-module tb_top,$(VERILATOR_FLAGS)) --top-module npu_array \
	  -Mdir $(dir $@)obj -CFLAGS "-I$(CURDIR)/include -I$(CURDIR)/$(HWDIR)" -o bench_array \
	  $(HWDIR)/npu_pkg.sv $(ARRAY_SV) $(CURDIR)/verilator_tb/bench_array.cpp > $(dir $@)build.log 2>&1 \
	  || { tail -40 $(dir $@)build.log; exit 1; }
	sh scripts/rtl_clocks.sh $(dir $@)obj Vnpu_array
	$(MAKE) -C $(dir $@)obj -f Vnpu_array.mk $(VERILATOR_MAKEFLAGS) OBJCACHE=$(CCACHE) >> $(dir $@)build.log 2>&1 \
	  || { tail -40 $(dir $@)build.log; exit 1; }
	cp $(dir $@)obj/bench_array $@

# ------------------------------------------------------------------ tests
# every C test program counts and reports through tests/unit/check.h
CHECK_O     := $(BUILD)/obj/tests/unit/check.o
CHECK_SAN_O := $(BUILD)/san/tests/unit/check.o
# the SystemC module on its own (tests/systemc/test_npu_sc.cpp), linked as a user would
SC_TEST := $(BUILD)/tests/test_npu_sc
$(SC_DIR)/obj/tests/%.o: tests/systemc/%.cpp | $(SETUP)
	@mkdir -p $(dir $@)
	$(CXX) $(filter-out -fPIC -fvisibility=hidden,$(SC_CXXFLAGS)) -c $< -o $@
$(SC_TEST): $(SC_DIR)/obj/tests/test_npu_sc.o $(CHECK_O) $(SC_LIB)
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $^ $(SC_LDLIBS)
# the cycle-accurate module on its own (tests/systemc/test_npu_ca.cpp), per configuration
$(SCRTL_DIR)/test_npu_ca.o: tests/systemc/test_npu_ca.cpp tests/systemc/sc_regs.h $(SCRTL_HDRS) $(SCRTL_LIBS) | $(SETUP)
	$(CXX) $(filter-out -fPIC -fvisibility=hidden,$(SCRTL_CXXFLAGS)) -c $< -o $@
$(HWDIR)/test_npu_ca: $(SCRTL_DIR)/test_npu_ca.o $(SCRTL_DIR)/npu_ca.o $(SCRTL_LIBS) $(CHECK_O) $(SC_LIB)
	$(CXX) -o $@ $^ $(SC_LDLIBS) -lz
$(BUILD)/tests/test_%: tests/unit/test_%.c $(CHECK_O) $(BUILD)/libloomcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.c %.o,$^) $(filter %.a,$^) $(LDLIBS)
$(BUILD)/tests/san_test_%: tests/unit/test_%.c $(CHECK_SAN_O) $(BUILD)/libloomcore-san.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $(filter %.c %.o,$^) $(filter %.a,$^) $(LDLIBS)
# the ONNX test-case helpers these unit tests share (tests/unit/onnx_case.h)
ONNX_CASE_USERS := test_cpu_ops test_cpu_shape test_passes test_calib test_compile test_compile_stem test_exec_req
$(ONNX_CASE_USERS:%=$(BUILD)/tests/%): $(BUILD)/obj/tests/unit/onnx_case.o
$(ONNX_CASE_USERS:%=$(BUILD)/tests/san_%): $(BUILD)/san/tests/unit/onnx_case.o
# test_cmodel is three files: the vector unit's tests in test_cmodel_vec.c,
# STORE SOURCE 3's in test_cmodel_res.c
$(BUILD)/tests/test_cmodel: $(BUILD)/obj/tests/unit/test_cmodel_vec.o $(BUILD)/obj/tests/unit/test_cmodel_res.o
$(BUILD)/tests/san_test_cmodel: $(BUILD)/san/tests/unit/test_cmodel_vec.o $(BUILD)/san/tests/unit/test_cmodel_res.o
# test_tsim again with tsim.c's next-event cache checked against a fresh
# computation at every event (LOOM_TSIM_CHECK_CACHE: a mismatch aborts)
TSIM_CACHE_TEST := $(BUILD)/tests/test_tsim_cache
$(TSIM_CACHE_TEST): tests/unit/test_tsim.c common/tsim.c $(CHECK_O) $(BUILD)/libloomcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DLOOM_TSIM_CHECK_CACHE -o $@ $(filter %.c %.o,$^) $(filter %.a,$^) $(LDLIBS)
# test_gemm again with the portable micro-kernel whatever the CPU (gemm.c
# compiled into the test with LOOM_HOST_GENERIC)
GEMM_GENERIC_TEST := $(BUILD)/tests/test_gemm_generic
$(GEMM_GENERIC_TEST): tests/unit/test_gemm.c runtime/gemm.c $(CHECK_O) $(BUILD)/libloomcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DLOOM_HOST_GENERIC -o $@ $(filter %.c %.o,$^) $(filter %.a,$^) $(LDLIBS)
# test_calib and test_compile again with calibration's statistics and the
# per-channel weight quantization on their portable code whatever the CPU
# (calib.c, quantize.c compiled into the tests with LOOM_HOST_GENERIC)
HOST_GENERIC_TESTS := $(BUILD)/tests/test_calib_generic $(BUILD)/tests/test_compile_generic
$(BUILD)/tests/test_calib_generic: tests/unit/test_calib.c compiler/calib.c $(CHECK_O) \
                                   $(BUILD)/obj/tests/unit/onnx_case.o $(BUILD)/libloomcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DLOOM_HOST_GENERIC -o $@ $(filter %.c %.o,$^) $(filter %.a,$^) $(LDLIBS)
$(BUILD)/tests/test_compile_generic: tests/unit/test_compile.c compiler/quantize.c $(CHECK_O) \
                                     $(BUILD)/obj/tests/unit/onnx_case.o $(LIBLOOM) $(BUILD)/libloomcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DLOOM_HOST_GENERIC -o $@ $(filter %.c %.o,$^) -Wl,--start-group $(filter %.a,$^) \
	  -Wl,--end-group $(DRIVER_LDLIBS) $(LDLIBS)
# loom_model_dump is part of loom objdump (tools/objdump.c)
$(BUILD)/tests/test_modelfile: $(BUILD)/obj/tools/objdump.o
$(BUILD)/tests/san_test_modelfile: $(BUILD)/san/tools/objdump.o
$(DIRECTED): tests/directed/test_directed.c $(CHECK_O) $(BUILD)/libloomcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.c %.o %.a,$^) $(LDLIBS)
$(BUILD)/tests/san_test_directed: tests/directed/test_directed.c $(CHECK_SAN_O) $(BUILD)/libloomcore-san.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $(filter %.c %.o %.a,$^) $(LDLIBS)

# loom_compile as a library, the runtime's inference requests, loom sweep's evaluation;
# they run what they compile through libloom (one link group, as the CLI)
LIBLOOM_TESTS := test_compile test_compile_stem test_exec_req test_sweep
$(LIBLOOM_TESTS:%=$(BUILD)/tests/%): $(BUILD)/tests/test_%: tests/unit/test_%.c $(CHECK_O) $(LIBLOOM) $(BUILD)/libloomcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.c %.o,$^) -Wl,--start-group $(filter %.a,$^) -Wl,--end-group $(DRIVER_LDLIBS) $(LDLIBS)
$(LIBLOOM_TESTS:%=$(BUILD)/tests/san_%): $(BUILD)/tests/san_test_%: tests/unit/test_%.c $(CHECK_SAN_O) $(LIBLOOM_SAN) $(BUILD)/libloomcore-san.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $(filter %.c %.o,$^) -Wl,--start-group $(filter %.a,$^) -Wl,--end-group \
	  $(DRIVER_LDLIBS) $(LDLIBS)

# what one configuration makes of a model, compared across configurations by tests/models/xcfg.sh
XCFG_DUMP := $(BUILD)/tests/xcfg_dump
$(XCFG_DUMP): tests/models/xcfg_dump.c $(LIBLOOM) $(BUILD)/libloomcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.c %.o,$^) -Wl,--start-group $(filter %.a,$^) -Wl,--end-group $(DRIVER_LDLIBS) $(LDLIBS)

# libloom's own tests: ELF validation on hand-made files, calls without firmware
$(BUILD)/tests/test_driver: tests/driver/test_driver.c $(CHECK_O) $(LIBLOOM) $(BUILD)/libloomcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.c %.o %.a,$^) $(DRIVER_LDLIBS) $(LDLIBS)
$(BUILD)/tests/san_test_driver: tests/driver/test_driver.c $(CHECK_SAN_O) $(LIBLOOM_SAN) $(BUILD)/libloomcore-san.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $(filter %.c %.o %.a,$^) $(DRIVER_LDLIBS) $(LDLIBS)
# a protocol stand-in for firmware/ (docs/FIRMWARE.md), to test libloom on its own
$(STUB_FW): tests/driver/stub_fw/build.sh tests/driver/stub_fw/start.S tests/driver/stub_fw/stub_fw.c \
            include/loom/fw_abi.h include/loom/core.h include/loom/core.def tests/rv32/link.ld | $(SETUP)
	sh tests/driver/stub_fw/build.sh $@

# libFuzzer targets (tests/fuzz; make test-full): the ONNX and .loom readers,
# built with clang, ASan and UBSan over the same sources
FUZZ_CC    := clang
FUZZ_FLAGS := -std=c11 -O1 -g $(WARN) -D_GNU_SOURCE -Iinclude -I. -I$(BUILD)/gen \
              -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_SRCS  := $(CORE_SRCS) $(BUILD)/gen/onnx.pb-c.c
FUZZ_OBJS  := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(subst $(BUILD)/gen/,gen/,$(FUZZ_SRCS)))
FUZZ_BINS  := $(BUILD)/fuzz/fuzz_onnx $(BUILD)/fuzz/fuzz_model
FUZZ_SETUP := $(BUILD)/.fuzz-setup-stamp
$(FUZZ_SETUP): scripts/setup.sh | $(SETUP)
	sh scripts/setup.sh fuzz
	@touch $@
$(BUILD)/fuzz/obj/gen/%.o: $(BUILD)/gen/%.c | $(FUZZ_SETUP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(BUILD)/fuzz/obj/%.o: %.c $(BUILD)/gen/onnx.pb-c.h | $(FUZZ_SETUP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(BUILD)/fuzz/libloomcore.a: $(FUZZ_OBJS)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(BUILD)/fuzz/libloomcore.a
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $(filter %.c %.o,$^) $(filter %.a,$^) $(LDLIBS)
$(BUILD)/fuzz/fuzz_model: $(BUILD)/fuzz/obj/tools/objdump.o
fuzz: $(FUZZ_BINS)

TEST_CONFIGS := small default large odd limits
# test_rv_iss loads the rv32 ELFs with libelf
$(BUILD)/tests/test_rv_iss $(BUILD)/tests/san_test_rv_iss: LDLIBS += -lelf
# the RV32IM test programs tests/rv32/NAME.S -> build/rv32/NAME.elf (ISS and RTL core)
RV32_ELFS := $(patsubst tests/rv32/%.S,$(BUILD)/rv32/%.elf,$(wildcard tests/rv32/*.S))
$(BUILD)/rv32/%.elf: tests/rv32/%.S tests/rv32/test.h tests/rv32/link.ld tests/rv32/build.sh | $(SETUP)
	sh tests/rv32/build.sh $(BUILD)/rv32 $*

# GNU parallel and Slurm for loom sweep's engines and their tests (sh scripts/setup.sh cluster)
CLUSTER_SETUP := $(BUILD)/.cluster-setup-stamp
$(CLUSTER_SETUP): scripts/setup.sh | $(SETUP)
	sh scripts/setup.sh cluster
	@touch $@

# (models first and tests-hw beside the C builds: the models' export is one
# long Python process and the RTL builds one make each, so with -j they
# overlap the rest instead of waiting for it)
tests-built: models tests-hw cli firmware systemc $(SC_TEST) $(RV32_ELFS) $(UNIT_BINS) $(TSIM_CACHE_TEST) $(GEMM_GENERIC_TEST) $(HOST_GENERIC_TESTS) \
             $(SAN_BINS) $(DIRECTED) $(HW_TEST) $(DRIVER_BINS) $(XCFG_DUMP) $(CLUSTER_SETUP)

# the verilated models the tests use: every test configuration's RTL, the
# cycle-accurate SystemC module on two, the block tests. After what their
# sub-makes would otherwise build too (the CLI and firmware for the default
# RTL's profile training, the SystemC library, the tests' check.o)
tests-hw: cli firmware systemc $(CHECK_O)
	@for c in $(TEST_CONFIGS); do $(MAKE) --no-print-directory rtl HW=$$c || exit 1; done
	@for c in default small; do $(MAKE) --no-print-directory systemc-rtl HW=$$c || exit 1; done
	@for b in $(BLOCK_TESTS); do $(MAKE) --no-print-directory block BLK=$${b%%:*} HW=$${b##*:} || exit 1; done

# real model architectures (torchvision nets, a digits CNN, a transformer
# block) as ONNX test-case folders in build/models (scripts/export_models.py,
# tests/models/README.md): exported once; a newer script re-exports them all
PYTHON3      := /usr/bin/python3
MODELS_STAMP := $(BUILD)/models/.exported
.PHONY: models
models: $(MODELS_STAMP)
$(MODELS_STAMP): scripts/export_models.py scripts/make_bad_models.py | $(SETUP)
	$(PYTHON3) scripts/export_models.py --out $(BUILD)/models $(if $(wildcard $@),--force)
	$(PYTHON3) scripts/make_bad_models.py $(BUILD)/models-bad
	@touch $@

test: tests-built
	LOOM_ROOT=$(CURDIR) sh tests/run.sh

test-full: tests-built fuzz
	LOOM_ROOT=$(CURDIR) FULL=1 sh tests/run.sh

# the main job: the digits CNN (trained on scikit-learn's real images,
# examples/digits/) compiled to int8, 288 held-out images on the RTL through
# libloom and the firmware, checked against the C model byte for byte
DIGITS := examples/digits
EVAL_DIGITS = $(LOOM) eval $(DIGITS)/model.onnx --data $(DIGITS)/eval --labels $(DIGITS)/eval/labels.txt \
	      --calib $(DIGITS)/calib --hw default --backend rtl --compare cmodel --profile
run: cli rtl firmware
	@LOOM_ROOT=$(CURDIR) $(EVAL_DIGITS)
	@echo
	@echo "Next, a bigger model: ResNet-50 (exported by PyTorch, calibrated on 8 photo crops) on the RTL:"
	@echo "  make run-resnet50"

# ResNet-50 compiled and run once on the RTL with its per-layer profile
R50 := $(BUILD)/models-bench/resnet50_opset13
run-resnet50: cli rtl firmware | $(SETUP)
	@[ -f $(R50)/model.onnx ] || $(PYTHON3) scripts/export_models.py --out $(BUILD)/models-bench --only resnet50
	LOOM_ROOT=$(CURDIR) $(LOOM) compile $(R50)/model.onnx -o $(BUILD)/resnet50.loom --calib $(R50)/calib
	LOOM_ROOT=$(CURDIR) $(LOOM) run $(BUILD)/resnet50.loom --backend rtl --data $(R50)/test_data_set_0 --check --profile

bench: cli rtl bench-array models
	LOOM_ROOT=$(CURDIR) sh scripts/bench.sh

lint: cli
	sh scripts/lint_house.sh
	$(MAKE) --no-print-directory $(HWDIR)/npu_pkg.sv
	verilator --lint-only -Wall --top-module tb_top verilator_tb/lint.vlt $(HWDIR)/npu_pkg.sv $(RTL_SRCS) $(TB_SRCS) \
	  verilator_tb/tb_dram_tap.sv
	cppcheck --quiet --error-exitcode=1 --max-configs=1 --enable=warning,portability --std=c11 -Iinclude -I. \
	  --suppress=missingIncludeSystem --suppress=toomanyconfigs common hw cmodel driver ir runtime compiler cosim sweep tools tests

synth: $(GEN_HW)
	$(MAKE) --no-print-directory $(BUILD)/hw/small/npu_pkg.sv HW=small
	sh scripts/synth.sh $(BUILD)/hw/small

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj $(BUILD)/san $(BUILD)/tests $(BUILD)/systemc -name '*.d' 2>/dev/null)
