#!/bin/sh
# compile_cli.sh - loom compile / objdump / run as users meet them: the
# report (table and JSON), the compile cache, the .loom file under readelf
# and loom objdump, refusal of a model compiled for another configuration,
# of corrupted model files, and the errors for broken ONNX models
# (scripts/make_bad_models.py: each message must name the node, op type or
# tensor listed in BAD_DIR/expect.txt). "N passed, M failed" at the end.
#   sh tests/models/compile_cli.sh LOOM MODELS_DIR BAD_DIR
LOOM=$1
DIR=$2
BAD=$3
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
export LOOM_CACHE_DIR="$out/cache"
m="$DIR/squeezenet1_1_opset13"

# report, JSON, cache
check "compile squeezenet with a report" "$LOOM" compile "$m/model.onnx" -o "$out/sq.loom" --calib "$m/calib" --report "$out/sq.json"
cp "$out/log" "$out/first.txt"
grep -q "cache: stored" "$out/first.txt" && ok "first compile stores the result in the cache" || bad "no 'cache: stored' line"
grep -Eq "^/features/features.0/Conv +Conv +npu +conv" "$out/first.txt" && ok "the table shows the first conv on the NPU" ||
	bad "table: $(head -n 3 "$out/first.txt")"
grep -q "peak .* B (.* B without reuse)" "$out/first.txt" && ok "the table reports peak memory with and without reuse" ||
	bad "no peak memory line"
for k in '"nodes": \[' '"where": "npu"' '"fused": "into' '"tile": \[' '"est_cycles"' '"bound": "' '"sp_bytes"' \
	'"cpu_mac_share"' '"peak_device_bytes_no_reuse"'; do
	grep -q "$k" "$out/sq.json" && ok "JSON has $k" || bad "JSON lacks $k"
done
# ResNet-18's 7x7/2 stem on 3 channels: the padded input (written by the
# host's QUANT, as only the stem reads the graph input: no copy layer), then
# the CONV with its kernel window packed into the array rows (14 SP lines
# per output, not 49: under 1.2 M cycles where the unpacked form needs
# 112*112*49*4 = 2.46 M)
r18="$DIR/resnet18_opset13"
check "compile resnet18 with a report" "$LOOM" compile "$r18/model.onnx" -o "$out/r18.loom" --calib "$r18/calib" \
	--report "$out/r18.json"
stem=$(grep '"name": "/conv1/Conv"' "$out/r18.json")
echo "$stem" | grep -q '"lowering": "conv (input padded by the host)"' &&
	ok "resnet18's stem: input padded by the host + packed CONV" || bad "resnet18 stem lowering: $stem"
"$LOOM" objdump "$out/r18.loom" > "$out/r18.dump" 2>&1
grep -q "quant   input -> dev input.padded (padded top 3 left 3 bottom 3 right 3, border" "$out/r18.dump" &&
	ok "resnet18's input quantized into its padded image" || bad "no padded QUANT step: $(grep 'quant ' "$out/r18.dump")"
cyc=$(echo "$stem" | sed -E 's/.*"est_cycles": ([0-9]+).*/\1/')
[ -n "$cyc" ] && [ "$cyc" -lt 1200000 ] && ok "resnet18's stem estimate $cyc < 1.2 M cycles" || bad "stem estimate '$cyc'"
# its residual Adds (and their Relu) are fused into the STORE of the Conv
# that makes one of their inputs (STORE SOURCE 3): no layer of their own
add=$(grep '"name": "/layer1/layer1.0/Add"' "$out/r18.json")
echo "$add" | grep -q '"where": "fused".*"into /layer1/layer1.0/conv2/Conv (residual add in the STORE)"' &&
	ok "resnet18's first Add fused into conv2's STORE" || bad "first Add: $add"
# --bias-correction corrects every Conv and Gemm, the packed stem too (from
# its original input's mean and geometry: its padded copy has none)
check "compile resnet18 --bias-correction" "$LOOM" compile "$r18/model.onnx" -o "$out/r18b.loom" --calib "$r18/calib" \
	--bias-correction --report "$out/r18b.json"
nbc=$(sed -n 's/.*"bias_corrected": \([0-9]*\).*/\1/p' "$out/r18b.json")
nw=$(grep -c '"op": "\(Conv\|Gemm\)"' "$out/r18b.json")
[ -n "$nbc" ] && [ "$nbc" -eq "$nw" ] && [ "$nw" -eq 21 ] &&
	ok "resnet18 --bias-correction: $nbc of $nw Conv/Gemm nodes corrected" || bad "bias_corrected '$nbc' of $nw"
check "compile again" "$LOOM" compile "$m/model.onnx" -o "$out/sq2.loom" --calib "$m/calib"
grep -q "cache: hit" "$out/log" && ok "the second compile is a cache hit and says so" || bad "no cache hit: $(tail -n 2 "$out/log")"
cmp -s "$out/sq.loom" "$out/sq2.loom" && ok "the cached file is the same file" || bad "cached file differs"
check "compile with another option" "$LOOM" compile "$m/model.onnx" -o "$out/sq3.loom" --calib "$m/calib" \
	--keep-float /features/features.0/Conv
grep -q "cache: hit" "$out/log" && bad "a different option hit the cache" || ok "a different option misses the cache"
grep -Eq "^/features/features.0/Conv +Conv +cpu .*--keep-float" "$out/log" && ok "--keep-float keeps the node on the CPU" ||
	bad "--keep-float: $(grep features.0/Conv "$out/log")"
check "run the mixed-precision model" "$LOOM" run "$out/sq3.loom" --backend cmodel --data "$m/test_data_set_0" --check

check "loom run MODEL.onnx --backend cmodel compiles and runs it" "$LOOM" run "$m/model.onnx" --backend cmodel \
	--data "$m/test_data_set_1" --check

# the ELF
if command -v readelf >/dev/null; then
	readelf -S "$out/sq.loom" >"$out/log" 2>&1
	for s in .loom.text .loom.const .loom.tensors .loom.graph .loom.layers .loom.steps .note.loom; do
		grep -q "$s" "$out/log" && ok "readelf -S lists $s" || bad "readelf -S lacks $s"
	done
	readelf -n "$out/sq.loom" | grep -Eq "Loom .*0x4c4f0002" && ok "readelf -n lists the Loom configuration note" ||
		bad "no Loom note"
fi
check "objdump" "$LOOM" objdump "$out/sq.loom"
grep -q "/features/features.0/Conv" "$out/log" && grep -Eq "MATMUL|LOAD" "$out/log" &&
	ok "objdump disassembles with layer names" || bad "objdump output"
if "$LOOM" objdump "$out/sq.loom" --hw small >"$out/log" 2>&1; then bad "objdump --hw small accepted the model"; else
	grep -q "array_rows" "$out/log" && ok "a model for another config is refused naming array_rows" ||
		bad "config refusal: $(cat "$out/log")"
fi
# corrupted files: refused with a message naming the file, never a crash
cp "$out/sq.loom" "$out/cut.loom"
truncate -s 5000 "$out/cut.loom"
"$LOOM" run "$out/cut.loom" --backend cmodel >"$out/log" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "cut.loom" "$out/log" && ok "a truncated .loom is refused naming the file" || bad "truncated: rc $rc $(cat "$out/log")"

# broken ONNX models: a clear error naming the node, op type or tensor
while IFS="$(printf '\t')" read -r f want; do
	"$LOOM" compile "$BAD/$f" -o "$out/bad.loom" --no-cache >"$out/log" 2>&1
	rc=$?
	if [ $rc -eq 1 ] && grep -qF "$want" "$out/log"; then ok "$f: $(tail -n 1 "$out/log")"; else
		bad "$f: exit $rc, wanted '$want': $(tail -n 2 "$out/log")"; fi
done <"$BAD/expect.txt"

# a QDQ model (QuantizeLinear/DequantizeLinear pairs) compiles with its own scales, no calibration data
q="$DIR/digits_qdq_opset13"
check "compile the QDQ model without --calib" "$LOOM" compile "$q/model.onnx" -o "$out/q.loom" --no-cache
grep -q "5 QuantizeLinear/DequantizeLinear pairs of the model kept their scales" "$out/log" &&
	ok "the QDQ pairs' scales are used" || bad "QDQ: $(tail -n 4 "$out/log")"
grep -Eq "^/Flatten.* fused .*NHWC order" "$out/log" && ok "Flatten of a batch folded into the Gemm's weights" ||
	bad "flatten: $(grep Flatten "$out/log")"
check "the QDQ model matches PyTorch's fake-quantized output" "$LOOM" run "$out/q.loom" --backend cmodel \
	--data "$q/test_data_set_0" --check --min-cos 0.9999 --min-top1 1

# every operator the NPU claims, in one PyTorch export: all of it on the NPU
check "compile npu_ops" "$LOOM" compile "$DIR/npu_ops_opset13/model.onnx" -o "$out/o.loom" \
	--calib "$DIR/npu_ops_opset13/calib" --no-cache
grep -q "on the CPU (0.0% of nodes)" "$out/log" && ok "npu_ops: no node on the CPU" ||
	bad "npu_ops: $(grep -E ' cpu ' "$out/log")"

# --sensitivity: one line per NPU node, sorted by the gain of returning it to float
check "--sensitivity on npu_ops" "$LOOM" compile "$DIR/npu_ops_opset13/model.onnx" -o "$out/s.loom" \
	--calib "$DIR/npu_ops_opset13/calib" --sensitivity -q
n=$(grep -cE '^/[^ ]+ +[A-Za-z]+ +[0-9.]+ +[-+][0-9.]+ ' "$out/log")
sorted=$(grep -E '^/[^ ]+ +[A-Za-z]+ +[0-9.]+ +[-+][0-9.]+ ' "$out/log" | awk '{print $3}' | sort -rn -c 2>&1 && echo yes)
[ "$n" -ge 20 ] && grep -q "all layers int8: cosine" "$out/log" && [ "$sorted" = yes ] &&
	ok "--sensitivity ranks $n NPU nodes" || bad "--sensitivity: $n lines, sorted: $sorted"

# an operator with neither lowering nor kernel is reported at compile time; one
# on the CPU appears in the report with its reason
"$LOOM" compile "$DIR/tiny_transformer_opset13/model.onnx" -o "$out/tt.loom" --no-cache >"$out/log" 2>&1
grep -Eq "Softmax +cpu .*no NPU lowering" "$out/log" && ok "Softmax runs on the CPU with its reason" ||
	bad "transformer report: $(grep Softmax "$out/log")"
grep -q "warning: .*CPU" "$out/log" && ok "more than 5% CPU work is warned about" || bad "no CPU-share warning"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
