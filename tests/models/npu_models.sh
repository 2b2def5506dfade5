#!/bin/sh
# npu_models.sh - the exported models (make models) compiled to INT8 and run
# on the NPU: for each case folder, `loom compile` calibrates on its calib/
# folder (other inputs than the test data sets; test_data_set_0 for models
# without one), then `loom run --check` runs every test_data_set_N through
# libloom and the firmware on BACKEND and holds PyTorch's output to the
# case's bounds in tests/models/bounds.txt (BOUNDS=FILE for another table):
# cosine similarity >= its min_cos and max absolute error <= its max_abs.
# A listed case without a model folder, or without a line in the table,
# fails. One line per data set, then "N passed, M failed".
#   [HW=CONFIG] [BOUNDS=FILE] sh tests/models/npu_models.sh LOOM MODELS_DIR BACKEND [CASE...]
# (no CASE: every case of the table)
LOOM=$1
DIR=$2
BACKEND=$3
shift 3
BOUNDS=${BOUNDS:-$(dirname "$0")/bounds.txt}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pass=0
fail=0
if [ ! -f "$BOUNDS" ]; then
	echo "FAIL $BOUNDS: no bounds table"
	echo "0 passed, 1 failed"
	exit 1
fi
sed -e 's/#.*//' "$BOUNDS" | awk 'NF >= 3 { print $1, $2, $3 }' >"$out/bounds"
cases=$*
[ -z "$cases" ] && cases=$(awk '{ print $1 }' "$out/bounds")
for c in $cases; do
	m="$DIR/$c"
	if [ ! -f "$m/model.onnx" ]; then
		echo "FAIL $c: $m/model.onnx is missing (make models)"
		fail=$((fail + 1))
		continue
	fi
	b=$(awk -v c="$c" '$1 == c { print $2, $3 }' "$out/bounds")
	if [ -z "$b" ]; then
		echo "FAIL $c: no bounds in $BOUNDS (case min_cos max_abs why)"
		fail=$((fail + 1))
		continue
	fi
	mincos=${b% *}
	maxabs=${b#* }
	calib="$m/calib"
	[ -d "$calib" ] || calib="$m/test_data_set_0"
	if ! "$LOOM" compile "$m/model.onnx" -o "$out/$c.loom" --hw "${HW:-default}" --calib "$calib" --no-cache -q >"$out/log" 2>&1; then
		echo "FAIL $c: compile: $(tail -n 3 "$out/log")"
		fail=$((fail + 1))
		continue
	fi
	nsets=0
	for d in "$m"/test_data_set_*; do
		[ -d "$d" ] || continue
		nsets=$((nsets + 1))
		if "$LOOM" run "$out/$c.loom" --backend "$BACKEND" --data "$d" --check --min-cos "$mincos" \
			--atol "$maxabs" >"$out/log" 2>&1; then
			echo "ok   $c $(basename "$d"): $(grep -E '^ok' "$out/log" | sed 's/^ok *//') (bounds: cosine >= $mincos, max abs error <= $maxabs)"
			pass=$((pass + 1))
		else
			msg=$(grep -E '^FAIL' "$out/log" | sed 's/^FAIL *//')
			[ -n "$msg" ] || msg=$(tail -n 3 "$out/log")
			echo "FAIL $c $(basename "$d"): $msg (bounds: cosine >= $mincos, max abs error <= $maxabs)"
			fail=$((fail + 1))
		fi
	done
	if [ "$nsets" -eq 0 ]; then
		echo "FAIL $c: no test_data_set_N in $m"
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
