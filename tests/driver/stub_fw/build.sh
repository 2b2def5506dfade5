#!/bin/sh
# build.sh OUT.elf - build the stub firmware (tests/driver/stub_fw/), a test
# double of firmware/ used by libloom's own tests, with the same toolchain
# and memory layout (tests/rv32/link.ld: code in ITCM, data in DTCM).
set -e
dir=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$dir/../../.." && pwd)
out=${1:?usage: build.sh OUT.elf}
mkdir -p "$(dirname "$out")"
riscv64-unknown-elf-gcc -march=rv32im_zicsr -mabi=ilp32 -O2 -ffreestanding -nostdlib -nostartfiles -static \
	-fno-builtin -Wall -Wextra -Werror -I"$root/include" -T "$root/tests/rv32/link.ld" \
	"$dir/start.S" "$dir/stub_fw.c" -o "$out"
