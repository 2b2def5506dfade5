#!/bin/sh
# yosys_stub.sh - a stand-in for Yosys in test_sweep (LOOM_YOSYS): answers
# -V, and for "-q -l LOG -s SCRIPT" writes LOG with a "design hierarchy"
# section like Yosys' stat, its counts made from the configuration's
# package named in SCRIPT (gates and flops growing with the array, the
# SRAM macros the configuration has), and appends a line to
# $YOSYS_STUB_RUNS so the test can count the runs. YOSYS_STUB_EXTRA adds
# a line to the section (an unknown cell type, a wrong macro count).
[ "$1" = "-V" ] && { echo "Yosys stub (tests/unit/yosys_stub.sh)"; exit 0; }
log=
script=
while [ $# -gt 0 ]; do
	case $1 in
	-l) log=$2; shift ;;
	-s) script=$2; shift ;;
	esac
	shift
done
[ -n "$log" ] && [ -n "$script" ] || exit 2
pkg=$(sed -n 's/^read_verilog -sv -DLOOM_SRAM_BLACKBOX \([^ ]*npu_pkg.sv\).*/\1/p' "$script")
[ -f "$pkg" ] || exit 3
p() { sed -n "s/.*localparam int unsigned $1 = \([0-9]*\);.*/\1/p" "$pkg"; }
R=$(p ArrayRows)
C=$(p ArrayCols)
B=$(p SpBanks)
[ -n "$YOSYS_STUB_RUNS" ] && echo "$pkg" >>"$YOSYS_STUB_RUNS"
{
	echo "=== design hierarchy ==="
	echo "   npu_top                           1"
	echo "   Number of cells:              $((5000 + 700 * R * C))"
	echo "     \$_XOR_                      $((1000 + 300 * R * C))"
	echo "     \$_NAND_                     $((2000 + 350 * R * C))"
	echo "     \$_DFF_P_                    $((900 + 40 * R * C))"
	echo "     \$_DFFE_PN0P_                $((100 + 8 * R * C))"
	echo "     \$_SDFFCE_PP0P_              100"
	echo "     \$_DLATCH_N_                 4"
	echo "     npu_sram                     $B"
	echo "     npu_acc_lane                 $C"
	echo "     npu_tcm                      2"
	[ -n "$YOSYS_STUB_EXTRA" ] && echo "     $YOSYS_STUB_EXTRA"
	echo ""
	echo "End of script."
} >"$log"
