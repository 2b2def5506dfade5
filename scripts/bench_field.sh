#!/bin/sh
# bench_field.sh - section 13 of `make bench` (scripts/bench.sh): torchvision
# networks that no test names, compiled for the default configuration and
# run on the C model: where their nodes go, estimated and C-model cycles,
# MAC utilization, and the int8 output against PyTorch's float32 output.
# The networks are scripts/export_models.py's BENCH_ARCHS (random weights,
# BatchNorm recalibrated, photographs; exported into $BUILD/models-field
# when missing); a markdown section on stdout.
#   sh scripts/bench_field.sh [CASE...]      (default: every case below)
set -e
B=${BUILD:-build}
LOOM="$B/bin/loom"
PY=${PYTHON3:-/usr/bin/python3}
DIR="$B/models-field"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cases=${*:-"efficientnet_b0_opset13 mobilenet_v3_large_opset13 mnasnet0_5_opset13 regnet_y_400mf_opset13
resnext50_32x4d_opset13 googlenet_opset13 densenet121_opset13 convnext_tiny_opset17 alexnet_opset11
squeezenet1_0_opset9 deeplabv3_mobilenet_v3_large_opset11 lraspp_mobilenet_v3_large_opset13"}
missing=""
for c in $cases; do
	[ -f "$DIR/$c/model.onnx" ] || missing="$missing $c"
done
[ -z "$missing" ] || "$PY" scripts/export_models.py --out "$DIR" --only $missing >&2
# the array's MACs a cycle, from the configuration file
macs_cycle=$(awk -F= '$1 ~ /^ *array_(rows|cols) *$/ { p = (p ? p : 1) * $2 } END { print p }' configs/default.cfg)
echo "## Other networks (default config, C model)"
echo
echo "Measured on $(date -u +%Y-%m-%d) (\`sh scripts/bench_field.sh\`, section 13 of \`make bench\`; load"
echo "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')). torchvision networks that no test names (scripts/export_models.py's"
echo "BENCH_ARCHS: seeded random weights, BatchNorm recalibrated, a photograph crop; calibrated on 8 other"
echo "crops). **NPU/CPU**: nodes on the NPU (fused ones included) and on the CPU. **Utilization**: the"
echo "model's MACs / (C-model cycles x $macs_cycle). **Cosine**: the int8 output against PyTorch's float32 output"
echo "(segmentation: over every pixel's class logits)."
echo
echo "| network | opset | NPU/CPU nodes | layers (jobs) | GMACs | estimated cycles | C-model cycles | utilization | cosine | max abs error (of max abs) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for c in $cases; do
	m="$DIR/$c"
	if ! "$LOOM" compile "$m/model.onnx" -o "$tmp/m.loom" --calib "$m/calib" --no-cache --report "$tmp/r.json" \
		>"$tmp/c.txt" 2>&1; then
		echo "| ${c%_opset*} | ${c##*_opset} | compile failed: $(tail -n 1 "$tmp/c.txt") | | | | | | | |"
		continue
	fi
	"$LOOM" run "$tmp/m.loom" --backend cmodel --data "$m/test_data_set_0" --check >"$tmp/r.txt" 2>&1 || true
	"$PY" - "$tmp" "$c" "$macs_cycle" <<'EOPY'
import json, re, sys
tmp, c, per = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = json.load(open(f"{tmp}/r.json"))
run = open(f"{tmp}/r.txt").read()
cyc = re.search(r"(\d+) device cycles per run", run)
cos = re.search(r"max abs error ([\d.e+-]+) \(reference max \|x\| ([\d.e+-]+)\), cosine ([\d.]+)", run)
jobs = re.search(r"(\d+) NPU jobs", run)
macs = r["macs_npu"] + r["macs_cpu"]
cy = int(cyc.group(1)) if cyc else 0
util = "%.1f%%" % (100.0 * r["macs_npu"] / (cy * per)) if cy else "?"
name, opset = c.rsplit("_opset", 1)
print("| %s | %s | %d/%d | %d (%s) | %.2f | %d | %s | %s | %s | %s |" % (
    name, opset, r["nodes_npu"], r["nodes_cpu"], r["layers"], jobs.group(1) if jobs else "?",
    macs / 1e9, r["est_cycles"], cy or "run failed", util, cos.group(3) if cos else "?",
    "%s (%s)" % (cos.group(1), cos.group(2)) if cos else "?"))
EOPY
done
echo
echo '```'
echo "loom compile MODEL.onnx -o MODEL.loom --calib DIR/calib --report R.json"
echo "loom run MODEL.loom --backend cmodel --data DIR/test_data_set_0 --check"
echo '```'
