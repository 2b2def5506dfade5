#!/bin/sh
# readme_counts.sh - README.md's sentence on the ONNX backend test cases
# compiled for the NPU is a claim: its numbers must be the lists' numbers.
# The cases that must pass (tests/onnx/ref_expect.txt) and, of those, the
# ones that put nodes on the NPU (tests/onnx/npu_expect.txt, checked exactly
# by the onnx-npu-cmodel suite's --placement) give "All N ... cases", "X of
# them put nodes on the NPU" and "the other Y run only on the CPU".
#   sh tests/onnx/readme_counts.sh README.md tests/onnx/ref_expect.txt tests/onnx/npu_expect.txt
README=$1
REF=$2
NPU=$3
names() { sed -e 's/#.*//' -e 's/^[ \t]*//' "$1" | awk 'NF { print $1 }' | sort -u; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
names "$NPU" >"$tmp"
total=$(names "$REF" | wc -l)
npu=$(names "$REF" | comm -12 - "$tmp" | wc -l)
cpu=$((total - npu))
# the sentence may be wrapped: read README as one line
text=$(tr '\n' ' ' <"$README" | tr -s ' ')
pass=0
fail=0
for claim in "All $total ONNX backend test cases" "$npu of them put nodes on the NPU" "the other $cpu run only on the CPU"; do
	if echo "$text" | grep -qF "$claim"; then
		echo "ok   README says \"$claim\""
		pass=$((pass + 1))
	else
		echo "FAIL README lacks \"$claim\" (the lists: $total cases must pass, $npu of them on the NPU, $cpu CPU only)"
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
