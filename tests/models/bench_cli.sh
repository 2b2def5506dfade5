#!/bin/sh
# bench_cli.sh - `loom bench` as a user meets it, on the C model, with the
# digits CNN and SqueezeNet of the exported models (make models):
#   - 1 and 4 requests in flight: exit 0, every inference's outputs
#     byte-identical to the plain run inside bench (what `loom run` runs,
#     whose printed outputs bench's must equal), device throughput with 4
#     not below 1, latency percentiles in order (min <= median <= p90 <=
#     p99 <= max), --json one valid object with the same figures;
#   - --sweep-inflight: a row for K = 1..8 and where more requests stop
#     helping; --host-time: the same outputs;
#   - bad input: --inflight 0, --iterations 0, --clock-mhz 0, an unknown
#     option, a missing value (exit 2, the message naming the option); more
#     requests than the device DRAM holds, a missing model file (exit 1,
#     the message naming the limit / the file).
# One line per check, then "N passed, M failed".
#   sh tests/models/bench_cli.sh LOOM MODELS_DIR
LOOM=$1
DIR=$2
PY=${PYTHON3:-/usr/bin/python3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
check() { if [ "$1" = 0 ]; then ok "$2"; else bad "$2"; fi; }

# a figure of a --json file: json_get FILE KEY (a top-level number or bool)
json_get() { "$PY" -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(str(v).lower())' "$1" "$2"; }

for c in digits_cnn_opset13 squeezenet1_1_opset13; do
	m="$DIR/$c"
	calib="$m/calib"
	[ -d "$calib" ] || calib="$m/test_data_set_0"
	if ! "$LOOM" compile "$m/model.onnx" -o "$out/$c.loom" --calib "$calib" --no-cache -q >"$out/log" 2>&1; then
		bad "$c: compile: $(tail -n 2 "$out/log")"
		continue
	fi
	d="$m/test_data_set_0"
	n=6
	[ "$c" = squeezenet1_1_opset13 ] && n=4
	"$LOOM" run "$out/$c.loom" --data "$d" >"$out/run.txt" 2>&1
	for k in 1 4; do
		"$LOOM" bench "$out/$c.loom" --data "$d" --iterations $n --inflight $k >"$out/b$k.txt" 2>&1
		check $? "$c K=$k: loom bench exits 0"
		grep -q "^outputs: all $n inferences byte-identical to the plain run" "$out/b$k.txt"
		check $? "$c K=$k: all $n inferences' outputs byte-identical to the plain run"
		grep '^output ' "$out/run.txt" >"$out/o_run"
		grep '^output ' "$out/b$k.txt" >"$out/o_bench"
		[ -s "$out/o_run" ] && cmp -s "$out/o_run" "$out/o_bench"
		check $? "$c K=$k: bench's plain run prints loom run's outputs"
		"$LOOM" bench "$out/$c.loom" --data "$d" --iterations $n --inflight $k --json >"$out/j$k.json" 2>"$out/err"
		"$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$out/j$k.json" 2>/dev/null
		check $? "$c K=$k: --json is one valid JSON object"
		[ "$(json_get "$out/j$k.json" outputs_identical)" = true ] && [ "$(json_get "$out/j$k.json" inflight)" = $k ]
		check $? "$c K=$k: --json: outputs_identical, inflight $k"
		"$PY" -c 'import json,sys
d=json.load(open(sys.argv[1]))["device_latency_cycles"]
v=[d[k] for k in ("min","median","p90","p99","max")]
sys.exit(0 if v == sorted(v) and d["min"] <= d["mean"] <= d["max"] and d["min"] > 0 else 1)' "$out/j$k.json"
		check $? "$c K=$k: latency min <= median <= p90 <= p99 <= max, mean between"
	done
	t1=$(json_get "$out/j1.json" throughput_ips)
	t4=$(json_get "$out/j4.json" throughput_ips)
	awk -v a="$t1" -v b="$t4" 'BEGIN{exit !(a > 0 && b >= a)}'
	check $? "$c: device throughput with 4 in flight ($t4/s) not below 1 ($t1/s)"
done

c=digits_cnn_opset13
if [ -f "$out/$c.loom" ]; then
	f="$out/$c.loom"
	d="$DIR/$c/test_data_set_0"
	"$LOOM" bench "$f" --data "$d" --iterations 8 --sweep-inflight >"$out/sw.txt" 2>&1
	rc=$?
	rows=$(sed -n '/^throughput against requests in flight/,$p' "$out/sw.txt" | grep -cE '^ +[1-8] ')
	[ $rc = 0 ] && [ "$rows" = 8 ] && grep -q "more requests stop helping at K = \|still grows" "$out/sw.txt"
	check $? "--sweep-inflight: rows for K = 1..8 ($rows) and where more requests stop helping"
	"$LOOM" bench "$f" --data "$d" --iterations 6 --inflight 3 --host-time >"$out/ht.txt" 2>&1 &&
		grep -q "^outputs: all 6 inferences byte-identical" "$out/ht.txt"
	check $? "--host-time, 3 in flight: outputs byte-identical"

	# bad input: exit status and a message naming the thing
	expect() { # expect STATUS TEXT WHAT ARGS...: exit STATUS and TEXT in the message
		st=$1 txt=$2 what=$3
		shift 3
		"$LOOM" bench "$@" >"$out/bad.txt" 2>&1
		rc=$?
		if [ $rc = "$st" ] && grep -q -- "$txt" "$out/bad.txt"; then
			ok "$what: exit $rc, $(head -n 1 "$out/bad.txt")"
		else
			bad "$what: exit $rc (want $st), message: $(head -n 2 "$out/bad.txt")"
		fi
	}
	expect 2 "--inflight '0'" "--inflight 0" "$f" --inflight 0
	expect 2 "--inflight 'x'" "--inflight x" "$f" --inflight x
	expect 2 "--iterations '0'" "--iterations 0" "$f" --iterations 0
	expect 2 "--clock-mhz '0'" "--clock-mhz 0" "$f" --clock-mhz 0
	expect 2 "unknown option" "an unknown option" "$f" --frobnicate
	expect 2 "needs a value" "--inflight without a value" "$f" --inflight
	expect 2 "no MODEL.loom" "no model" --iterations 2
	expect 2 "backend 'ref'" "--backend ref" "$f" --backend ref
	expect 1 "no-such.loom" "a missing model file" "$out/no-such.loom"
	s="$out/squeezenet1_1_opset13.loom"
	[ -f "$s" ] && expect 1 "at most [0-9]* requests" "more requests than the device DRAM holds" "$s" --inflight 4096
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
