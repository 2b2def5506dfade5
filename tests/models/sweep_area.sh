#!/bin/sh
# sweep_area.sh - loom sweep's area with the real Yosys (make test-full; a
# synthesis takes minutes per configuration, so make test uses
# tests/unit/yosys_stub.sh): an analytical grid of two arrays on --hw small
# (the digits CNN of the exported models), synthesized once each into the
# cache build/area (a second run of this script synthesizes nothing):
# area_mm2 numbers > 0 whose logic and SRAM parts add up, a bigger array a
# bigger area and more logic, the Yosys time of each configuration printed.
# One line per check, then "N passed, M failed".
#   sh tests/models/sweep_area.sh LOOM MODELS_DIR
LOOM=$1
DIR=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
unset LOOM_YOSYS LOOM_AREA_CACHE
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
check() { if [ "$1" = 0 ]; then ok "$2"; else bad "$2"; fi; }
col() {
	awk -F, -v name="$2" -v pt="$3" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$1 == pt { print $c[name] }' "$1"
}
m="$DIR/digits_cnn_opset13"
command -v yosys >/dev/null 2>&1 || { bad "yosys is not installed (sh scripts/setup.sh)"; echo "$pass passed, $fail failed"; exit 1; }
"$LOOM" sweep "$m/model.onnx" --calib "$m/calib" --hw small --array 4x4,8x8 --no-plots -o "$out/s" >"$out/s.txt" \
	2>"$out/s.err"
check $? "a grid of two arrays on --hw small with Yosys: exit 0 ($(grep -c synthesizing "$out/s.err") synthesized, the rest cached)"
grep "area of" "$out/s.err"
a4=$(col "$out/s/results.csv" area_mm2 a4x4_sp64K_acc16K_bw8_lat30)
a8=$(col "$out/s/results.csv" area_mm2 a8x8_sp64K_acc16K_bw8_lat30)
l4=$(col "$out/s/results.csv" area_logic_mm2 a4x4_sp64K_acc16K_bw8_lat30)
l8=$(col "$out/s/results.csv" area_logic_mm2 a8x8_sp64K_acc16K_bw8_lat30)
s8=$(col "$out/s/results.csv" area_sram_mm2 a8x8_sp64K_acc16K_bw8_lat30)
awk -v a="$a4" -v b="$a8" -v l="$l4" -v k="$l8" -v s="$s8" \
	'BEGIN { d = k + s - b; exit !(a > 0 && b > a && k > l && l > 0 && d * d < 1e-10) }'
check $? "area_mm2: 4x4 $a4 < 8x8 $a8 mm2, logic $l4 < $l8 mm2, logic + SRAM = total"
/usr/bin/python3 - "$out/s/results.json" <<'EOPY'
import json, sys
a = json.load(open(sys.argv[1]))["areas"]
for x in a:
    print("     %s: %.4f mm2 (logic %.4f, SRAM %.4f), %d gates, %d flops, synthesis %.0f s" % (
        x["config"], x["area_mm2"], x["logic_mm2"], x["sram_mm2"], x["logic_cells"], x["flops"], x["synth_s"]))
sys.exit(0 if len(a) == 2 and all(x["synth_s"] > 0 and x["source"].startswith("Yosys 0") for x in a) else 1)
EOPY
check $? "results.json: both configurations synthesized by Yosys, with their synthesis time"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
