#!/bin/sh
# sweep_cli.sh - `loom sweep` as a user meets it, on the digits CNN of the
# exported models (make models):
#   - a 3x2 grid with --rtl (DRAM latency x bandwidth over the default
#     configuration, so the RTL is the default one's, verilated once and
#     shared): every point in results.csv and results.json with the RTL's
#     cycles and the analytical error, each point's configuration file, the
#     per-layer reports with SCALE-Sim's headers, the plots valid PNG files
#     of 800x600 (their IHDR), and no RTL built for the points;
#   - the cache: the same sweep again computes nothing (every result.txt
#     untouched), a removed result is computed again (and only it), a point
#     rebuilt with `--hw DIR/configs/POINT.cfg` compiles to the sweep's cycles;
#   - an analytical grid with bad points (an array beyond the limits, a zero
#     row count, an unknown size suffix, a negative size, 32 GB/s on a 16-byte
#     bus) reported invalid with their reasons while the rest is computed;
#   - --jobs 1 and --jobs 2 write the same results; --gather again writes
#     the same results; GNU parallel (--parallel-sshloginfile with ':' for
#     this machine) writes the same results when parallel is installed;
#   - area and energy: the RTL points' energy from the RTL's counters, which
#     equal the analytical events (MACS, SP, ACC, vector, requantization);
#     a grid of three arrays on --hw small: area_mm2 and energy per
#     inference numbers > 0, their breakdowns adding up, a bigger array a
#     bigger area, one synthesis per configuration and none on a second
#     gather; without Yosys a warning and an empty area_mm2; --tech with a
#     DRAM twice as costly reprices without recomputing; a broken
#     technology file is a usage error naming file, line and key. Yosys is
#     tests/unit/yosys_stub.sh unless LOOM_YOSYS says otherwise (a real
#     synthesis takes minutes: tests/models/sweep_area.sh in test-full);
#   - --vec-macs (the vector unit's multipliers a lane) on MobileNetV3-Small:
#     one point per value named _vmN, fewer cycles with more, 9 invalid;
#   - usage errors (exit 2, the message naming the option and the value):
#     malformed axes, --jobs 0, --clock-mhz 0, a missing model file, a
#     --calib for no model, no -o, an unknown point for --run-point.
# One line per check, then "N passed, M failed".
#   sh tests/models/sweep_cli.sh LOOM MODELS_DIR
LOOM=$1
DIR=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
check() { if [ "$1" = 0 ]; then ok "$2"; else bad "$2"; fi; }
# area from the stand-in Yosys, in a cache of this run's own
: "${LOOM_YOSYS:=$(pwd)/tests/unit/yosys_stub.sh}"
LOOM_AREA_CACHE="$out/area-cache"
export LOOM_YOSYS LOOM_AREA_CACHE

m="$DIR/digits_cnn_opset13"
# a column of results.csv by name, for the rows of point $2: col FILE NAME POINT
col() {
	awk -F, -v name="$2" -v pt="$3" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$1 == pt { print $c[name] }' "$1"
}
# width x height of a PNG from its IHDR chunk
png_size() {
	set -- $(od -An -tu1 -j12 -N12 "$1")
	[ "$1 $2 $3 $4" = "73 72 68 82" ] || { echo "not-png"; return; }
	echo "$(( ($5 << 24) + ($6 << 16) + ($7 << 8) + $8 ))x$(( ($9 << 24) + (${10} << 16) + (${11} << 8) + ${12} ))"
}

# ---- a 3x2 grid on the RTL
S="$out/rtl"
ls -d build/hw/custom-* 2>/dev/null | sort >"$out/hw_before"
"$LOOM" sweep "$m/model.onnx" --calib "$m/calib" --dram-latency 20,40,80 --dram-gbps 8,16 --rtl -o "$S" \
	>"$out/rtl.txt" 2>"$out/rtl.err"
check $? "3x2 grid with --rtl: exit 0 ($(tail -n 1 "$out/rtl.err"))"
grep -q "^loom sweep: 6 results (1 model): 6 computed, 0 cached, 0 failed" "$out/rtl.txt"
check $? "3x2 grid: 6 results computed"
[ "$(wc -l <"$S/results.csv")" = 7 ] && [ "$(grep -c ',ok,' "$S/results.csv")" = 6 ]
check $? "results.csv: a header and 6 rows, all ok"
n=0
for lat in 20 40 80; do
	for bw in 8 16; do
		p="a16x16_sp256K_acc64K_bw${bw}_lat$lat"
		r=$(col "$S/results.csv" rtl_cycles "$p") e=$(col "$S/results.csv" rtl_error_pct "$p")
		c=$(col "$S/results.csv" cycles "$p")
		[ -n "$r" ] && [ "$r" -gt 0 ] && [ -n "$e" ] && [ -n "$c" ] && [ -f "$S/configs/$p.cfg" ] &&
			[ -f "$S/points/$p/digits_cnn_opset13/result.txt" ] && n=$((n + 1))
	done
done
[ $n = 6 ]
check $? "every point: cycles, the RTL's cycles and the error, its configs/POINT.cfg and result ($n of 6)"
# the documented bound of the timed estimate against the RTL (docs/DSE.md,
# "Timing model accuracy"): whole model within 1%
worst=$(/usr/bin/python3 -c 'import csv,sys; print(max(abs(float(r["rtl_error_pct"])) for r in csv.DictReader(open(sys.argv[1]))))' "$S/results.csv")
awk -v w="$worst" 'BEGIN{exit !(w <= 1)}'
check $? "every point's estimate within 1% of the RTL's cycles (worst |error| $worst%)"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if len(d["rows"]) == 6 and
	all(r["rtl_cycles"] > 0 and r["status"] == "ok" for r in d["rows"]) else 1)' "$S/results.json" 2>/dev/null
check $? "results.json: 6 rows with the RTL's cycles"
ls -d build/hw/custom-* 2>/dev/null | sort >"$out/hw_after"
cmp -s "$out/hw_before" "$out/hw_after" && ! grep -q "building the RTL" "$out/rtl.err"
check $? "the DRAM timing is a run-time input: the points ran on the default configuration's RTL, none built"
L="$S/points/a16x16_sp256K_acc64K_bw16_lat40/digits_cnn_opset13"
[ "$(head -n 1 "$L/COMPUTE_REPORT.csv")" = "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %," ] &&
	[ "$(head -n 1 "$L/BANDWIDTH_REPORT.csv")" = "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, Avg IFMAP DRAM BW, Avg FILTER DRAM BW, Avg OFMAP DRAM BW," ] &&
	head -n 1 "$L/DETAILED_ACCESS_REPORT.csv" | grep -q "^LayerID, SRAM IFMAP Start Cycle, .*, DRAM OFMAP Writes,$" &&
	[ "$(wc -l <"$L/COMPUTE_REPORT.csv")" = "$(wc -l <"$L/LAYERS.csv")" ]
check $? "per-layer reports with SCALE-Sim's headers, a row per layer"
# the layers' cycles add up to the point's
sum=$(awk -F, 'NR > 1 { s += $8 } END { print s }' "$L/LAYERS.csv")
[ "$sum" = "$(col "$S/results.csv" cycles a16x16_sp256K_acc64K_bw16_lat40)" ]
check $? "LAYERS.csv: the layers' cycles add up to the point's ($sum)"
np=0
for f in heatmap_cycles pareto_area pareto_energy roofline; do
	[ "$(png_size "$S/plots/${f}_digits_cnn_opset13.png")" = 800x600 ] && np=$((np + 1))
done
[ $np = 4 ]
check $? "plots: heatmap, two Pareto fronts, roofline, each a PNG of 800x600 ($np of 4)"

# the RTL points' energy: the RTL's counters, equal to the analytical events
n=0
for f in "$S"/points/*/digits_cnn_opset13/result.txt; do
	a=$(awk '$1 == "events" { print $2, $5, $6, $7, $8, $9, $10 }' "$f")
	r=$(awk '$1 == "rtl_events" { print $2, $5, $6, $7, $8, $9, $10 }' "$f")
	[ -n "$a" ] && [ "$a" = "$r" ] && n=$((n + 1))
done
[ $n = 6 ] && [ "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["energy_source"] == "rtl"' \
	"$S/results.csv" | wc -l)" = 6 ]
check $? "--rtl: energy from the RTL's counters (energy_source rtl), which equal the analytical events ($n of 6)"

# ---- the cache
find "$S/points" -name result.txt -exec stat -c '%n %Y %i' {} + | sort >"$out/stamps1"
"$LOOM" sweep "$m/model.onnx" --calib "$m/calib" --dram-latency 20,40,80 --dram-gbps 8,16 --rtl -o "$S" \
	>"$out/again.txt" 2>&1
check $? "the same sweep again: exit 0"
grep -q "^loom sweep: 6 results (1 model): 0 computed, 6 cached, 0 failed" "$out/again.txt" &&
	! grep -q "prepared" "$out/again.txt"
check $? "the same sweep again: nothing computed, not even the model's preparation"
find "$S/points" -name result.txt -exec stat -c '%n %Y %i' {} + | sort >"$out/stamps2"
cmp -s "$out/stamps1" "$out/stamps2"
check $? "the same sweep again: every result file untouched"
rm -rf "$S/points/a16x16_sp256K_acc64K_bw8_lat80"
"$LOOM" sweep "$m/model.onnx" --calib "$m/calib" --dram-latency 20,40,80 --dram-gbps 8,16 --rtl -o "$S" \
	>"$out/resume.txt" 2>&1
grep -q "^loom sweep: 6 results (1 model): 1 computed, 5 cached, 0 failed" "$out/resume.txt" &&
	[ -f "$S/points/a16x16_sp256K_acc64K_bw8_lat80/digits_cnn_opset13/result.txt" ]
check $? "an interrupted sweep resumes: the missing point computed, the others not"
p=a16x16_sp256K_acc64K_bw8_lat80
"$LOOM" compile "$m/model.onnx" --calib "$m/calib" --hw "$S/configs/$p.cfg" -o "$out/p.loom" --no-cache \
	--report "$out/p.json" >/dev/null 2>&1
est=$(sed -n 's/.*"est_cycles": \([0-9]*\),$/\1/p' "$out/p.json")
[ -n "$est" ] && [ "$est" = "$(col "$S/results.csv" cycles $p)" ]
check $? "--hw DIR/configs/$p.cfg rebuilds the point: the compile's estimate is the sweep's ($est)"

# ---- bad points among good ones
B="$out/bad"
"$LOOM" sweep "$m/model.onnx" --calib "$m/calib" --array 8x8,128x128,0x8 --spad 64K,64Q,-64K --dram-gbps 16,32 \
	--no-plots -o "$B" >"$out/bad.txt" 2>&1
check $? "a grid with bad points: exit 0 (they are results)"
[ "$(wc -l <"$B/results.csv")" = 19 ] && [ "$(grep -c ',ok,' "$B/results.csv")" = 1 ] &&
	[ "$(grep -c ',invalid,' "$B/results.csv")" = 17 ]
check $? "3x3x2 points: the one good point computed, 17 invalid"
for w in "a128x128_sp64K_acc64K_bw16_lat40:array_rows = 128 is outside 4..64" \
	"a0x8_sp64K_acc64K_bw16_lat40:rows and columns must be positive" \
	"a8x8_sp64Q_acc64K_bw16_lat40:unknown size suffix 'Q'" \
	"a8x8_sp-64K_acc64K_bw16_lat40:a size must be positive" \
	"a8x8_sp64K_acc64K_bw32_lat40:more than one beat"; do
	p=${w%%:*} why=${w#*:}
	grep "^$p,digits_cnn_opset13,invalid," "$B/results.csv" | grep -qF "$why"
	check $? "$p invalid: $why"
done

# ---- the engines agree
A="$out/a"
"$LOOM" sweep "$m/model.onnx" --array 8x8,16x16,32x32 --spad 16K,256K --dram-latency 40,200 --jobs 1 --no-plots \
	-o "$out/j1" >/dev/null 2>&1 &&
	"$LOOM" sweep "$m/model.onnx" --array 8x8,16x16,32x32 --spad 16K,256K --dram-latency 40,200 --jobs 2 --no-plots \
		-o "$A" >/dev/null 2>&1 && cmp -s "$out/j1/results.csv" "$A/results.csv" &&
	cmp -s "$out/j1/results.json" "$A/results.json"
check $? "--jobs 1 and --jobs 2: the same results.csv and results.json (12 points)"
cp "$A/results.csv" "$out/a.csv"
"$LOOM" sweep --gather "$A" --no-plots >/dev/null 2>&1 && cmp -s "$out/a.csv" "$A/results.csv"
check $? "--gather again: the same results"
if command -v parallel >/dev/null 2>&1; then
	echo ":" >"$out/hosts"
	"$LOOM" sweep "$m/model.onnx" --array 8x8,16x16,32x32 --spad 16K,256K --dram-latency 40,200 --no-plots \
		--parallel-sshloginfile "$out/hosts" -o "$out/par" >"$out/par.txt" 2>&1 &&
		grep -q "12 computed.*(GNU parallel)" "$out/par.txt" && cmp -s "$out/a.csv" "$out/par/results.csv"
	check $? "--parallel-sshloginfile (':' = this machine): the same results through GNU parallel"
elif [ -n "$FULL" ]; then
	bad "GNU parallel is not installed (sh scripts/setup.sh cluster)"
else
	echo "skip GNU parallel is not installed (sh scripts/setup.sh cluster)"
fi

# ---- two models, each with its own calibration
q="$DIR/squeezenet1_1_opset13"
"$LOOM" sweep "$m/model.onnx" "$q/model.onnx" --calib "digits_cnn_opset13=$m/calib" --calib "$q/model.onnx=$q/calib" \
	--array 8x8,32x32 --spad 64K -o "$out/two" >"$out/two.txt" 2>&1 &&
	grep -q "^loom sweep: 4 results (2 models): 4 computed" "$out/two.txt" &&
	[ "$(grep -c ',digits_cnn_opset13,ok,' "$out/two/results.csv")" = 2 ] &&
	[ "$(grep -c ',squeezenet1_1_opset13,ok,' "$out/two/results.csv")" = 2 ] &&
	[ -f "$out/two/plots/heatmap_cycles_squeezenet1_1_opset13.png" ] &&
	grep -q "$m/calib" "$out/two/sweep.spec" && grep -q "$q/calib" "$out/two/sweep.spec"
check $? "two models, --calib by name and by path: a row per point and model, plots per model"

# ---- area and energy
E="$out/area"
LOOM_AREA_CACHE="$out/grid-cache" # this grid's configurations alone
num_gt0() { awk -v x="$1" 'BEGIN { exit !(x + 0 > 0) }'; }
"$LOOM" sweep "$m/model.onnx" --calib "$m/calib" --hw small --array 4x4,8x8,16x16 -o "$E" >"$out/area.txt" \
	2>"$out/area.err"
check $? "area and energy: a grid of three arrays on --hw small, exit 0"
n=0
for a in 4x4 8x8 16x16; do
	p="a${a}_sp64K_acc16K_bw8_lat30"
	ar=$(col "$E/results.csv" area_mm2 "$p") en=$(col "$E/results.csv" energy_uj_per_inference "$p")
	num_gt0 "$ar" && num_gt0 "$en" && [ "$(col "$E/results.csv" energy_source "$p")" = analytical ] &&
		awk -F, -v pt="$p" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $1 == pt {
			a = $c["area_logic_mm2"] + $c["area_sram_mm2"] - $c["area_mm2"]
			e = $c["energy_mac_uj"] + $c["energy_sram_uj"] + $c["energy_dram_uj"] + $c["energy_other_uj"]
			e -= $c["energy_uj_per_inference"]
			exit !(a * a < 1e-10 && e * e < 1e-8 && $c["energy_mac_uj"] > 0 && $c["energy_sram_uj"] > 0 &&
				$c["energy_dram_uj"] > 0 && $c["energy_other_uj"] > 0) }' "$E/results.csv" && n=$((n + 1))
done
[ $n = 3 ]
check $? "area_mm2 and energy_uj_per_inference numbers > 0, each breakdown adding up to its total ($n of 3)"
a4=$(col "$E/results.csv" area_mm2 a4x4_sp64K_acc16K_bw8_lat30)
a8=$(col "$E/results.csv" area_mm2 a8x8_sp64K_acc16K_bw8_lat30)
a16=$(col "$E/results.csv" area_mm2 a16x16_sp64K_acc16K_bw8_lat30)
awk -v a="$a4" -v b="$a8" -v c="$a16" 'BEGIN { exit !(a > 0 && b > a && c > b) }'
check $? "a bigger array, a bigger area: 4x4 $a4 < 8x8 $a8 < 16x16 $a16 mm2"
[ "$(ls "$LOOM_AREA_CACHE"/*.json | wc -l)" = 3 ] && [ "$(grep -c 'synthesizing' "$out/area.err")" = 3 ]
check $? "one synthesis per configuration, cached in \$LOOM_AREA_CACHE ($(grep -c 'synthesizing' "$out/area.err") runs)"
cp "$E/results.csv" "$out/area.csv"
"$LOOM" sweep --gather "$E" >"$out/area2.txt" 2>&1 && ! grep -q synthesizing "$out/area2.txt" &&
	cmp -s "$out/area.csv" "$E/results.csv"
check $? "--gather again: no synthesis (the cache), the same results"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); a=d["areas"]; sys.exit(0 if len(a) == 3 and
	all(x["area_mm2"] > 0 and "45nm.txt" in x["source"] and x["sram_bits"] > 0 for x in a) and
	d["tech"].endswith("configs/tech/45nm.txt") else 1)' "$E/results.json" 2>/dev/null
check $? "results.json: the technology file and each configuration's area with its source"
np=0
for f in pareto_area pareto_energy; do
	[ "$(png_size "$E/plots/${f}_digits_cnn_opset13.png")" = 800x600 ] && np=$((np + 1))
done
[ $np = 2 ]
check $? "the area-latency and energy-latency Pareto fronts: PNG files of 800x600 ($np of 2)"
LOOM_YOSYS=/nonexistent/yosys LOOM_AREA_CACHE="$out/empty-cache" "$LOOM" sweep "$m/model.onnx" --calib "$m/calib" \
	--hw small --array 4x4,8x8 --no-plots -o "$out/noyosys" >/dev/null 2>"$out/noyosys.err"
rc=$?
[ $rc = 0 ] && grep -q "warning: area_mm2 left empty.*/nonexistent/yosys" "$out/noyosys.err" &&
	[ -z "$(col "$out/noyosys/results.csv" area_mm2 a8x8_sp64K_acc16K_bw8_lat30)" ] &&
	num_gt0 "$(col "$out/noyosys/results.csv" energy_uj_per_inference a8x8_sp64K_acc16K_bw8_lat30)"
check $? "no Yosys: exit $rc, a warning naming it, area_mm2 empty, energy still there"
sed 's/^energy.dram64 = 1.3 nJ /energy.dram64 = 2.6 nJ /' configs/tech/45nm.txt >"$out/dram2x.txt"
"$LOOM" sweep "$m/model.onnx" --calib "$m/calib" --hw small --array 4x4,8x8,16x16 --no-plots --tech "$out/dram2x.txt" \
	-o "$E" >"$out/tech.txt" 2>&1 && grep -q "0 computed, 3 cached" "$out/tech.txt" &&
	awk -F, 'NR == FNR { if (FNR == 1) for (i = 1; i <= NF; i++) c[$i] = i; else d[$1] = $c["energy_dram_uj"]; next }
		FNR > 1 { r = $c["energy_dram_uj"] / d[$1]; if (r < 1.999 || r > 2.001) bad = 1; n++ }
		END { exit bad || n != 3 }' "$out/area.csv" "$E/results.csv"
check $? "--tech with DRAM at 2.6 nJ: nothing recomputed, the DRAM energy twice the 45nm.txt one"
sed 's/^energy.mul8 .*/energy.mul8 = -0.2 pJ # broken/' configs/tech/45nm.txt >"$out/broken.txt"
usage_tech() {
	"$LOOM" sweep "$m/model.onnx" --tech "$out/broken.txt" -o "$out/u" >"$out/u.txt" 2>&1
	rc=$?
	[ $rc = 2 ] && grep -q "broken.txt:[0-9]*: key energy.mul8: -0.2 is not positive" "$out/u.txt"
	check $? "--tech with a negative energy: exit 2 naming file, line and key ($(tail -n 1 "$out/u.txt"))"
}
usage_tech

# ---- the vector unit's multipliers a lane (--vec-macs) on MobileNetV3-Small,
# whose depthwise layers are 3x3 and 5x5: fewer cycles with more multipliers
# (a pass holds up to vec_macs taps of a kernel row), 9 beyond hwparams.def's 7
mv="$DIR/mobilenet_v3_small_opset13"
V="$out/vm"
"$LOOM" sweep "$mv/model.onnx" --calib "$mv/calib" --vec-macs 1,3,5,9 --no-area --no-plots -o "$V" \
	>"$out/vm.txt" 2>&1
check $? "--vec-macs 1,3,5,9: exit 0 ($(tail -n 1 "$out/vm.txt"))"
p1=a16x16_sp256K_acc64K_bw16_lat40_vm1 p3=a16x16_sp256K_acc64K_bw16_lat40_vm3
p5=a16x16_sp256K_acc64K_bw16_lat40_vm5 p9=a16x16_sp256K_acc64K_bw16_lat40_vm9
[ "$(col "$V/results.csv" vec_macs $p1)$(col "$V/results.csv" vec_macs $p3)$(col "$V/results.csv" vec_macs $p5)" = 135 ] &&
	[ "$(col "$V/results.csv" status $p1)$(col "$V/results.csv" status $p5)" = okok ]
check $? "--vec-macs: points named _vm1, _vm3, _vm5, their vec_macs column 1, 3, 5, ok"
c1=$(col "$V/results.csv" cycles $p1) c3=$(col "$V/results.csv" cycles $p3) c5=$(col "$V/results.csv" cycles $p5)
[ -n "$c1" ] && [ -n "$c5" ] && [ "$c1" -gt "$c3" ] && [ "$c3" -gt "$c5" ]
check $? "--vec-macs: cycles fall with more multipliers a lane (1: $c1, 3: $c3, 5: $c5)"
[ "$(col "$V/results.csv" status $p9)" = invalid ] && grep "^$p9," "$V/results.csv" | grep -q "vec_macs = 9 is outside 1..7"
check $? "--vec-macs 9: invalid, naming the parameter and its range"

# ---- usage errors
usage() { # usage EXPECTED_TEXT ARGS...: exit 2 and the text in the message
	want=$1
	shift
	"$LOOM" sweep "$@" >"$out/u.txt" 2>&1
	rc=$?
	[ $rc = 2 ] && grep -qF -- "$want" "$out/u.txt"
	check $? "loom sweep $*: exit 2 naming '$want' (exit $rc: $(grep 'loom sweep' "$out/u.txt" | tail -n 1))"
}
usage "--array 16" "$m/model.onnx" --array 16 -o "$out/u"
usage "'abc'" "$m/model.onnx" --array 8x8,abc -o "$out/u"
usage "--spad 64K,,1M" "$m/model.onnx" --spad 64K,,1M -o "$out/u"
usage "--dram-gbps fast" "$m/model.onnx" --dram-gbps fast -o "$out/u"
usage "--dram-latency 4.5" "$m/model.onnx" --dram-latency 4.5 -o "$out/u"
usage "--vec-macs 2.5" "$m/model.onnx" --vec-macs 2.5 -o "$out/u"
usage "--jobs 0" "$m/model.onnx" --jobs 0 -o "$out/u"
usage "--clock-mhz 0" "$m/model.onnx" --clock-mhz 0 -o "$out/u"
usage "nosuch.onnx" "$out/nosuch.onnx" -o "$out/u"
usage "--calib nomodel=" "$m/model.onnx" --calib "nomodel=$m/calib" -o "$out/u"
usage "-o DIR" "$m/model.onnx"
usage "--hw nosuchcfg" "$m/model.onnx" --hw nosuchcfg -o "$out/u"
usage "no point named 'a1x1'" --run-point "$A" a1x1
echo "$pass passed, $fail failed"
[ $fail = 0 ]
