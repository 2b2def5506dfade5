#!/bin/sh
# same_outputs.sh - the RTL and the C model give byte-identical model
# outputs: each case folder's model compiled with its calib/ folder (else
# test_data_set_0), run on both backends with --output-dir on
# test_data_set_0, every output_K.pb compared with cmp. One line per case,
# then "N passed, M failed". OTHER=systemc compares the systemc backend
# with the C model instead of the RTL. OTHER=systemc-rtl compares both the
# systemc-rtl backend and the rtl backend with the C model, and asserts
# that the two RTL backends report the same device cycles.
#   [OTHER=rtl|systemc|systemc-rtl] sh tests/models/same_outputs.sh LOOM MODELS_DIR CASE...
LOOM=$1
DIR=$2
OTHER=${OTHER:-rtl}
ALSO=""
[ "$OTHER" = systemc-rtl ] && ALSO=rtl
shift 2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pass=0
fail=0
for c in "$@"; do
	m="$DIR/$c"
	calib="$m/calib"
	[ -d "$calib" ] || calib="$m/test_data_set_0"
	if ! "$LOOM" compile "$m/model.onnx" -o "$out/$c.loom" --calib "$calib" --no-cache -q >"$out/log" 2>&1; then
		echo "FAIL $c: compile: $(tail -n 3 "$out/log")"
		fail=$((fail + 1))
		continue
	fi
	res=""
	for b in cmodel "$OTHER" $ALSO; do
		if ! "$LOOM" run "$out/$c.loom" --backend $b --data "$m/test_data_set_0" --check \
			--output-dir "$out/$c.$b" >"$out/log.$b" 2>&1; then
			res="$res $b: $(tail -n 2 "$out/log.$b")"
		fi
	done
	n=0
	for f in "$out/$c.cmodel"/output_*.pb; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		for b in "$OTHER" $ALSO; do
			cmp "$f" "$out/$c.$b/$(basename "$f")" >/dev/null 2>&1 || res="$res $(basename "$f") differs on $b"
		done
	done
	[ $n -gt 0 ] || res="$res no output files"
	cyc=$(grep -h 'device cycles' "$out/log.$OTHER" | sed "s/.*: \([0-9]* NPU jobs, [0-9]* device cycles per run (engine [0-9]*)\).*/\1/")
	if [ -n "$ALSO" ]; then
		also=$(grep -h 'device cycles' "$out/log.$ALSO" | sed "s/.*: \([0-9]* NPU jobs, [0-9]* device cycles per run (engine [0-9]*)\).*/\1/")
		if [ -z "$cyc" ] || [ "$cyc" != "$also" ]; then
			res="$res device cycles differ: $OTHER '$cyc', $ALSO '$also'"
		fi
	fi
	if [ -z "$res" ]; then
		echo "ok   $c: $n output file(s) byte-identical on $OTHER${ALSO:+, $ALSO} and cmodel ($OTHER $cyc${ALSO:+, the same on $ALSO})"
		pass=$((pass + 1))
	else
		echo "FAIL $c:$res"
		fail=$((fail + 1))
	fi
	rm -rf "$out/$c.cmodel" "$out/$c.$OTHER" "$out/$c.loom"
	[ -n "$ALSO" ] && rm -rf "$out/$c.$ALSO"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
