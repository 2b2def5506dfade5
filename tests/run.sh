#!/bin/sh
# run.sh - the test suite behind `make test` (and `make test-full` with
# FULL=1). Runs every suite, shows its output, takes the "N passed, M failed"
# line each suite ends with (a suite without one counts as one test, judged
# by its exit status) and ends with the total in the same form. Exit status
# is non-zero when anything failed.
B=${BUILD:-build}
LOOM="$B/bin/loom"
total_p=0
total_f=0
failed_suites=""
log=$(mktemp)
trap 'rm -f "$log"' EXIT

suite() {
	name=$1
	shift
	echo "=== $name: $*"
	start=$(date +%s)
	"$@" >"$log" 2>&1
	rc=$?
	tail -n 25 "$log"
	line=$(grep -E '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -n "$line" ]; then
		p=$(echo "$line" | sed -E 's/^([A-Za-z-]+: )?([0-9]+) passed, ([0-9]+) failed.*/\2/')
		f=$(echo "$line" | sed -E 's/^([A-Za-z-]+: )?([0-9]+) passed, ([0-9]+) failed.*/\3/')
	else
		p=0
		f=0
		if [ $rc -eq 0 ]; then p=1; fi
	fi
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	total_p=$((total_p + p))
	total_f=$((total_f + f))
	[ $rc -ne 0 ] && failed_suites="$failed_suites $name"
	echo "--- $name: $p passed, $f failed, exit $rc, $(( $(date +%s) - start ))s"
}

if [ -n "$FULL" ]; then COSIM_N=1000; SAN_SWEEP=all; else COSIM_N=250; SAN_SWEEP=quick; fi

# the house (docs/ARCHITECTURE.md): includes only downward, no file over 1500
# lines, no function over 150; docs/OPERATORS.md's table is the code's
# (loom ops); a plain `make` builds everything (its default goal is all)
suite house-layers sh scripts/lint_house.sh
suite house-ops-doc "$LOOM" ops --check docs/OPERATORS.md
suite house-perf-keep sh tests/unit/perf_keep_test.sh
suite house-make-default sh -c 'make -pnq 2>/dev/null | grep -qx "\.DEFAULT_GOAL := all"'

# C unit tests (the C model, the program generator)
suite unit-cmodel "$B/tests/test_cmodel"
# the C model's generic, AVX2 and AVX-512 (MATMUL on VNNI) data paths (random
# instructions on ten array shapes, the corners of requantization; a path the
# CPU lacks is skipped) and its timing memo (replayed, diverging, aborted jobs) agree
suite unit-cmodel-paths "$B/tests/test_cmodel_paths"
suite unit-cosim-gen "$B/tests/test_cosim_gen"
# the timing model of whole programs (loom_tsim_run) gives the cycles recorded in
# tests/unit/tsim_golden.txt (random programs on six configurations)
suite unit-tsim "$B/tests/test_tsim" tests/unit/tsim_golden.txt
# the same with tsim.c's cached next-event candidates checked against fresh ones at every event
suite unit-tsim-cache "$B/tests/test_tsim_cache" tests/unit/tsim_golden.txt
# the control core's ISS: unit cases, then the RV32IM suite tests/rv32
suite unit-rv-iss "$B/tests/test_rv_iss" "$B/rv32"
# the ONNX importer over Debian's ONNX test data, malformed files
suite unit-onnx "$B/tests/test_onnx"
# the float CPU kernels (hand cases and their ONNX node test cases)
suite unit-cpu-ops "$B/tests/test_cpu_ops"
# the float GEMM, with the CPU's micro-kernel and with the portable one
suite unit-gemm "$B/tests/test_gemm"
suite unit-gemm-generic "$B/tests/test_gemm_generic"
suite unit-cpu-shape "$B/tests/test_cpu_shape"
suite unit-passes "$B/tests/test_passes"
suite unit-modelfile "$B/tests/test_modelfile"
suite unit-calib "$B/tests/test_calib"
# calibration's statistics and the weight quantization on their portable
# code (LOOM_HOST_GENERIC): the same checks as on this CPU's vector units
suite unit-calib-generic "$B/tests/test_calib_generic"
# loom_compile as a library: placement, steps, fallbacks, errors, a run on the C model
suite unit-compile "$B/tests/test_compile"
suite unit-compile-generic "$B/tests/test_compile_generic"
# an image stem's padded input written by the host's QUANT: no copy layer, the
# same bytes as the copy, the new step fields in the .loom file
suite unit-compile-stem "$B/tests/test_compile_stem"
# the tile planners' choice among timed finalists: the fewest DRAM bytes within 1% of
# the fastest (npu_choose), on hand-made cases and two ResNet-50 layers
suite unit-plan-choice "$B/tests/test_plan_choice"
# the runtime's inference requests: K runs of one model in flight, against plain runs
suite unit-exec-req "$B/tests/test_exec_req"
# loom sweep's analytical answer against full compiles (calibration reuse, the
# layers re-planned per point, one search for many points), the grid
suite unit-sweep "$B/tests/test_sweep" "$B/models"
# the area and energy model (sweep/): the technology file and its errors, energy
# per event, area from a stand-in Yosys's cell counts, the cache
suite unit-area "$B/tests/test_area"
# ONNX test cases on the reference executor: every case of tests/onnx/ref_expect.txt must pass
d=/usr/share/libonnx-testdata/data
suite onnx-ref "$LOOM" test-onnx "$d/node" "$d/simple" "$d/pytorch-converted" "$d/pytorch-operator" \
	--backend ref --expect tests/onnx/ref_expect.txt -q
# real architectures exported by PyTorch (make models: squeezenet, mobilenet v2/v3,
# resnet18, shufflenet, a CNN trained on the digits data set, a transformer block)
suite onnx-ref-models "$LOOM" test-onnx "$B/models" --backend ref --atol 1e-4 --rtol 1e-3
# the same test cases compiled to INT8 and run on the NPU (C model): every case
# that passes on the reference executor passes, outputs within 4 int8 steps, and
# each case puts exactly as many nodes on the NPU as tests/onnx/npu_expect.txt
# lists (none when not listed): a fallback to the CPU fails, so does a stale list
# (loom test-onnx ... --write-placement tests/onnx/npu_expect.txt rewrites it)
pl=tests/onnx/npu_expect.txt
suite onnx-npu-cmodel "$LOOM" test-onnx "$d/node" "$d/simple" "$d/pytorch-converted" "$d/pytorch-operator" \
	--backend cmodel --expect tests/onnx/ref_expect.txt --placement $pl -q
# README's counts of those cases (all, on the NPU, CPU only) are the lists'
suite readme-onnx-counts sh tests/onnx/readme_counts.sh README.md tests/onnx/ref_expect.txt $pl
# a sample of node cases on the RTL, placement checked the same way
n="$d/node"
suite onnx-npu-rtl "$LOOM" test-onnx --backend rtl --placement $pl "$n/test_basic_conv_with_padding" \
	"$n/test_conv_with_strides_and_asymmetric_padding" "$n/test_gemm_default_vector_bias" "$n/test_gemm_transposeB" \
	"$n/test_matmul_2d" "$n/test_maxpool_2d_pads" "$n/test_maxpool_2d_ceil" "$n/test_averagepool_2d_strides" \
	"$n/test_averagepool_2d_pads_count_include_pad" "$n/test_add" "$n/test_mul" "$n/test_relu" "$n/test_sigmoid" \
	"$n/test_leakyrelu" "$n/test_clip_splitbounds" "$n/test_batchnorm_example" "$n/test_hardswish" "$n/test_tanh"
# the main job (make run): the digits CNN on the RTL, 288 held-out images,
# float vs int8 accuracy, every output byte-identical to the C model's, the
# whole model on the NPU
suite main-job-rtl "$LOOM" eval examples/digits/model.onnx --data examples/digits/eval \
	--labels examples/digits/eval/labels.txt --calib examples/digits/calib --hw default --backend rtl \
	--compare cmodel --profile --min-accuracy 0.97 --min-npu-macs 1
# int8 that keeps trained models' decisions (tests/models/accuracy.sh): on the digits
# CNN with an outlier channel, min-max leaves held-out sets below cosine 0.99, loom
# compile --accuracy 0.99 reaches it on every one (0.999 with conv1 and conv2 in
# float); the digits CNN and its QDQ form agree with float on >= 99.5% of the 288
# held-out images and of the 1728 outside the calibration set
suite accuracy sh tests/models/accuracy.sh "$LOOM" "$B/models"
# the exported models compiled with their calibration folders, run on the C
# model against PyTorch: each case within its bounds of tests/models/bounds.txt
# (min cosine similarity and max absolute error, with the reason and the
# margin); a case whose model is missing fails
suite models-npu-cmodel sh tests/models/npu_models.sh "$LOOM" "$B/models" cmodel
# other configurations: the same bounds on small and odd, and the int8 results
# themselves byte-identical on small, default, large and odd (tests/models/xcfg.sh)
for c in small odd; do
	suite "models-npu-cmodel-$c" env HW=$c sh tests/models/npu_models.sh "$LOOM" "$B/models" cmodel \
		npu_ops_opset13 squeezenet1_1_opset13 digits_qdq_opset13
done
# the C model's data paths (generic against AVX2 and AVX-512) and timing memo on
# whole models: outputs, per-layer profiles and bench cycles identical (default;
# odd: 12 rows, 20 columns)
suite models-cmodel-paths sh tests/models/cmodel_paths.sh "$LOOM" "$B/models" digits_cnn_opset13 \
	squeezenet1_1_opset13 resnet18_opset13
suite models-cmodel-paths-odd env HW=odd sh tests/models/cmodel_paths.sh "$LOOM" "$B/models" npu_ops_opset13
suite models-xcfg sh tests/models/xcfg.sh "$B/tests/xcfg_dump" "$B/models" squeezenet1_1_opset13 digits_cnn_opset13 \
	digits_qdq_opset13 npu_ops_opset13 mobilenet_v2_opset13 resnet18_opset13 mobilenet_v3_small_opset13 \
	shufflenet_v2_x0_5_opset13 tiny_transformer_opset13 regnet_x_400mf_opset13
suite models-npu-rtl sh tests/models/npu_models.sh "$LOOM" "$B/models" rtl digits_cnn_opset13 squeezenet1_1_opset13 \
	npu_ops_opset13 tiny_transformer_opset13
# the energy event counters of whole models: the same on the RTL and the C model, non-zero
suite energy-events sh tests/models/energy_events.sh "$LOOM" "$B/models" digits_cnn_opset13 squeezenet1_1_opset13
# loom bench: latency percentiles and throughput with 1 and 4 requests in
# flight on the C model, outputs byte-identical to a plain run, bad input
suite models-bench sh tests/models/bench_cli.sh "$LOOM" "$B/models"
# loom compile / objdump / run as a user meets them, broken models included
suite compile-cli sh tests/models/compile_cli.sh "$LOOM" "$B/models" "$B/models-bad"
# loom run MODEL.loom: inputs from .pb/.npy files, --output-dir, --hw, --profile,
# --profile-csv, --trace (C model); the trace and a one-layer waveform on the RTL;
# the RTL's outputs byte-identical to the C model's (ResNet-18; ResNet-50 in test-full)
suite run-cli sh tests/models/run_cli.sh "$LOOM" "$B/models"
suite run-rtl-trace-wave sh tests/models/run_rtl.sh "$LOOM" "$B/models"
suite run-same-outputs sh tests/models/same_outputs.sh "$LOOM" "$B/models" resnet18_opset13
if [ -n "$FULL" ]; then
	r50="$B/models-bench/resnet50_opset13"
	[ -f "$r50/model.onnx" ] || /usr/bin/python3 scripts/export_models.py --out "$B/models-bench" --only resnet50 >/dev/null
	suite run-same-outputs-resnet50 sh tests/models/same_outputs.sh "$LOOM" "$B/models-bench" resnet50_opset13
fi
# the timing model against the RTL, per layer (docs/DSE.md, "Timing model
# accuracy"): the planners' estimate and the C model within the documented
# bounds on every configuration, on vector-unit and DRAM-bound layers too
tb="--max-median 2 --max-worst 5 --max-whole 1 --cm-max-median 2 --cm-max-worst 5 --cm-max-whole 1 -q"
# shellcheck disable=SC2086
suite timing-validate "$LOOM" sweep --validate "$B/models/digits_cnn_opset13/model.onnx" \
	"$B/models/npu_ops_opset13/model.onnx" --hw small,default,large,odd,default:dram_bw=4,dram_latency=200 $tb
# shellcheck disable=SC2086
suite timing-validate-models "$LOOM" sweep --validate "$B/models/squeezenet1_1_opset13/model.onnx" \
	"$B/models/shufflenet_v2_x0_5_opset13/model.onnx" --hw default,odd $tb
# the same on layers with a residual Add fused into their STORE (STORE SOURCE 3)
if [ -n "$FULL" ]; then
	# shellcheck disable=SC2086
	suite timing-validate-resadd "$LOOM" sweep --validate "$B/models/resnet18_opset13/model.onnx" \
		"$B/models/mobilenet_v2_opset13/model.onnx" --hw default,small $tb
fi
# loom sweep: a 3x2 grid on the RTL, the cache (resume, nothing recomputed), plots
# (PNG IHDR), bad points with reasons, --jobs 1 = 2, GNU parallel, usage errors; then
# --slurm on a single-node Slurm cluster this script starts and stops (about 15 s)
# (area from tests/unit/yosys_stub.sh in a cache of its own: a real synthesis takes
# minutes per configuration; the real one in test-full, sweep_area.sh)
stub_area="env LOOM_YOSYS=$PWD/tests/unit/yosys_stub.sh LOOM_AREA_CACHE=$B/area-stub"
suite sweep-cli $stub_area sh tests/models/sweep_cli.sh "$LOOM" "$B/models"
suite sweep-slurm $stub_area sh tests/models/sweep_slurm.sh "$LOOM" "$B/models"
# bad input gets a clear error naming it and exit 2, never a silent default: model
# inputs, option values, backends and configurations of every command, --calib
# folders, the warning for calibration on random data
suite bad-input sh tests/models/bad_input.sh "$LOOM" "$B/models"
# the same under AddressSanitizer and UndefinedBehaviorSanitizer
suite asan-cmodel "$B/tests/san_test_cmodel"
suite asan-cmodel-paths "$B/tests/san_test_cmodel_paths"
suite asan-cosim-gen "$B/tests/san_test_cosim_gen"
suite asan-rv-iss "$B/tests/san_test_rv_iss" "$B/rv32"
suite asan-onnx "$B/tests/san_test_onnx"
suite asan-cpu-ops "$B/tests/san_test_cpu_ops"
suite asan-gemm "$B/tests/san_test_gemm"
suite asan-cpu-shape "$B/tests/san_test_cpu_shape"
suite asan-passes "$B/tests/san_test_passes"
suite asan-calib "$B/tests/san_test_calib"
suite asan-modelfile "$B/tests/san_test_modelfile"
suite asan-compile "$B/tests/san_test_compile"
suite asan-compile-stem "$B/tests/san_test_compile_stem"
suite asan-plan-choice "$B/tests/san_test_plan_choice"
suite asan-exec-req "$B/tests/san_test_exec_req"
# (make test: the digits CNN's sweep points only; SqueezeNet's under the sanitizers in test-full)
suite asan-sweep "$B/tests/san_test_sweep" "$B/models" $SAN_SWEEP
suite asan-area "$B/tests/san_test_area"
suite asan-directed "$B/tests/san_test_directed" --backend cmodel --hw odd
# compile, model file and runtime under the sanitizers: the ONNX cases and
# models through loom compile and loom run on the C model
suite asan-onnx-npu "$B/bin/loom-san" test-onnx "$d/node" "$d/simple" "$d/pytorch-converted" "$d/pytorch-operator" \
	--backend cmodel --expect tests/onnx/ref_expect.txt --placement $pl -q
suite asan-models-npu sh tests/models/npu_models.sh "$B/bin/loom-san" "$B/models" cmodel npu_ops_opset13 \
	squeezenet1_1_opset13 digits_qdq_opset13 tiny_transformer_opset13
# the --accuracy search (every step: methods, bias correction, float fallback) under the sanitizers
suite asan-accuracy "$B/bin/loom-san" compile "$B/models/digits_outlier_opset13/model.onnx" -o "$B/asan-accuracy.loom" \
	--calib "$B/models/digits_outlier_opset13/calib" --accuracy 0.999 --no-cache -q
# loom sweep under the sanitizers: two local workers, bad points, the RTL
swd=$(mktemp -d)
suite asan-sweep-cli $stub_area "$B/bin/loom-san" sweep "$B/models/digits_cnn_opset13/model.onnx" --array 8x8,16x16,0x8 \
	--spad 16K,64K --dram-latency 40,80 --jobs 2 -o "$swd/a"
suite asan-sweep-rtl $stub_area "$B/bin/loom-san" sweep "$B/models/digits_cnn_opset13/model.onnx" --dram-latency 40,80 --rtl \
	--jobs 1 --no-plots -o "$swd/r"
rm -rf "$swd"
# hardware-access layer, configurations, run bound, waveforms, bus errors at a fetch,
# LOAD, STORE and MARK with the RTL against the C model (both backends)
suite hw-default "$B/tests/test_hw" --hw default
# the rtl backend's library exports its entry point and fingerprint only
suite rtl-exports sh tests/unit/rtl_exports_test.sh "$B/hw/default/libloom_rtl.so"
# libloom: ELF validation and calls without firmware; the protocol suite
# against a stand-in firmware (tests/driver/stub_fw), then against the real
# firmware on both backends and under the sanitizers
suite driver-unit "$B/tests/test_driver"
suite asan-driver "$B/tests/san_test_driver"
suite selftest-stub-cmodel "$LOOM" selftest --backend cmodel --hw default --fw "$B/tests/stub_fw.elf"
suite selftest-cmodel-default "$LOOM" selftest --backend cmodel --hw default
suite selftest-rtl-default "$LOOM" selftest --backend rtl --hw default
suite asan-selftest-cmodel "$B/bin/loom-san" selftest --backend cmodel --hw default
# the NPU as a SystemC TLM-2.0 module on the C model (systemc/) in the reference
# virtual platform, libloom through the systemc backend: the protocol suite, and
# models whose outputs are byte-identical to the C model's
# the module on its own (tests/systemc/test_npu_sc.cpp): register protocol errors,
# a program's bytes, the DRAM socket's bytes = the DRAM counters, the interrupt at
# START + CYCLES with DMI and without, on quanta of 1000 and 100000 cycles; the
# memory's error range and a LOAD's and a STORE's BUS_ERROR
suite systemc-module env SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$B/tests/test_npu_sc"
suite systemc-module-quantum env SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$B/tests/test_npu_sc" 100000
# docs/SYSTEMC.md's sc_main builds against build/systemc/libloom_npu_sc.a and runs as the page says
suite systemc-example sh tests/systemc/example.sh "$B"
suite selftest-systemc-default "$LOOM" selftest --backend systemc --hw default
suite asan-selftest-systemc env LSAN_OPTIONS=suppressions=$PWD/tests/systemc/lsan.supp "$B/bin/loom-san" selftest \
	--backend systemc --hw default
# the other commands that run a model take the systemc backend too: the main job's
# eval with every output byte-identical to the C model's, and ONNX node cases with
# their placement checked
suite eval-systemc env SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$LOOM" eval examples/digits/model.onnx \
	--data examples/digits/eval --labels examples/digits/eval/labels.txt --calib examples/digits/calib --hw default \
	--backend systemc --compare cmodel --min-accuracy 0.97 --min-npu-macs 1
suite onnx-npu-systemc env SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$LOOM" test-onnx --backend systemc --placement $pl \
	"$n/test_basic_conv_with_padding" "$n/test_gemm_default_vector_bias" "$n/test_maxpool_2d_pads" "$n/test_add" \
	"$n/test_sigmoid" "$n/test_batchnorm_example"
suite run-same-outputs-systemc env OTHER=systemc sh tests/models/same_outputs.sh "$LOOM" "$B/models" \
	digits_cnn_opset13 resnet18_opset13
# the cycle-accurate SystemC module on the verilated RTL (systemc/loom_npu_ca_sc.h)
# in the same platform, the systemc-rtl backend: the protocol suite; a model's
# outputs byte-identical to the C model's and the rtl backend's, with the rtl
# backend's device and engine cycles; random programs (bad ones too, and on
# small's 8-byte beats) with the same bytes, every counter and every run's
# cycles as on the rtl backend
# the module on its own (tests/systemc/test_npu_ca.cpp): register protocol errors,
# whole bursts as transactions adding up to the DRAM counters, a LOAD's and a STORE's
# burst answered with an error: BUS_ERROR at that instruction, then a good run
suite systemc-rtl-module env SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$B/hw/default/test_npu_ca"
suite selftest-systemc-rtl-default "$LOOM" selftest --backend systemc-rtl --hw default
suite run-same-outputs-systemc-rtl env OTHER=systemc-rtl sh tests/models/same_outputs.sh "$LOOM" "$B/models" \
	digits_cnn_opset13
suite cosim-systemc-rtl-default "$LOOM" cosim --hw default --count 100 --seed 810001 --a systemc-rtl --b rtl
suite cosim-systemc-rtl-small "$LOOM" cosim --hw small --count 100 --seed 811001 --a systemc-rtl --b rtl
suite cosim-systemc-rtl-bad-default "$LOOM" cosim --hw default --bad --count "$("$LOOM" cosim --bad-kinds)" \
	--seed 83 --a systemc-rtl --b rtl
suite cosim-systemc-rtl-dram "$LOOM" cosim --hw default --count 30 --seed 820001 --a systemc-rtl --b rtl \
	--dram-latency 200 --dram-bw 4
# per-block RTL tests
for t in $B/blocks/*/*_tb; do
	case $t in */requant_tb) args=1000000 ;; */cpu_tb) args=$B/rv32 ;; *) args= ;; esac
	# shellcheck disable=SC2086
	[ -x "$t" ] && suite "block-$(basename "$(dirname "$t")")-$(basename "$t")" "$t" $args
done
# directed layers against the plain C reference, both backends
for c in small default large odd; do
	suite "directed-cmodel-$c" "$B/tests/test_directed" --backend cmodel --hw $c
done
for c in default odd; do
	suite "directed-rtl-$c" "$B/tests/test_directed" --backend rtl --hw $c
done
# random layers (a third of them packed where they can: xpack) with random hints
suite directed-rtl-random-odd "$B/tests/test_directed" --backend rtl --hw odd --random 120 --case random
# random co-simulation RTL vs C model (>= 500 programs over four configs)
seed=1
for c in small default large odd; do
	suite "cosim-$c" "$LOOM" cosim --hw $c --count $COSIM_N --seed $seed
	seed=$((seed + 100000))
done
# tests/configs/limits.cfg: small with the store DMA's write bursts waiting for
# their response limited to 4 (dma_wr_outstanding), so the limit binds, and 5
# multipliers a vector lane (vec_macs: DWCONV passes of up to 5 taps)
suite cosim-limits "$LOOM" cosim --hw tests/configs/limits.cfg --count $COSIM_N --seed 400001
# the C model against itself: its generic kernels against the best this CPU
# has (AVX-512 with MATMUL on VNNI, else AVX2; and AVX2 forced on default), and
# without its timing memo against with it, each program run twice (the second
# run's timing replayed): the same bytes, counters and cycles (bad programs too)
if [ -n "$FULL" ]; then CM_N=1000; else CM_N=100; fi
seed=500001
for c in small default large odd; do
	suite "cosim-cmodel-generic-$c" "$LOOM" cosim --hw $c --count $CM_N --seed $seed --a cmodel-generic --b cmodel \
		--repeat 2
	suite "cosim-cmodel-memo-$c" "$LOOM" cosim --hw $c --count $CM_N --seed $((seed + 50000)) --a cmodel-nomemo \
		--b cmodel --repeat 2
	seed=$((seed + 100000))
done
suite cosim-cmodel-generic-avx2 env LOOM_CMODEL_SIMD=avx2 "$LOOM" cosim --hw default --count $CM_N --seed 590001 \
	--a cmodel-generic --b cmodel --repeat 2
suite cosim-cmodel-memo-bad "$LOOM" cosim --hw default --bad --count "$("$LOOM" cosim --bad-kinds)" --seed 91 \
	--a cmodel-nomemo --b cmodel --repeat 2
# the SystemC module (its DRAM a TLM memory behind its initiator socket) against
# the C model: the same bytes, counters and engine cycle counters, bad programs too
seed=700001
for c in small default large odd; do
	suite "cosim-systemc-$c" "$LOOM" cosim --hw $c --count $COSIM_N --seed $seed --a systemc --b cmodel
	seed=$((seed + 100000))
done
suite cosim-systemc-bad-odd "$LOOM" cosim --hw odd --bad --count "$("$LOOM" cosim --bad-kinds)" --seed 77 \
	--a systemc --b cmodel
# the platform hands the run's DRAM timing to the module's C model (and its memory)
suite cosim-systemc-dram "$LOOM" cosim --hw default --count 100 --seed 790001 --a systemc --b cmodel \
	--dram-latency 200 --dram-bw 4
# bad programs: same error on both backends, and the next program runs;
# the kind is seed % (number of kinds), so each run covers every kind once
nbad=$("$LOOM" cosim --bad-kinds)
seed=7
for c in small default odd; do
	suite "cosim-bad-$c" "$LOOM" cosim --hw $c --bad --count "$nbad" --seed $seed
	seed=$((seed + 100 * nbad))
done

# Yosys accepts every module; the area of two configurations from real
# synthesis, ordered and cached in build/area (minutes: test-full only)
if [ -n "$FULL" ]; then
	suite yosys-synth sh scripts/synth.sh "$B/hw/small"
	suite area-yosys "$B/tests/test_area" --yosys
	suite sweep-area-yosys sh tests/models/sweep_area.sh "$LOOM" "$B/models"
fi

# libFuzzer on the ONNX reader and the .loom reader, a few minutes each
# (test-full only), from seed corpora of real files
if [ -n "$FULL" ]; then
	corp=$(mktemp -d)
	mkdir -p "$corp/onnx" "$corp/loom"
	for c in test_conv_with_strides_padding test_gemm_all_attributes test_maxpool_2d_pads test_concat_3d_axis_1 \
		test_resize_upsample_scales_linear test_slice test_softmax_axis_1; do
		[ -f "$d/node/$c/model.onnx" ] && cp "$d/node/$c/model.onnx" "$corp/onnx/$c.onnx"
	done
	cp "$B/models/digits_cnn_opset13/model.onnx" "$B/models/tiny_transformer_opset13/model.onnx" "$corp/onnx/" 2>/dev/null
	cp "$B/models/digits_cnn_opset13/model.onnx" "$corp/onnx/digits.onnx"
	"$LOOM" compile "$B/models/digits_cnn_opset13/model.onnx" -o "$corp/loom/digits.loom" --no-cache -q >/dev/null
	"$LOOM" compile "$B/models/tiny_transformer_opset13/model.onnx" -o "$corp/loom/tt.loom" --no-cache -q >/dev/null
	suite fuzz-onnx "$B/fuzz/fuzz_onnx" -max_total_time=180 -seed=1 -rss_limit_mb=4096 "$corp/onnx"
	suite fuzz-model "$B/fuzz/fuzz_model" -max_total_time=120 -seed=1 -rss_limit_mb=4096 "$corp/loom"
	rm -rf "$corp"
fi

echo
if [ -n "$failed_suites" ]; then echo "failed suites:$failed_suites"; fi
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ] && [ -z "$failed_suites" ]
