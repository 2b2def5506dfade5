#!/bin/sh
# run_cli.sh - `loom run MODEL.loom` as a user acts on it, on the C model
# with squeezenet (compiled with its calib/ folder):
#  - inputs from files: --data DIR, --input NAME=FILE.pb and NAME=FILE.npy
#    give the same outputs byte for byte; --input overrides --data; bad .npy
#    files (wrong magic, big-endian, float64, Fortran order, truncated data,
#    an unknown header key, a shape of another size) and unknown input names
#    are refused with a message naming the file or the name (exit 2);
#  - --output-dir writes output_K.pb TensorProtos named after the graph
#    outputs, which onnx.numpy_helper reads;
#  - --hw: the model's configuration is accepted, another one refused naming
#    the parameter, a slower DRAM accepted (more cycles);
#  - --profile: the stall columns, one row per layer, the total row, the
#    bound classes and the time split at --clock-mhz; --profile-csv: a header,
#    one row per layer and a total row; --trace: valid JSON with the tracks
#    and one slice per layer per busy engine (tests/models/check_trace.py);
#  - --wave on the C model is refused.
# The .npy files and the JSON checks need Debian's /usr/bin/python3 with
# numpy and onnx; without them those checks are skipped. "N passed, M failed".
#   sh tests/models/run_cli.sh LOOM MODELS_DIR
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
refused() { # refused DESCRIPTION RC TEXT COMMAND...: exit status RC, TEXT in the output
	d=$1
	want=$2
	text=$3
	shift 3
	"$@" >"$out/log" 2>&1
	rc=$?
	if [ $rc -eq "$want" ] && grep -qF -- "$text" "$out/log"; then ok "$d: $(head -n 1 "$out/log")"; else
		bad "$d: exit $rc (want $want), wanted '$text': $(head -n 3 "$out/log")"; fi
}
PY=/usr/bin/python3
havepy=0
"$PY" -c 'import numpy, onnx' 2>/dev/null && havepy=1
m="$DIR/squeezenet1_1_opset13"
d0="$m/test_data_set_0"
export LOOM_CACHE_DIR="$out/cache"
check "compile squeezenet" "$LOOM" compile "$m/model.onnx" -o "$out/sq.loom" --calib "$m/calib"
sq="$out/sq.loom"

# ---- inputs and outputs as files
check "run with --data and --output-dir" "$LOOM" run "$sq" --data "$d0" --output-dir "$out/o_data"
[ -f "$out/o_data/output_0.pb" ] && ok "--output-dir wrote output_0.pb" || bad "no output_0.pb"
check "run with --input input=input_0.pb" "$LOOM" run "$sq" --input "input=$d0/input_0.pb" --output-dir "$out/o_pb"
cmp -s "$out/o_data/output_0.pb" "$out/o_pb/output_0.pb" && ok "--input .pb gives the --data output" ||
	bad "--input .pb output differs"
refused "an --input name the model lacks" 2 "no input 'nosuch'" "$LOOM" run "$sq" --input "nosuch=$d0/input_0.pb"
refused "--input without NAME=" 2 "NAME=FILE" "$LOOM" run "$sq" --input "$d0/input_0.pb"
refused "a missing input file" 2 "$out/none.pb" "$LOOM" run "$sq" --input "input=$out/none.pb"
if [ $havepy -eq 1 ]; then
	"$PY" - "$d0/input_0.pb" "$out" <<'EOF'
import sys, numpy as np, onnx
from onnx import numpy_helper
a = numpy_helper.to_array(onnx.load_tensor(sys.argv[1]))
o = sys.argv[2]
np.save(o + "/in.npy", a)
np.save(o + "/in_be.npy", a.astype(">f4"))
np.save(o + "/in_f8.npy", a.astype("<f8"))
np.save(o + "/in_fortran.npy", np.asfortranarray(a))
np.save(o + "/in_small.npy", a[:, :, :10, :10])
raw = open(o + "/in.npy", "rb").read()
open(o + "/in_cut.npy", "wb").write(raw[:-4])
open(o + "/in_magic.npy", "wb").write(b"XNUMPY" + raw[6:])
h = raw.replace(b"'shape'", b"'shaPe'", 1)
open(o + "/in_key.npy", "wb").write(h)
EOF
	check "run with --input input=FILE.npy" "$LOOM" run "$sq" --input "input=$out/in.npy" --output-dir "$out/o_npy"
	cmp -s "$out/o_data/output_0.pb" "$out/o_npy/output_0.pb" && ok "--input .npy gives the --data output" ||
		bad "--input .npy output differs"
	check "--input overrides --data" "$LOOM" run "$sq" --data "$m/test_data_set_1" --input "input=$out/in.npy" \
		--output-dir "$out/o_over"
	cmp -s "$out/o_data/output_0.pb" "$out/o_over/output_0.pb" && ok "--input replaced --data's input" ||
		bad "--input did not override --data"
	refused "big-endian .npy" 2 "big-endian" "$LOOM" run "$sq" --input "input=$out/in_be.npy"
	refused "float64 .npy" 2 "'<f8' is not supported" "$LOOM" run "$sq" --input "input=$out/in_f8.npy"
	refused "Fortran-order .npy" 2 "Fortran-order" "$LOOM" run "$sq" --input "input=$out/in_fortran.npy"
	refused "truncated .npy" 2 "in_cut.npy: holds 602108 data bytes" "$LOOM" run "$sq" --input "input=$out/in_cut.npy"
	refused "not a .npy" 2 "in_magic.npy: not a .npy file" "$LOOM" run "$sq" --input "input=$out/in_magic.npy"
	refused "an unknown .npy header key" 2 "unexpected or repeated key 'shaPe'" "$LOOM" run "$sq" \
		--input "input=$out/in_key.npy"
	refused "an input of another size" 2 "given float [1,3,10,10], the model expects float [1,3,224,224]" "$LOOM" run "$sq" \
		--input "input=$out/in_small.npy"
	if "$PY" - "$out/o_data/output_0.pb" <<'EOF'; then ok "onnx.numpy_helper reads output_0.pb: 'output', float32 [1, 1000]"; else bad "output_0.pb as read by onnx"; fi
import sys, onnx
from onnx import numpy_helper
t = onnx.load_tensor(sys.argv[1])
a = numpy_helper.to_array(t)
sys.exit(0 if t.name == "output" and a.shape == (1, 1000) and str(a.dtype) == "float32" else 1)
EOF
else
	echo "skip the .npy and onnx.numpy_helper checks: no $PY with numpy and onnx"
fi

# ---- --hw
check "--hw default (the model's configuration) is accepted" "$LOOM" run "$sq" --hw default --data "$d0" --check
refused "--hw small is refused naming the parameter" 1 "array_rows" "$LOOM" run "$sq" --hw small
refused "--hw of no configuration" 2 "nosuch" "$LOOM" run "$sq" --hw nosuch
check "--hw default:dram_latency=200 (DRAM timing only) is accepted" "$LOOM" run "$sq" --hw default:dram_latency=200
c1=$("$LOOM" run "$sq" | sed -n 's/.* \([0-9]*\) device cycles per run.*/\1/p')
c2=$(sed -n 's/.* \([0-9]*\) device cycles per run.*/\1/p' "$out/log")
[ -n "$c1" ] && [ -n "$c2" ] && [ "$c2" -gt "$c1" ] && ok "slower DRAM: $c2 cycles > $c1" || bad "DRAM latency 200: '$c2' vs '$c1' cycles"

# ---- where the time goes
check "--profile --profile-csv --trace" "$LOOM" run "$sq" --data "$d0" --profile --profile-csv "$out/p.csv" \
	--trace "$out/t.json" --clock-mhz 500
cp "$out/log" "$out/prof.txt"
nl=$(($(wc -l <"$out/p.csv") - 2))
grep -Eq '^# +layer +kind +cycles +MACs +util% +DRAM rd +DRAM wr +bLd% +bCp% +bSt% +wLd% +wCp% +wSt% +bound' \
	"$out/prof.txt" && ok "the table has the busy and token-wait columns" || bad "table header: $(grep layer "$out/prof.txt")"
rows=$(grep -Ec '^[0-9]+ +/.* (compute|vector|load|store)$' "$out/prof.txt")
[ "$rows" -eq "$nl" ] && [ "$nl" -gt 10 ] && ok "one table row per layer ($rows) with its bound class" ||
	bad "$rows table rows, $nl CSV rows"
grep -Eq '^ +total +[0-9]+ ' "$out/prof.txt" && ok "a total row" || bad "no total row"
grep -Eq '^layers by bound: compute [0-9]+ \(' "$out/prof.txt" && ok "bound classes summed" || bad "no bound line"
grep -Eq '^time at 500 MHz: latency [0-9.]+ ms = NPU [0-9.]+ ms .* \+ host CPU [0-9.]+ ms' "$out/prof.txt" &&
	ok "the NPU / host split at --clock-mhz 500" || bad "time split: $(grep 'time at' "$out/prof.txt")"
head -n 1 "$out/p.csv" | grep -q '^index,layer,kind,job_step,start_cycle,cycles,macs,macs_issued,util_pct,dram_rd_bytes,dram_wr_bytes,busy_load,busy_compute,busy_store,stall_load,stall_compute,stall_store,bank_conflicts,insns,bound,time_us$' &&
	ok "CSV header" || bad "CSV header: $(head -n 1 "$out/p.csv")"
tail -n 1 "$out/p.csv" | grep -q '^total,"total",' && ok "CSV total row" || bad "CSV last row: $(tail -n 1 "$out/p.csv")"
if [ $havepy -eq 1 ]; then
	if "$PY" tests/models/check_trace.py "$out/t.json" "$out/p.csv" >"$out/log" 2>&1; then ok "trace: $(tail -n 1 "$out/log")"; else
		bad "trace: $(tail -n 3 "$out/log")"; fi
fi
# names with quotes, a backslash, control characters and non-ASCII letters
# (tests/models/odd_names.py): valid JSON and CSV that give them back, one
# table line per layer
if [ $havepy -eq 1 ] && "$PY" tests/models/odd_names.py make "$out/names.onnx"; then
	check "compile a model with odd node names" "$LOOM" compile "$out/names.onnx" -o "$out/names.loom"
	check "--profile --trace --profile-csv of it" "$LOOM" run "$out/names.loom" --profile --trace "$out/names.json" \
		--profile-csv "$out/names.csv"
	[ "$(grep -c '^0 ' "$out/log")" -eq 1 ] && ok "the table keeps one line per layer" || bad "table: $(head -n 5 "$out/log")"
	if "$PY" tests/models/odd_names.py check "$out/names.json" "$out/names.csv" >"$out/log" 2>&1; then
		ok "odd names: $(tail -n 1 "$out/log")"
	else
		bad "odd names: $(tail -n 2 "$out/log")"
	fi
fi
refused "--wave on the C model" 2 "use --backend rtl" "$LOOM" run "$sq" --wave "$out/w.fst"
refused "--wave-layer without --wave" 2 "need --wave" "$LOOM" run "$sq" --wave-layer 1
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
