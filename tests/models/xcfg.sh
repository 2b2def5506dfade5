#!/bin/sh
# xcfg.sh - the same int8 results whatever the array and SRAM sizes: each
# exported model compiled for small (8x8), default (16x16), large (32x32)
# and odd (12x20) and run on the C model (tests/models/xcfg_dump.c, the
# calib/ folder, test_data_set_0) must give, on every configuration, the
# same placement of every node, the same quantization of every device
# tensor, byte-identical device tensors (every intermediate one, read back
# from a build without buffer reuse) and byte-identical outputs, while the
# programs differ (else the comparison would prove nothing).
#
# Why identical: calibration runs the float graph on the reference
# executor and does not see the configuration, so every scale and zero
# point is the same; the int8 arithmetic of each layer is exact: products
# are summed in int32 accumulators that wrap (docs/ISA.md), and addition
# mod 2^32 is associative and commutative, so splitting the reduction
# into folds of R input channels and tiles of another size changes no
# sum; the bias is added and the result requantized once per output, after
# the whole sum; channels padded to R lanes or to a stride of 4 bytes meet
# zero weights and are never stored as channels; pooling, depthwise,
# elementwise and LUT layers compute each output from its own window.
# What may differ: a layer a planner refuses on a configuration (too small
# a scratchpad or accumulator) runs in float on the CPU there, and so
# everything after it; the node lines would show it (none does today). A
# residual Add is fused into its Conv's STORE where array_cols <=
# array_rows and an ELTWISE layer elsewhere (odd): on the NPU either way
# (node lines compare "fused" and "npu" alike), with the same bytes (the
# fusion is bit-exact), but the Conv's own output is a device tensor only
# where the Add is not fused: tensors only one dump has are not compared.
#
# A control run keeps one node of npu_ops in float and must see its
# tensors change. One line per case, then "N passed, M failed".
#   sh tests/models/xcfg.sh XCFG_DUMP MODELS_DIR CASE...
DUMP=$1
DIR=$2
shift 2
CONFIGS="small default large odd"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pass=0
fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
# dump CASE HW OUT [KEEP_FLOAT]: xcfg_dump's lines of the case on HW into OUT; 0 or 1
dump() {
	m="$DIR/$1"
	calib="$m/calib"
	[ -d "$calib" ] || calib="$m/test_data_set_0"
	"$DUMP" "$m/model.onnx" "$calib" "$m/test_data_set_0" "$2" $4 >"$3" 2>"$3.err" && return 0
	bad "$1 on $2: $(tail -n 2 "$3.err") $(grep FAIL "$3")"
	return 1
}
# the differing node, tensor and output names of two dumps, one a line
# (NPU and fused nodes alike, tensors of both dumps only)
differ() {
	grep -v '^info' "$1" | sed 's/ fused$/ npu/' >"$out/a0"
	grep -v '^info' "$2" | sed 's/ fused$/ npu/' >"$out/b0"
	sed -n 's/^tensor \([^ ]*\) .*/\1/p' "$out/a0" | sort >"$out/ta"
	sed -n 's/^tensor \([^ ]*\) .*/\1/p' "$out/b0" | sort >"$out/tb"
	comm -12 "$out/ta" "$out/tb" >"$out/tab"
	awk 'NR == FNR { k[$1] = 1; next } $1 != "tensor" || ($2 in k)' "$out/tab" "$out/a0" >"$out/a"
	awk 'NR == FNR { k[$1] = 1; next } $1 != "tensor" || ($2 in k)' "$out/tab" "$out/b0" >"$out/b"
	diff "$out/a" "$out/b" | sed -n 's/^> \([a-z]*\) \([^ ]*\) .*/\1 \2/p'
}
for c in "$@"; do
	if [ ! -f "$DIR/$c/model.onnx" ]; then
		bad "$c: $DIR/$c/model.onnx is missing (make models)"
		continue
	fi
	good=1
	for h in $CONFIGS; do
		dump "$c" "$h" "$out/$c.$h" || good=0
	done
	[ $good -eq 1 ] || continue
	bad_cfgs=""
	for h in $CONFIGS; do
		d=$(differ "$out/$c.default" "$out/$c.$h" | head -n 6 | tr '\n' ';')
		[ -n "$d" ] && bad_cfgs="$bad_cfgs $h: $d"
	done
	progs=$(for h in $CONFIGS; do grep '^info' "$out/$c.$h"; done | sort -u | wc -l)
	insns=$(for h in $CONFIGS; do sed -n 's/^info .* \([0-9]*\) instructions.*/\1/p' "$out/$c.$h"; done | tr '\n' '/')
	nodes=$(grep -c '^node' "$out/$c.default")
	npu=$(grep -c '^node .* \(npu\|fused\)$' "$out/$c.default")
	tensors=$(grep -c '^tensor' "$out/$c.default")
	outs=$(grep -c '^output' "$out/$c.default")
	if [ -n "$bad_cfgs" ]; then
		bad "$c: differs from default on$bad_cfgs"
	elif [ "$progs" -lt 2 ]; then
		bad "$c: every configuration compiled the same program: the comparison proves nothing"
	else
		ok "$c: $nodes nodes ($npu on the NPU) placed alike, $tensors device tensors and $outs output(s)" \
			"byte-identical on $CONFIGS (programs of ${insns%/} instructions)"
	fi
done
# the control: a change the comparison must see
c=npu_ops_opset13
if [ -f "$DIR/$c/model.onnx" ] && [ -f "$out/$c.default" ]; then
	if dump "$c" default "$out/control" /c1/Conv; then
		n=$(differ "$out/$c.default" "$out/control" | grep -c '^tensor')
		[ "$n" -gt 0 ] && ok "control: /c1/Conv of $c kept in float changes $n device tensors, and the comparison sees it" ||
			bad "control: keeping /c1/Conv of $c in float changed nothing the comparison sees"
	fi
else
	bad "control: $c was not compared"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 1 ]
