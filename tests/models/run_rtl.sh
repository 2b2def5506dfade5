#!/bin/sh
# run_rtl.sh - `loom run MODEL.loom` on the RTL: the timeline and the
# waveform of one layer, with the digits CNN (compiled with its test data as
# calibration; a few thousand cycles per layer):
#  - --trace on the RTL is valid JSON with one slice per layer per busy
#    engine, and has the structure of the C model's trace of the same model
#    (tests/models/check_trace.py);
#  - --wave FILE --wave-layer 2 writes an FST file (its first block is the
#    FST header: type 0, length 329) of the layer's cycles only: the window
#    it reports is as long as the layer's cycles in --profile-csv, and the
#    file is under a twentieth of a whole-run waveform's;
#  - --wave-from/--wave-to record a window of cycles.
# The trace checks need /usr/bin/python3 (skipped without it). "N passed, M failed".
#   sh tests/models/run_rtl.sh LOOM MODELS_DIR
LOOM=$1
DIR=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pass=0
fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
check() { # check DESCRIPTION COMMAND...: the command must succeed
	d=$1
	shift
	if "$@" >"$out/log" 2>&1; then ok "$d"; else bad "$d: $(tail -n 3 "$out/log")"; fi
}
is_fst() { # the FST header block: type 0 (FST_BL_HDR), then its length 329 as a big-endian 64-bit word
	[ "$(od -A n -t x1 -N 9 "$1" 2>/dev/null | tr -d ' \n')" = "000000000000000149" ]
}
PY=/usr/bin/python3
m="$DIR/digits_cnn_opset13"
d0="$m/test_data_set_0"
export LOOM_CACHE_DIR="$out/cache"
check "compile the digits CNN" "$LOOM" compile "$m/model.onnx" -o "$out/d.loom" --calib "$d0" --no-cache
for b in cmodel rtl; do
	check "$b: --trace --profile-csv" "$LOOM" run "$out/d.loom" --backend $b --data "$d0" --check \
		--trace "$out/$b.json" --profile-csv "$out/$b.csv"
done
if "$PY" -c 'import json' 2>/dev/null; then
	if "$PY" tests/models/check_trace.py "$out/rtl.json" "$out/rtl.csv" "$out/cmodel.json" >"$out/log" 2>&1; then
		ok "rtl trace: $(tail -n 1 "$out/log")"
	else
		bad "rtl trace: $(tail -n 3 "$out/log")"
	fi
else
	echo "skip the trace checks: no $PY"
fi

# one layer's waveform, against the whole run's
check "--wave --wave-layer 2" "$LOOM" run "$out/d.loom" --backend rtl --data "$d0" --wave "$out/l2.fst" --wave-layer 2
win=$(sed -n 's/.*device cycles \([0-9]*\)\.\.\([0-9]*\) (\([0-9]*\) cycles).*/\3/p' "$out/log")
cyc=$(awk -F, '$1 == "2" { print $6 }' "$out/rtl.csv")
[ -n "$win" ] && [ "$win" = "$cyc" ] && ok "the window is the layer's $cyc cycles" || bad "window '$win' cycles, layer 2 '$cyc'"
is_fst "$out/l2.fst" && ok "l2.fst is an FST file" || bad "l2.fst: $(od -A n -t x1 -N 16 "$out/l2.fst")"
check "--wave of the whole run" "$LOOM" run "$out/d.loom" --backend rtl --data "$d0" --wave "$out/all.fst"
s1=$(wc -c <"$out/l2.fst")
s2=$(wc -c <"$out/all.fst")
[ "$s1" -gt 0 ] && [ $((s1 * 20)) -lt "$s2" ] && ok "one layer: $s1 bytes, the whole run $s2" ||
	bad "one layer $s1 bytes, the whole run $s2"
rm -f "$out/all.fst"
check "--wave-from 5000 --wave-to 6000" "$LOOM" run "$out/d.loom" --backend rtl --data "$d0" --wave "$out/w.fst" \
	--wave-from 5000 --wave-to 6000
is_fst "$out/w.fst" && [ "$(wc -c <"$out/w.fst")" -lt "$s2" ] && ok "a window of cycles: $(wc -c <"$out/w.fst") bytes" ||
	bad "w.fst"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
