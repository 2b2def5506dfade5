#!/bin/sh
# synth.sh - checks that Yosys (read_verilog -sv; synth) accepts every RTL
# module, each synthesized as its own top on the configuration given
# (default: small), with the SRAM macros (npu_sram, npu_acc_lane, npu_tcm) as black
# boxes, then the macros themselves at a small depth. Prints the cell count
# per module and "N passed, M failed".
# Usage: scripts/synth.sh [PKGDIR]   (PKGDIR holds the generated npu_pkg.sv)
PKG=${1:-build/hw/small}
OUT=${SYNTH_OUT:-build/synth}
mkdir -p "$OUT"
SRCS="$PKG/npu_pkg.sv $(sed -n 's/^\(rtl\/[a-z_]*\.sv\).*/\1/p' rtl/npu.f | tr '\n' ' ')"
pass=0
fail=0
for top in $(sed -n 's/^rtl\/\([a-z_]*\)\.sv.*/\1/p' rtl/npu.f); do
	case $top in npu_sram|npu_acc_lane|npu_tcm) continue ;; esac
	log="$OUT/$top.log"
	if timeout 900 yosys -q -l "$log" -p "read_verilog -sv -DLOOM_SRAM_BLACKBOX $SRCS; synth -top $top; stat" >/dev/null 2>&1; then
		cells=$(grep -E '^ +Number of cells:' "$log" | tail -n 1 | awk '{print $4}')
		echo "yosys synth $top: ok ($cells cells)"
		pass=$((pass + 1))
	else
		echo "yosys synth $top: FAILED (see $log)"
		grep -i error "$log" | head -n 3
		fail=$((fail + 1))
	fi
done
# the SRAM macros themselves (black boxes above), at a small depth
for top in npu_sram npu_acc_lane npu_tcm; do
	log="$OUT/$top.log"
	if timeout 900 yosys -q -l "$log" -p "read_verilog -sv rtl/$top.sv; chparam -set Depth 16 $top; synth -top $top; stat" >/dev/null 2>&1; then
		echo "yosys synth $top (Depth 16): ok"
		pass=$((pass + 1))
	else
		echo "yosys synth $top: FAILED (see $log)"
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
