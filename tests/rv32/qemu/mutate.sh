#!/bin/sh
# mutate.sh NAME [CASE...] - check that the checks of test program NAME are
# live: for each case n (all of them by default), rebuild NAME for QEMU
# with every check of case n inverted and expect TOHOST to report case n.
# A case reported as "passes anyway" has no check of its own (a branch or
# jump that is its own check, or a case left out on QEMU): review it by
# hand. Needs qemu-system-riscv32 (Debian: qemu-system-misc).
dir=$(cd "$(dirname "$0")" && pwd)
name=${1:?usage: mutate.sh NAME [CASE...]}
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [ $# -eq 0 ]; then
	RV32_CFLAGS="-include $dir/env.h" RV32_LDSCRIPT="$dir/link.ld" \
		sh "$dir/../build.sh" "$out" "$name" || exit 1
	last=$(riscv64-unknown-elf-nm "$out/$name.elf" | sed -n 's/.* test_\([0-9]*\)$/\1/p' | sort -n | tail -n 1)
	set -- $(seq 1 "$last")
fi
live=0
dead=""
bad=""
for n in "$@"; do
	cat >"$out/mutate.h" <<EOH
#include "$dir/env.h"
#define CHECK_EQ(a, b)                                                  \\
        xor     t6, a, b;                                               \\
        li      t5, $n;                                                 \\
        bne     gp, t5, 9902f;                                          \\
        xori    t6, t6, 1;                                              \\
9902:   beqz    t6, 9901f;                                              \\
        j       fail;                                                   \\
9901:
EOH
	RV32_CFLAGS="-include $out/mutate.h" RV32_LDSCRIPT="$dir/link.ld" \
		sh "$dir/../build.sh" "$out" "$name" || exit 1
	res=$(timeout 20 qemu-system-riscv32 -M virt -m 4M -bios none \
		-display none -serial stdio -monitor none \
		-cpu rv32,a=false,c=false,f=false,d=false,h=false,s=false,u=false,zba=false,zbb=false,zbc=false,zbs=false,mmu=false,pmp=false \
		-kernel "$out/$name.elf" </dev/null 2>&1 | tr -d '\r' | grep 'T=' | tail -n 1)
	want=$(printf 'T=%08x' $(( (n << 1) | 1 )))
	if [ "$res" = "$want" ]; then
		live=$((live + 1))
	elif [ "$res" = "T=00000001" ]; then
		dead="$dead $n"
	else
		bad="$bad $n($res)"
	fi
done
echo "$name: $live cases fail when their checks are inverted"
[ -n "$dead" ] && echo "$name: passes anyway:$dead"
[ -n "$bad" ] && echo "$name: reported another case:$bad"
[ -z "$bad" ]
