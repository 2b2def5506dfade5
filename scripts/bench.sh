#!/bin/sh
# bench.sh - the benchmarks behind `make bench`; writes docs/PERFORMANCE.md.
#  1. MAC utilization of a compute-bound conv layer (56x56x64 -> 64, 3x3,
#     stride 1) on the default configuration's RTL, every cycle from START to
#     FINISH counted, and of a GEMM; cycles and lane utilization of the
#     vector-unit layers of `loom demo` (dwconv, maxpool, add), with the C
#     model's estimates beside them;
#  2. simulation speed: simulated MACs (and cycles) per wall-clock second of
#     the whole NPU on that layer, and of the bare MAC array of the same size
#     verilated with the same flags, measured in the same run;
#  3. Verilator build time of the default configuration from scratch
#     (ccache off);
#  5. loom compile: ResNet-50 with 8 calibration inputs (compile time, peak
#     device memory with and without buffer reuse), ResNet-18, MobileNetV2;
#  4. the control core, firmware and libloom: round trip of an empty job
#     (a FINISH only) through libloom and the firmware on the C model in
#     wall-clock microseconds, jobs per second with the ring full, firmware
#     instructions per job; device cycles per job on the RTL.
# Ratios are taken within this one run; the machine is shared and noisy.
set -e
B=${BUILD:-build}
LOOM="$B/bin/loom"
OUT=docs/PERFORMANCE.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
echo "bench: conv, GEMM and the vector layers on the RTL (default)"
"$LOOM" demo --hw default --backend rtl | tee "$tmp/demo.txt"
echo "bench: bare array"
"$B/bench/array_default/bench_array" 1000000 | tee "$tmp/array.txt"
echo "bench: the NPU again, conv only (speed)"
"$LOOM" demo --hw default --backend rtl --layer conv | tee "$tmp/demo2.txt"
"$B/bench/array_default/bench_array" 1000000 | tee -a "$tmp/array.txt"
load1=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
echo "bench: C model on the same layers"
"$LOOM" demo --hw default --backend cmodel | tee "$tmp/demo_cm.txt"

echo "bench: empty jobs through libloom and the firmware"
# a FINISH-only program: one 32-byte instruction, opcode 0x0f
printf '\017' > "$tmp/empty.bin"
dd if=/dev/zero bs=1 count=31 2>/dev/null >> "$tmp/empty.bin"
"$LOOM" run --backend cmodel --hw default --insns "$tmp/empty.bin" --repeat 50000 --ring 1 | tee "$tmp/job_cm1.txt"
"$LOOM" run --backend cmodel --hw default --insns "$tmp/empty.bin" --repeat 50000 --ring 64 | tee "$tmp/job_cm64.txt"
"$LOOM" run --backend rtl --hw default --insns "$tmp/empty.bin" --repeat 200 --ring 1 | tee "$tmp/job_rtl.txt"

echo "bench: loom compile of ResNet-50 with 8 calibration inputs (best of two), and models on the C model"
r50="$B/models-bench/resnet50_opset13"
[ -f "$r50/model.onnx" ] || /usr/bin/python3 scripts/export_models.py --out "$B/models-bench" --only resnet50
best_compile() { # best_compile NAME MODEL_DIR: wall seconds of the faster of two compiles
	b=""
	for k in 1 2; do
		t0=$(date +%s.%N)
		"$LOOM" compile "$2/model.onnx" -o "$tmp/$1.loom" --calib "$2/calib" --no-cache --report "$tmp/$1.json" \
			> "$tmp/$1.txt"
		t1=$(date +%s.%N)
		b=$(awk -v a="$t0" -v c="$t1" -v b="$b" 'BEGIN{t=c-a; if (b == "" || t < b) b=t; printf "%.2f", b}')
	done
	echo "$b"
}
json_num() { sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" "$tmp/$1.json" | head -n1; }
r50_s=$(best_compile r50 "$r50")
tail -n 8 "$tmp/r50.txt"
r18_s=$(best_compile r18 "$B/models/resnet18_opset13")
mb2_s=$(best_compile mb2 "$B/models/mobilenet_v2_opset13")
model_row() { # model_row NAME TITLE SECONDS DATA: a table row, with the C model's cycles per inference
	"$LOOM" run "$tmp/$1.loom" --backend cmodel --data "$4" --check > "$tmp/$1.run" 2>&1
	cyc=$(sed -n 's/.* NPU jobs, \([0-9]*\) device cycles per run.*/\1/p' "$tmp/$1.run")
	cos=$(sed -n 's/.*cosine \([0-9.]*\).*/\1/p' "$tmp/$1.run")
	mib() { awk -v b="$1" 'BEGIN{printf "%.1f", b/1048576}'; }
	echo "| $2 | $3 s | $(mib "$(json_num "$1" weights_bytes)") | $(mib "$(json_num "$1" activation_bytes)") | $(mib "$(json_num "$1" activation_bytes_no_reuse)") | $(mib "$(json_num "$1" peak_device_bytes)") | $(mib "$(json_num "$1" peak_device_bytes_no_reuse)") | $cyc | $cos |"
}
row_r50=$(model_row r50 "ResNet-50" "$r50_s" "$r50/test_data_set_0")
row_r18=$(model_row r18 "ResNet-18" "$r18_s" "$B/models/resnet18_opset13/test_data_set_0")
row_mb2=$(model_row mb2 "MobileNetV2" "$mb2_s" "$B/models/mobilenet_v2_opset13/test_data_set_0")
r50_time=$(grep '^time:' "$tmp/r50.txt")

echo "bench: Verilator build of the default config from scratch (ccache off)"
rm -rf "$B/hw/bench-default"
t0=$(date +%s)
CCACHE_DISABLE=1 make -s rtl HW=bench-default HWCFG=configs/default.cfg CCACHE= > "$tmp/build.txt" 2>&1
t1=$(date +%s)
build_s=$((t1 - t0))
rm -rf "$B/hw/bench-default"

conv_util=$(grep -A3 '^conv' "$tmp/demo.txt" | sed -n 's/.*utilization \([0-9.]*%\).*/\1/p' | head -n1)
conv_cyc=$(grep -A3 '^conv' "$tmp/demo.txt" | sed -n 's/.*cycles \([0-9]*\) .*/\1/p' | head -n1)
gemm_util=$(grep -A3 '^gemm' "$tmp/demo.txt" | sed -n 's/.*utilization \([0-9.]*%\).*/\1/p' | head -n1)
gemm_cyc=$(grep -A3 '^gemm' "$tmp/demo.txt" | sed -n 's/.*cycles \([0-9]*\) .*/\1/p' | head -n1)
cm_conv_util=$(grep -A3 '^conv' "$tmp/demo_cm.txt" | sed -n 's/.*utilization \([0-9.]*%\).*/\1/p' | head -n1)
cm_gemm_util=$(grep -A3 '^gemm' "$tmp/demo_cm.txt" | sed -n 's/.*utilization \([0-9.]*%\).*/\1/p' | head -n1)
npu_macs=$(cat "$tmp/demo.txt" "$tmp/demo2.txt" | grep -A5 '^conv' | sed -n 's/.*s: \([0-9.]*\) M simulated MAC\/s.*/\1/p' | sort -n | tail -n1)
npu_cps=$(cat "$tmp/demo.txt" "$tmp/demo2.txt" | grep -A5 '^conv' | sed -n 's/.*MAC\/s, \([0-9.]*\) M cycles\/s.*/\1/p' | sort -n | tail -n1)
arr_cps=$(sed -n 's/.*s: \([0-9]*\) cycles\/s.*/\1/p' "$tmp/array.txt" | sort -n | tail -n1)
arr_macs=$(awk -v c="$arr_cps" 'BEGIN{printf "%.1f", c*256/1e6}')
ratio=$(awk -v a="$npu_macs" -v b="$arr_macs" 'BEGIN{printf "%.2f", a/b}')
goal_txt=$(awk -v r="$ratio" 'BEGIN{print (r >= 0.7) ? "Met in this run" : "Not met in this run"}')

# vector-unit layers: a table row "| title | cycles | lane utilization |
# C model cycles | RTL / C model |" from the RTL and C model runs
vec_row() {
	cyc=$(grep -A3 "^$1 " "$tmp/demo.txt" | sed -n 's/.*cycles \([0-9]*\) .*/\1/p' | head -n1)
	util=$(grep -A3 "^$1 " "$tmp/demo.txt" | sed -n 's/.*lane utilization \([0-9.]*%\).*/\1/p' | head -n1)
	cm=$(grep -A3 "^$1 " "$tmp/demo_cm.txt" | sed -n 's/.*cycles \([0-9]*\) .*/\1/p' | head -n1)
	rel=$(awk -v a="$cyc" -v b="$cm" 'BEGIN{if (b > 0) printf "%.2f", a/b; else print "-"}')
	echo "| $2 | $cyc | $util | $cm | $rel |"
}
vec_dw=$(vec_row dwconv "dwconv 56x56x128, depthwise 3x3, stride 1, pad 1, per-channel requant, ReLU6 | MACs")
vec_mp=$(vec_row maxpool "maxpool 112x112x64 -> 56x56x64, 3x3, stride 2, pad 1 | window elements")
vec_add=$(vec_row add "add 56x56x64 + 56x56x64, different scales | output elements")

# empty jobs: "N jobs, 0 not OK: J jobs/s wall, U us wall per job, C device cycles per job, mean round trip R cycles"
job_us=$(sed -n 's/.* jobs\/s wall, \([0-9.]*\) us wall per job.*/\1/p' "$tmp/job_cm1.txt" | tail -n1)
job_rt_cm=$(sed -n 's/.*mean round trip \([0-9]*\) cycles.*/\1/p' "$tmp/job_cm1.txt" | tail -n1)
job_jps=$(sed -n 's/.*not OK: \([0-9.]*\) jobs\/s wall.*/\1/p' "$tmp/job_cm64.txt" | tail -n1)
fw_insns=$(sed -n 's/.*firmware: [0-9]* cycles, \([0-9]*\) instructions for the job.*/\1/p' "$tmp/job_cm1.txt" | tail -n1)
fw_cyc_rtl=$(sed -n 's/.*firmware: \([0-9]*\) cycles, [0-9]* instructions for the job.*/\1/p' "$tmp/job_rtl.txt" | tail -n1)
job_rt_rtl=$(sed -n 's/.*mean round trip \([0-9]*\) cycles.*/\1/p' "$tmp/job_rtl.txt" | tail -n1)

cat > "$OUT" <<EOM
# Performance

Measured by \`make bench\` (scripts/bench.sh) on $(date -u +%Y-%m-%d), on this
project's development machine (2 cores, shared and noisy: compare ratios
taken in the same run, not absolute numbers across runs). Each speed figure
is the best of two runs.

## MAC utilization (RTL, default config: 16x16 array, 256 KiB scratchpad)

Every cycle from START to FINISH counts, DMA included
(\`loom demo --hw default --backend rtl\`).

| layer | cycles | utilization (RTL) | C model estimate |
|---|---|---|---|
| conv 56x56x64 -> 64, 3x3, stride 1, pad 1 | $conv_cyc | $conv_util | $cm_conv_util |
| GEMM 256x1024 * 1024x256 | $gemm_cyc | $gemm_util | $cm_gemm_util |

Goal for the conv layer: at least 90%.

## Simulation speed

| what | simulated MAC/s | cycles/s |
|---|---|---|
| whole NPU (RTL), conv layer above | ${npu_macs} M | ${npu_cps} M |
| bare 16x16 array (npu_array only, same Verilator flags) | ${arr_macs} M | $(awk -v c="$arr_cps" 'BEGIN{printf "%.3f", c/1e6}') M |
| ratio NPU / bare array | $ratio | |

Goal: the NPU at least 0.7 of the bare array. ${goal_txt} (${ratio}); the
runs of earlier sessions measured 0.52 to 0.60. The ratio of a single run
moves with the load of this shared machine (load averages over 1, 5, 15 min
before the speed runs ${load0}, after them ${load1}, on 2 cores): the bare
array's own speed varied between runs more than the NPU's. By the profile
below the array alone takes 49% of the NPU's simulation time at the bare
array's cost per cycle, which puts the NPU at about half the bare array's
speed when both run undisturbed: the goal is not reliably met.

Profile of the conv layer on the RTL (perf, per RTL module): the array 49%
of simulation time (the same cost per cycle as the bare array), the compute
sequencer and array-to-accumulator lanes about 12%, command processor 7%,
accumulator, DMA engines, DRAM model, scratchpad, registers and vector unit
1-3% each; the rest is Verilator's evaluation overhead. No single block
outside the array is worth more than a few percent. (Measured once with
\`perf\` on a -g build of the default RTL; \`make bench\` does not repeat
it.)

Verilator evaluates all combinational logic on every clock edge whether or
not its inputs changed, so logic outside the array costs time even when
idle; \`perf record\` of an idle run shows where (the per-module split is
readable with \`verilator -fno-inline\`). Datapaths therefore sit in clocked
blocks under their valid bits where possible (the requantization lanes, the
PE grid's per-PE registers).

## Vector unit (RTL, default config: 16 lanes)

Lane utilization = useful lane operations / (cycles * R), R = 16 = array
rows = vector lanes, every cycle from START to FINISH counted, DMA
included. The operations: dwconv multiply-accumulates, maxpool window
elements (padding taps included), add output elements. The RTL columns come
from \`loom demo --hw default --backend rtl\` (the same run as the table
above; \`--layer vec\` runs only these three), the C model's from
\`loom demo --hw default --backend cmodel\`.

| layer | operations | cycles (RTL) | lane utilization (RTL) | C model estimate (cycles) | RTL / C model |
|---|---|---|---|---|---|
$vec_dw
$vec_mp
$vec_add

The vector unit reads one scratchpad line a cycle: a group of up to 16
output lines costs taps * (g + 1 for dwconv) + g + about 4 cycles
(rtl/npu_vector.sv), so the unit alone tops out near 83% for the 3x3
dwconv, 88% for the 3x3 pool and 31% for add (two reads and one write per
output line). In the run that added this section (2026-11-30; RTL 82.2%,
78.0%, 18.0%), dwconv was close to that bound, while maxpool and add, which
move 16-byte rows, were bound by the load DMA: with the busy counters read
out, the load engine was busy in 97% of their cycles, about 2.7 cycles per
16-byte row, near the limit of 16 outstanding reads over 40 cycles of DRAM
latency (2.5 cycles a row). The C model's load estimate is about one cycle a
row, hence its lower cycle counts for these two layers.

## Control core, firmware and driver

An empty job (one FINISH instruction) submitted through libloom, served by
the firmware on the control core, completed and reaped
(\`loom run --insns EMPTY --repeat N --ring 1|64\`, default config):

| what | measured | goal |
|---|---|---|
| round trip of one empty job, C model, wall clock (ring of 1: submit, run until its completion, reap) | ${job_us} us (${job_rt_cm} device cycles) | under 5 us |
| jobs per second with the ring full (64 entries), C model | ${job_jps} | |
| firmware instructions per job (completion record's fw_insns) | ${fw_insns} | under 300 |
| control-core cycles per job on the RTL (fw_cycles: taking the job to writing its record) | ${fw_cyc_rtl} | |
| device cycles per empty job on the RTL, submit to completion | ${job_rt_rtl} | |

On the RTL most of a job's core cycles are DRAM-window accesses (a single
word each, about 47 cycles at the simulated 40-cycle latency, writes waiting
for their response): the firmware reads the 64-byte job record and writes
the completion record word by word. The C model's ISS counts 1-2 cycles
per load or store.

## Compiler (loom compile)

Wall-clock time of \`loom compile MODEL.onnx --calib DIR --no-cache\` with
the 8 calibration inputs of the model's \`calib/\` folder (best of two), the
device memory of the compiled model from its report, and one inference on
the C model (\`loom run --backend cmodel --check\`: device cycles, which are
the C model's estimates, and the cosine similarity of the int8 result with
PyTorch's float output). Activations with buffer reuse: the arena planned by
liveness; without: every activation its own buffer. Peak: the model's whole
DRAM image (weights, activations, MARK records, programs).

| model | compile | weights MiB | activations MiB (reuse) | activations MiB (no reuse) | peak MiB (reuse) | peak MiB (no reuse) | cycles / inference | cosine vs PyTorch |
|---|---|---|---|---|---|---|---|---|
$row_r50
$row_r18
$row_mb2

Goal: ResNet-50 with 8 calibration inputs compiled in under 5 s. ResNet-50's
stages in this run: ${r50_time#time: }. Calibration runs the float model
once per input on the reference executor's kernels.

## Verilator build time

Default configuration from scratch, ccache off
(\`make rtl HW=... HWCFG=configs/default.cfg\`): ${build_s} s. Goal: under 120 s.

## Raw output

\`\`\`
$(cat "$tmp/demo.txt" "$tmp/demo2.txt" "$tmp/array.txt" "$tmp/demo_cm.txt" "$tmp/job_cm1.txt" "$tmp/job_cm64.txt" "$tmp/job_rtl.txt")
$(tail -n 8 "$tmp/r50.txt")
$(cat "$tmp/r50.run")
\`\`\`
EOM
echo "bench: wrote $OUT"
