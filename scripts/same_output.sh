#!/bin/sh
# same_output.sh - shows that a change of the code left Loom's behaviour
# alone: two loom executables (before and after) compile the same models
# and their .loom files must be byte-identical; random co-simulation
# programs with fixed seeds, the layer demo and a compiled model's per-layer
# profile must print the same (on the C model, and on the RTL when asked).
#
#   sh scripts/same_output.sh OLD_LOOM NEW_LOOM OUT_DIR [--rtl]
#
# OLD_LOOM and NEW_LOOM are built trees' build/bin/loom (each finds its own
# firmware and RTL through its tree). The models are the exported ones of
# the new tree's build/models (make models) on four configurations, and a
# sample of Debian's ONNX node cases. Prints one line per comparison and a
# summary; exits 1 on the first difference it reports, after the summary.
set -u
[ $# -ge 3 ] || { echo "usage: $0 OLD_LOOM NEW_LOOM OUT_DIR [--rtl]" >&2; exit 2; }
OLD=$1 NEW=$2 OUT=$3
RTL=${4:-}
MODELS=${MODELS:-$(dirname "$(dirname "$NEW")")/models}
NODE=/usr/share/libonnx-testdata/data/node
mkdir -p "$OUT/old" "$OUT/new"
same=0 diff=0
note() { echo "$1"; }
differ() { echo "DIFFER $1"; diff=$((diff + 1)); }

# compile one model with both executables; compare the files
cmp_compile() { # NAME MODEL CALIB HW
	for side in old new; do
		exe=$OLD; [ $side = new ] && exe=$NEW
		if ! "$exe" compile "$2" -o "$OUT/$side/$1.loom" --hw "$4" --calib "$3" --no-cache -q \
			>"$OUT/$side/$1.log" 2>&1; then
			echo "no model" > "$OUT/$side/$1.loom" # a refusal must be the same too
			tail -n 1 "$OUT/$side/$1.log" >> "$OUT/$side/$1.loom"
		fi
	done
	if cmp -s "$OUT/old/$1.loom" "$OUT/new/$1.loom"; then
		same=$((same + 1))
	else
		differ "compile $1 ($2, --hw $4)"
	fi
}

nmodels=0
for m in "$MODELS"/*/; do
	c=$(basename "$m")
	[ -f "$m/model.onnx" ] || continue
	calib="$m/calib"
	[ -d "$calib" ] || calib="$m/test_data_set_0"
	for hw in default small odd large; do
		# the large configuration only for the smaller models (time)
		case "$hw:$c" in large:resnet* | large:mobilenet*) continue ;; esac
		cmp_compile "$c.$hw" "$m/model.onnx" "$calib" "$hw"
		nmodels=$((nmodels + 1))
	done
done
for c in test_basic_conv_with_padding test_conv_with_strides_and_asymmetric_padding test_gemm_default_vector_bias \
	test_gemm_transposeB test_matmul_2d test_maxpool_2d_pads test_maxpool_2d_ceil test_averagepool_2d_strides \
	test_averagepool_2d_pads_count_include_pad test_add test_mul test_relu test_sigmoid test_leakyrelu \
	test_clip_splitbounds test_batchnorm_example test_hardswish test_tanh test_globalaveragepool test_softmax_axis_1; do
	[ -d "$NODE/$c" ] || continue
	cmp_compile "$c" "$NODE/$c/model.onnx" "$NODE/$c/test_data_set_0" default
	nmodels=$((nmodels + 1))
done
note "compiled models: $nmodels compared, $same byte-identical"

# the same text from both executables
cmp_text() { # NAME COMMAND... (run from each executable's tree)
	name=$1
	shift
	for side in old new; do
		exe=$OLD; [ $side = new ] && exe=$NEW
		# wall-clock times and simulation speeds differ from run to run
		# (the profile's host CPU time is measured too)
		"$exe" "$@" 2>&1 | grep -v -E 'wall|/s\b|[0-9] s\b|host CPU [0-9.]+ ms' >"$OUT/$side/$name.txt"
	done
	if cmp -s "$OUT/old/$name.txt" "$OUT/new/$name.txt"; then
		note "same: $name ($*)"
	else
		differ "$name ($*): diff $OUT/old/$name.txt $OUT/new/$name.txt"
	fi
}
for hw in default small odd large; do
	cmp_text "cosim.$hw" cosim --hw "$hw" --count 40 --seed 7000 --a cmodel --b cmodel --verbose
	cmp_text "cosim-bad.$hw" cosim --hw "$hw" --count 20 --seed 7000 --a cmodel --b cmodel --bad --verbose
done
cmp_text demo.cmodel demo --backend cmodel
r=$MODELS/squeezenet1_1_opset13
if [ -f "$OUT/new/squeezenet1_1_opset13.default.loom" ]; then
	cp "$OUT/new/squeezenet1_1_opset13.default.loom" "$OUT/sq.loom"
	cmp_text profile.cmodel run "$OUT/sq.loom" --backend cmodel --data "$r/test_data_set_0" --profile
fi
if [ "$RTL" = --rtl ]; then
	cmp_text cosim.rtl cosim --hw default --count 20 --seed 7000 --verbose
	cmp_text demo.rtl demo --backend rtl
	[ -f "$OUT/sq.loom" ] && cmp_text profile.rtl run "$OUT/sq.loom" --backend rtl --data "$r/test_data_set_0" --profile
fi
echo "same_output: $same of $nmodels compiled models byte-identical; $diff difference(s)"
[ $diff = 0 ]
