#!/bin/sh
# example.sh - the sc_main of docs/SYSTEMC.md builds and runs as the page
# says: its ```cpp block is compiled with the page's command against
# build/systemc/libloom_npu_sc.a and must print the ID and the interrupt
# line the page quotes; then the same with the cycle-accurate module in
# place of the loosely timed one, linked as the page says against the
# default configuration's objects (make systemc-rtl HW=default), printing
# the interrupt line the page quotes for it. Ends with "N passed, M failed".
#   sh tests/systemc/example.sh [BUILD_DIR]
B=${1:-build}
LOOM=$(pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
pass=0
fail=0
awk '/^```cpp$/{on=1; next} /^```$/{if (on) exit} on' docs/SYSTEMC.md >"$t/my_platform.cpp"
if [ "$(wc -l <"$t/my_platform.cpp")" -lt 20 ]; then
	echo "FAIL docs/SYSTEMC.md has no sc_main in a \`\`\`cpp block"
	fail=$((fail + 1))
elif ! g++ -std=c++17 -Wall -Wextra -Werror -I"$LOOM/include" -I"$LOOM" "$t/my_platform.cpp" \
	"$B/systemc/libloom_npu_sc.a" -lsystemc -lpthread -lm -o "$t/my_platform" >"$t/log" 2>&1; then
	echo "FAIL the example does not build: $(tail -n 5 "$t/log")"
	fail=$((fail + 1))
else
	echo "ok   the example builds ($(grep -c '' "$t/my_platform.cpp") lines)"
	pass=$((pass + 1))
	LOOM_ROOT=$LOOM SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$t/my_platform" >"$t/out" 2>&1
	for want in "ID 4c4f4f4d" "interrupt at 50 ns: STATUS 2, CYCLES 46"; do
		if grep -qF "$want" "$t/out" && grep -qF "$want" docs/SYSTEMC.md; then
			echo "ok   it prints '$want', as docs/SYSTEMC.md says"
			pass=$((pass + 1))
		else
			echo "FAIL it does not print '$want': $(head -n 3 "$t/out")"
			fail=$((fail + 1))
		fi
	done
fi
S="$B/hw/default/sc"
sed 's|#include "systemc/loom_npu_sc.h"|#include "systemc/loom_npu_ca_sc.h"|; s|loom_sc::npu_lt npu(|loom_sc::npu_ca npu(|' \
	"$t/my_platform.cpp" >"$t/ca_platform.cpp"
if ! grep -q 'loom_sc::npu_ca npu(' "$t/ca_platform.cpp"; then
	echo "FAIL the example has no 'loom_sc::npu_lt npu(' to replace"
	fail=$((fail + 1))
elif ! g++ -std=c++17 -Wall -Wextra -Werror -I"$LOOM/include" -I"$LOOM" "$t/ca_platform.cpp" "$S/npu_ca.o" \
	"$S/Vtb_top__ALL.a" "$S/libverilated.a" "$B/systemc/libloom_npu_sc.a" -lsystemc -lz -lpthread -lm \
	-o "$t/ca_platform" >"$t/log" 2>&1; then
	echo "FAIL the example with npu_ca does not build: $(tail -n 5 "$t/log")"
	fail=$((fail + 1))
else
	LOOM_ROOT=$LOOM SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$t/ca_platform" >"$t/out" 2>&1
	for want in "ID 4c4f4f4d" "interrupt at 48500 ps: STATUS 2, CYCLES 47"; do
		if grep -qF "$want" "$t/out" && grep -qF "$want" docs/SYSTEMC.md; then
			echo "ok   with npu_ca it prints '$want', as docs/SYSTEMC.md says"
			pass=$((pass + 1))
		else
			echo "FAIL with npu_ca it does not print '$want': $(head -n 3 "$t/out")"
			fail=$((fail + 1))
		fi
	done
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
