#!/bin/sh
# cmodel_paths.sh - the C model's choices change no byte and no cycle of a
# whole model's run (cmodel/cm_exec.c, cm_avx2.c, cm_timing.c): each case
# compiled with its calib/ folder, on configuration CFG (default unless HW
# says), then
#   - loom run with LOOM_CMODEL_SIMD=generic, =avx2 and =avx512 (the generic
#     kernels, the AVX2 ones, the AVX-512 ones with MATMUL on VNNI): against
#     the generic run every output_K.pb byte-identical, and the per-layer
#     profile (--profile-csv: cycles, busy and stall counts, DRAM bytes,
#     instructions) identical;
#   - loom bench --iterations 3 with LOOM_CMODEL_MEMO=0 and with the memo:
#     the same device latency in cycles of every inference and the same
#     span; with the memo, jobs were replayed (LOOM_CMODEL_STATS=1);
#   - LOOM_CMODEL_SIMD with a value it does not know: the C model does not
#     open, loom run fails with the message naming the variable.
# On a CPU without AVX2 the avx2 runs fail to open (their message says so):
# this test is for a machine with AVX2. On one without AVX-512 VNNI the
# avx512 runs are refused with the message naming the variable, which is
# checked instead. One line per check, then "N passed, M failed".
#   sh tests/models/cmodel_paths.sh LOOM MODELS_DIR CASE...
LOOM=$1
DIR=$2
shift 2
HW=${HW:-default}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

for c in "$@"; do
	m="$DIR/$c"
	calib="$m/calib"
	[ -d "$calib" ] || calib="$m/test_data_set_0"
	if ! "$LOOM" compile "$m/model.onnx" -o "$out/$c.loom" --hw "$HW" --calib "$calib" -q >"$out/log" 2>&1; then
		bad "$c ($HW): compile: $(tail -n 2 "$out/log")"
		continue
	fi
	d="$m/test_data_set_0"
	for s in generic avx2 avx512; do
		LOOM_CMODEL_SIMD=$s "$LOOM" run "$out/$c.loom" --backend cmodel --data "$d" --output-dir "$out/$s" \
			--profile-csv "$out/$s.csv" >"$out/log.$s" 2>&1
		echo $? >"$out/rc.$s"
	done
	for s in avx2 avx512; do
		name=$(echo "$s" | sed 's/avx2/AVX2/; s/avx512/AVX-512/')
		if [ "$s" = avx512 ] && grep -q "LOOM_CMODEL_SIMD=avx512 but this CPU has no" "$out/log.$s"; then
			ok "$c ($HW): this CPU has no AVX-512 VNNI: LOOM_CMODEL_SIMD=avx512 refused, the message names it"
			continue
		fi
		res=""
		for t in generic $s; do
			[ "$(cat "$out/rc.$t")" = 0 ] || res="$res $t: $(tail -n 1 "$out/log.$t")"
		done
		n=0
		for f in "$out/generic"/output_*.pb; do
			[ -f "$f" ] || continue
			n=$((n + 1))
			cmp -s "$f" "$out/$s/$(basename "$f")" || res="$res $(basename "$f") differs"
		done
		[ $n -gt 0 ] || res="$res no output files"
		if [ -z "$res" ]; then
			ok "$c ($HW): generic and $name data paths: $n output file(s) byte-identical"
		else
			bad "$c ($HW): generic and $name:$res"
		fi
		layers=$(($(wc -l <"$out/generic.csv") - 1))
		if [ "$layers" -gt 0 ] && cmp -s "$out/generic.csv" "$out/$s.csv"; then
			ok "$c ($HW): generic and $name: the per-layer profile of $layers rows identical"
		else
			bad "$c ($HW): generic and $name: the per-layer profiles differ ($(diff "$out/generic.csv" "$out/$s.csv" | head -n 3))"
		fi
	done
	for memo in 0 1; do
		LOOM_CMODEL_MEMO=$memo LOOM_CMODEL_STATS=1 "$LOOM" bench "$out/$c.loom" --backend cmodel --data "$d" \
			--iterations 3 --json >"$out/b$memo.json" 2>"$out/b$memo.err"
	done
	cyc() { sed -n 's/.*"device_latency_cycles": {\([^}]*\)}, "device_cycles": \([0-9]*\).*/\1 \2/p' "$1"; }
	c0=$(cyc "$out/b0.json")
	c1=$(cyc "$out/b1.json")
	if [ -n "$c0" ] && [ "$c0" = "$c1" ]; then
		ok "$c ($HW): bench with and without the timing memo: the same device cycles ($(echo "$c1" | cut -c1-60)...)"
	else
		bad "$c ($HW): bench device cycles without the memo '$c0', with it '$c1'"
	fi
	rep=$(sed -n 's/.*jobs: \([0-9]*\) replayed.*/\1/p' "$out/b1.err")
	rep0=$(sed -n 's/.*jobs: \([0-9]*\) replayed, \([0-9]*\) recorded.*/\1 \2/p' "$out/b0.err")
	if [ -n "$rep" ] && [ "$rep" -gt 0 ] && [ "$rep0" = "0 0" ]; then
		ok "$c ($HW): the memo replayed $rep jobs; LOOM_CMODEL_MEMO=0 none"
	else
		bad "$c ($HW): jobs replayed with the memo '$rep', without it (replayed, recorded) '$rep0'"
	fi
	rm -rf "$out/generic" "$out/avx2" "$out/avx512" "$out/$c.loom"
done

# a value LOOM_CMODEL_SIMD does not know: the C model does not open, the message names it
c=$1
"$LOOM" compile "$DIR/$c/model.onnx" -o "$out/x.loom" --hw "$HW" -q >/dev/null 2>&1
LOOM_CMODEL_SIMD=sse9 "$LOOM" run "$out/x.loom" --backend cmodel --data "$DIR/$c/test_data_set_0" >"$out/e" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "LOOM_CMODEL_SIMD=sse9 is not one of generic, avx2, avx512, auto" "$out/e"; then
	ok "LOOM_CMODEL_SIMD=sse9: refused (exit $rc), the message names it"
else
	bad "LOOM_CMODEL_SIMD=sse9: exit $rc, $(tail -n 1 "$out/e")"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
