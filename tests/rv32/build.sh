#!/bin/sh
# build.sh OUTDIR [NAME...] - assemble the RV32IM test programs
# tests/rv32/NAME.S (all of them by default) into OUTDIR/NAME.elf, linked
# with tests/rv32/link.ld (code at 0 in ITCM, data in DTCM). Runners load
# the ELF's segments and read TOHOST (docs/CONTROL.md, "Test suite").
#   RV32_CC        the compiler driver (riscv64-unknown-elf-gcc)
#   RV32_CFLAGS    extra flags (tests/rv32/qemu/run.sh adds its env.h)
#   RV32_LDSCRIPT  another linker script (default tests/rv32/link.ld)
set -e
dir=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh OUTDIR [NAME...]}
shift
cc=${RV32_CC:-riscv64-unknown-elf-gcc}
ld=${RV32_LDSCRIPT:-$dir/link.ld}
mkdir -p "$out"
if [ $# -eq 0 ]; then
	set --
	for s in "$dir"/*.S; do set -- "$@" "$(basename "$s" .S)"; done
fi
for n in "$@"; do
	# shellcheck disable=SC2086
	$cc -march=rv32im -mabi=ilp32 -nostdlib -nostartfiles -static \
		-Wa,--fatal-warnings -I"$dir" -I"$dir/../../include" $RV32_CFLAGS -T "$ld" \
		"$dir/$n.S" -o "$out/$n.elf"
done
