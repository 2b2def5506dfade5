#!/bin/sh
# bad_input.sh - bad input gets a clear error and exit status 2, never a
# silent default: per case, the exit status and the words the message on
# stderr must hold (the input, option, backend or configuration it names,
# the expected and the given value). Covers model inputs of loom run
# (MODEL.loom, MODEL.onnx on cmodel and on ref: missing, extra, wrongly
# shaped or typed tensors, a folder that is not one; warnings for a tensor
# bound by position under another name and for NaN/Inf values), option
# values (selftest --only, --calib-method), unknown backends and
# configurations of every command, a --calib folder of one file per sample,
# and the warning for calibration on random data (with -q, on a cache hit,
# and in loom run MODEL.onnx). "N passed, M failed" at the end.
#   sh tests/models/bad_input.sh LOOM MODELS_DIR
LOOM=$1
DIR=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pass=0
fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
# run CMD...: its exit status in $rc, its stdout and stderr in files
run() {
	"$@" >"$out/stdout" 2>"$out/stderr"
	rc=$?
}
# expect DESCRIPTION EXIT PATTERN...: the last run exited EXIT and its
# stderr holds every PATTERN (fixed strings)
expect() {
	d=$1
	code=$2
	shift 2
	if [ "$rc" -ne "$code" ]; then
		bad "$d: exit $rc, wanted $code: $(tail -n 2 "$out/stderr")"
		return
	fi
	for p in "$@"; do
		if ! grep -qF -- "$p" "$out/stderr"; then
			bad "$d: stderr lacks '$p': $(tail -n 2 "$out/stderr")"
			return
		fi
	done
	ok "$d: $(head -n 1 "$out/stderr")"
}
export LOOM_CACHE_DIR="$out/cache"
m="$DIR/digits_cnn_opset13"
if [ ! -f "$m/model.onnx" ]; then
	echo "FAIL $m/model.onnx is missing (make models)"
	echo "0 passed, 1 failed"
	exit 1
fi
if ! /usr/bin/python3 tests/models/make_bad_inputs.py "$out/in" input 16x1x8x8 >"$out/log" 2>&1; then
	echo "FAIL make_bad_inputs.py: $(tail -n 2 "$out/log")"
	echo "0 passed, 1 failed"
	exit 1
fi
run "$LOOM" compile "$m/model.onnx" -o "$out/d.loom" --calib "$m/test_data_set_0" --no-cache -q
expect "compile the digits CNN" 0

# ---- model inputs: loom run MODEL.loom, MODEL.onnx on the C model and on the reference executor
for how in loom onnx ref; do
	case $how in
	loom) cmd="$LOOM run $out/d.loom --backend cmodel" ;;
	onnx) cmd="$LOOM run $m/model.onnx --backend cmodel" ;;
	ref) cmd="$LOOM run $m/model.onnx --backend ref" ;;
	esac
	run $cmd --data "$out/in/shape"
	expect "$how: wrong shape" 2 "input 'input'" "given float [1,1,8,8]" "expects float [16,1,8,8]"
	run $cmd --data "$out/in/type"
	expect "$how: wrong type" 2 "input 'input'" "given int64 [16,1,8,8]" "expects float [16,1,8,8]"
	run $cmd --data "$out/in/extra"
	expect "$how: an extra tensor" 2 "extra input tensor 1 'input_2' (float [16,1,8,8])" "'input' float [16,1,8,8]"
	run $cmd --data "$out/in/missing"
	expect "$how: no tensor" 2 "no data for input 'input' (float [16,1,8,8])" "0 tensors given"
	run $cmd --data "$out/in/no-such-folder"
	expect "$how: --data names no folder" 2 "no-such-folder: not a folder" "input_0.pb"
	run $cmd --data "$out/in/renamed"
	expect "$how: a tensor named otherwise is bound by position, with a warning" 0 "warning:" \
		"named 'image'" "bound by position to input 'input'"
	run $cmd --data "$out/in/nonfinite"
	expect "$how: NaN and Inf in an input are warned about" 0 "warning:" "input 'input'" "3 NaN and 2 infinite"
done
run "$LOOM" run "$m/model.onnx" --backend cmodel --data "$out/in/renamed"
n=$(grep -c "bound by position" "$out/stderr")
[ "$n" -eq 1 ] && ok "loom run MODEL.onnx warns once" || bad "loom run MODEL.onnx warned $n times"

# ---- option values
run "$LOOM" selftest --backend cmodel --only TYPO
expect "selftest --only TYPO" 2 "--only TYPO: unknown group" "boot wrap mixed buserr hang firmware calls threads"
grep -q "passed" "$out/stdout" && bad "selftest --only TYPO ran something" || ok "selftest --only TYPO runs nothing"
run "$LOOM" compile "$m/model.onnx" -o "$out/x.loom" --calib-method msee
expect "compile --calib-method msee" 2 "--calib-method msee" "minmax, percentile, mse or entropy"
run "$LOOM" test-onnx "$m" --backend cmodel --calib-method msee
expect "test-onnx --calib-method msee" 2 "--calib-method msee" "minmax, percentile, mse or entropy"
run "$LOOM" sweep "$m/model.onnx" --calib-method msee --no-area -o "$out/swbad"
expect "sweep --calib-method msee" 2 "--calib-method msee" "minmax, percentile, mse or entropy"

# ---- unknown backends
run "$LOOM" run "$m/model.onnx" --backend cmdl
expect "run MODEL.onnx --backend cmdl" 2 "unknown backend 'cmdl'" "ref|cmodel|rtl|systemc"
run "$LOOM" run "$out/d.loom" --backend cmdl
expect "run MODEL.loom --backend cmdl" 2 "backend 'cmdl'" "cmodel, rtl, systemc or systemc-rtl"
run "$LOOM" run --backend cmdl --cosim-seed 1
expect "run a program --backend cmdl" 2 "unknown backend 'cmdl'" "cmodel|rtl"
run "$LOOM" test-onnx "$m" --backend cmdl
expect "test-onnx --backend cmdl" 2 "unknown backend 'cmdl'" "ref|cmodel|rtl|systemc"
run "$LOOM" demo --backend cmdl
expect "demo --backend cmdl" 2 "unknown backend 'cmdl'" "rtl, cmodel, systemc or systemc-rtl"
run "$LOOM" cosim --hw small --a cmdl --count 1 --seed 1
expect "cosim --a cmdl" 2 "unknown backend 'cmdl'" "rtl or cmodel"
run "$LOOM" selftest --backend cmdl
expect "selftest --backend cmdl" 2 "unknown backend 'cmdl'" "cmodel|rtl"

# ---- unknown configurations
known="known: default, large, odd, small"
run "$LOOM" compile "$m/model.onnx" -o "$out/x.loom" --hw nosuch
expect "compile --hw nosuch" 2 "--hw nosuch: unknown configuration 'nosuch'" "$known"
run "$LOOM" run "$m/model.onnx" --backend cmodel --hw nosuch
expect "run MODEL.onnx --hw nosuch" 2 "unknown configuration 'nosuch'" "$known"
run "$LOOM" run --hw nosuch --cosim-seed 1
expect "run a program --hw nosuch" 2 "unknown configuration 'nosuch'" "$known"
run "$LOOM" test-onnx "$m" --backend cmodel --hw nosuch
expect "test-onnx --hw nosuch" 2 "unknown configuration 'nosuch'" "$known"
run "$LOOM" demo --backend cmodel --hw nosuch
expect "demo --hw nosuch" 2 "unknown configuration 'nosuch'" "$known"
run "$LOOM" cosim --hw nosuch --count 1 --seed 1
expect "cosim --hw nosuch" 2 "unknown configuration 'nosuch'" "$known"
run "$LOOM" selftest --backend cmodel --hw nosuch
expect "selftest --hw nosuch" 2 "unknown configuration 'nosuch'" "$known"
run "$LOOM" objdump "$out/d.loom" --hw nosuch
expect "objdump --hw nosuch" 2 "unknown configuration 'nosuch'" "$known"
run "$LOOM" compile "$m/model.onnx" -o "$out/x.loom" --hw default:array_rws=8
expect "compile --hw default:array_rws=8" 2 "array_rws"
# a parameter out of its range, a configuration file without one (dma_wr_outstanding)
run "$LOOM" cosim --hw default:dma_wr_outstanding=0 --count 1 --seed 1
expect "cosim --hw default:dma_wr_outstanding=0" 2 "dma_wr_outstanding = 0 is outside 1..32"
grep -v '^dma_wr_outstanding' configs/small.cfg >"$out/nowr.cfg"
run "$LOOM" cosim --hw "$out/nowr.cfg" --count 1 --seed 1
expect "cosim --hw nowr.cfg" 2 "nowr.cfg: parameter dma_wr_outstanding is missing"
run "$LOOM" compile "$m/model.onnx" -o "$out/x.loom" --hw default:vec_macs=8
expect "compile --hw default:vec_macs=8" 2 "vec_macs = 8 is outside 1..7"

# ---- --calib DIR of one file per sample (input_0.pb ... input_7.pb) for a one-input model
o="$DIR/npu_ops_opset13"
mkdir -p "$out/cal"
for k in 0 1 2 3 4 5 6 7; do cp "$o/calib/test_data_set_$k/input_0.pb" "$out/cal/input_$k.pb"; done
run "$LOOM" compile "$o/model.onnx" -o "$out/files.loom" --calib "$out/cal" --no-cache
expect "--calib: a folder of 8 one-sample files" 0
grep -q "calibration: 8 samples$" "$out/stdout" && ok "each file is one calibration sample" ||
	bad "calibration line: $(grep calibration: "$out/stdout")"
run "$LOOM" compile "$o/model.onnx" -o "$out/sets.loom" --calib "$o/calib" --no-cache
"$LOOM" objdump "$out/files.loom" | grep -v -e "^/" -e "options:" >"$out/a.txt"
"$LOOM" objdump "$out/sets.loom" | grep -v -e "^/" -e "options:" >"$out/b.txt"
cmp -s "$out/a.txt" "$out/b.txt" && ok "the same model as with the test_data_set_N folders" ||
	bad "one file per sample and one folder per sample compile differently"
cp "$m/test_data_set_0/input_0.pb" "$out/cal/input_8.pb"
run "$LOOM" compile "$o/model.onnx" -o "$out/x.loom" --calib "$out/cal" --no-cache
expect "--calib: a file of another shape among them" 1 "9 input tensors for a graph of 1 input" \
	"test_data_set_N/" "one sample each"

# ---- calibration on random data: the warning goes to stderr, -q or not, cached or not
run "$LOOM" compile "$m/model.onnx" -o "$out/r.loom" -q
expect "compile -q without --calib warns" 0 "warning: $m/model.onnx: no calibration data" "random"
run "$LOOM" compile "$m/model.onnx" -o "$out/r.loom" -q
grep -q "cache: hit" "$out/stdout" && expect "the same from the cache warns again" 0 "no calibration data" ||
	bad "no cache hit: $(cat "$out/stdout")"
run "$LOOM" run "$m/model.onnx" --backend cmodel
expect "run MODEL.onnx --backend cmodel without --data or --calib warns" 0 "no calibration data" "random"
run "$LOOM" compile "$DIR/digits_qdq_opset13/model.onnx" -o "$out/q.loom" -q --no-cache
grep -q "no calibration data" "$out/stderr" && bad "the QDQ model (its own scales) was warned about" ||
	ok "a QDQ model keeps its own scales: no warning"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
