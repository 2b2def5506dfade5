#!/bin/sh
# run.sh [NAME...] - build the RV32IM test programs for QEMU's virt machine
# (env.h, link.ld here) and run each on qemu-system-riscv32, an independent
# simulator, to check the tests themselves (Debian: qemu-system-misc).
# Checks that only hold on Loom are left out there (TEST_ENV_GENERIC).
# Prints one line per program and "N passed, M failed".
dir=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$(mktemp -d)}
RV32_CFLAGS="-include $dir/env.h" RV32_LDSCRIPT="$dir/link.ld" \
	sh "$dir/../build.sh" "$out" "$@" || exit 1
p=0
f=0
for elf in "$out"/*.elf; do
	n=$(basename "$elf" .elf)
	if [ $# -gt 0 ]; then
		case " $* " in *" $n "*) ;; *) continue ;; esac
	fi
	res=$(timeout 20 qemu-system-riscv32 -M virt -m 4M -bios none \
		-display none -serial stdio -monitor none \
		-cpu rv32,a=false,c=false,f=false,d=false,h=false,s=false,u=false,zba=false,zbb=false,zbc=false,zbs=false,mmu=false,pmp=false \
		-kernel "$elf" </dev/null 2>&1 | tr -d '\r' | grep 'T=' | tail -n 1)
	if [ "$res" = "T=00000001" ]; then
		p=$((p + 1))
		echo "PASS $n"
	else
		f=$((f + 1))
		v=${res#T=}
		if [ -n "$v" ]; then
			echo "FAIL $n: TOHOST=0x$v (case $(( 0x$v >> 1 )))"
		else
			echo "FAIL $n: no TOHOST (timeout)"
		fi
	fi
done
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
