#!/bin/sh
# lint_house.sh - keeps the house as docs/ARCHITECTURE.md draws it (make lint):
#   1. includes go one way: a file may include only headers of the folders
#      its layer is allowed to use (the table below);
#   2. no hand-written source file over MAX_FILE lines;
#   3. no C/C++ function over MAX_FUNC lines, unless the line before its
#      signature says why ("/* lint: long function: WHY */"; kept for
#      table-like switches, one case per instruction kind or error kind);
#   4. no waiver of Verilator's LATCH warning (verilator_tb/*.vlt): Yosys
#      refuses a latch from an always_comb ("make synth", a sweep's area),
#      and make test's Yosys is a stub that would not see it.
# A header named *_internal.h is for its own folder only.
# Prints every offence (file:line: what) and exits 1 if there was one.
# Run from the repository root: sh scripts/lint_house.sh
set -u
MAX_FILE=${MAX_FILE:-1500}
MAX_FUNC=${MAX_FUNC:-150}

# layer: the folders (include paths' first components) it may include from.
# "loom" is include/loom/ (the public API, the ABI, the single sources),
# "gen" stands for generated headers (build/gen, build/hw/NAME, Verilator's).
# Same-folder includes ("foo.h") are always allowed.
allowed() {
	case "$1" in
	common)       echo "loom common" ;;
	cmodel)       echo "loom common cmodel" ;;
	hw)           echo "loom common hw" ;;
	driver)       echo "loom common driver" ;;
	ir)           echo "loom common ir" ;;
	runtime)      echo "loom common ir runtime" ;;
	compiler/npu) echo "loom common compiler/npu" ;;
	compiler)     echo "loom common ir runtime compiler compiler/npu gen" ;;
	cosim)        echo "loom common compiler/npu cosim" ;;
	sweep)        echo "loom common hw driver ir runtime compiler compiler/npu sweep" ;;
	tools)        echo "loom common hw driver ir runtime compiler compiler/npu cosim sweep tools" ;;
	verilator_tb) echo "loom gen" ;;
	systemc)      echo "loom gen" ;;
	firmware)     echo "loom firmware" ;;
	tests)        echo "*" ;;
	*)            echo "" ;;
	esac
}

# the layer of a file: its first folder; compiler/npu/ is a layer of its own
layer_of() {
	case "$1" in
	compiler/npu/*) echo compiler/npu ;;
	include/*) echo loom ;;
	*/*) echo "${1%%/*}" ;;
	*) echo top ;;
	esac
}

# the layer a quoted include names: "loom/x.h" -> loom, "compiler/npu/x.h" ->
# compiler/npu, "ir/x.h" -> ir, "x.h" -> same folder, generated headers -> gen
inc_layer() {
	case "$1" in
	loom/*) echo loom ;;
	compiler/npu/*) echo compiler/npu ;;
	*/*) echo "${1%%/*}" ;;
	onnx.pb-c.h | loom_cfg.h | V*.h | verilated*.h | svdpi.h) echo gen ;;
	*) echo same ;;
	esac
}

bad=0
say() {
	echo "$1"
	bad=1
}

srcs=$(git ls-files '*.c' '*.h' '*.cpp' '*.sv' '*.S' 2>/dev/null)
[ -n "$srcs" ] || { echo "lint_house: run from the repository (git ls-files found nothing)" >&2; exit 2; }

# ---- 1. include directions
for f in $(echo "$srcs" | grep -v '\.sv$'); do
	L=$(layer_of "$f")
	ok=$(allowed "$L")
	[ "$ok" = "*" ] && continue
	[ "$L" = loom ] && ok="loom"
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS= read -r line; do
		n=${line%%:*}
		inc=$(echo "$line" | sed 's/.*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/')
		il=$(inc_layer "$inc")
		[ "$il" = same ] && continue
		[ "$il" = "$L" ] && continue
		case "$inc" in *_internal.h)
			echo "$f:$n: includes \"$inc\": a folder's *_internal.h is for that folder only"
			continue ;;
		esac
		case " $ok " in *" $il "*) continue ;; esac
		echo "$f:$n: includes \"$inc\": layer $L may not include from $il (allowed: $ok; docs/ARCHITECTURE.md)"
	done
done > /tmp/lint_house.$$ 2>&1
if [ -s /tmp/lint_house.$$ ]; then
	cat /tmp/lint_house.$$
	bad=1
fi
rm -f /tmp/lint_house.$$

# ---- 2. file sizes
for f in $srcs; do
	n=$(wc -l < "$f")
	[ "$n" -gt "$MAX_FILE" ] && say "$f: $n lines, more than $MAX_FILE: split it along its sections"
done

# ---- 3. function sizes (C and C++: the body opens with "{" alone at column 0
# and closes with "}" at column 0, the style of this tree)
out=$(for f in $(echo "$srcs" | grep '\.\(c\|h\|cpp\)$'); do
	awk -v max="$MAX_FUNC" -v file="$f" '
	function name_of(s,   m) {
		if (match(s, /[A-Za-z_][A-Za-z_0-9]*[ \t]*\(/)) {
			m = substr(s, RSTART, RLENGTH)
			sub(/[ \t]*\($/, "", m)
			return m
		}
		return "?"
	}
	{ line[NR] = $0 }
	/^\{[ \t]*$/ {
		start = NR
		# the signature: the lines above, up to a blank line, a comment end or a ";"/"}" line
		sig = ""; allow = ""
		for (k = NR - 1; k > 0 && k >= NR - 6; k--) {
			if (line[k] ~ /^[ \t]*$/ || line[k] ~ /\*\/[ \t]*$/ || line[k] ~ /[;}][ \t]*$/) {
				if (line[k] ~ /lint: long function:/) allow = line[k]
				break
			}
			sig = line[k] " " sig
		}
		fname = name_of(sig)
		sigline = k + 1
		next
	}
	/^\}/ && start {
		len = NR - start - 1
		if (len > max && allow == "")
			printf "%s:%d: function %s has %d lines, more than %d: split it (or say why it is a table: /* lint: long function: WHY */)\n", file, sigline, fname, len, max
		start = 0
	}
	' "$f"
done)
[ -n "$out" ] && { echo "$out"; bad=1; }

# 4. latches are fixed in the RTL, not waived
out=$(grep -Hn 'LATCH' verilator_tb/*.vlt 2>/dev/null | grep -v '^[^:]*:[0-9]*:[ \t]*//' |
	sed 's/^\([^:]*:[0-9]*\):.*/\1: a waiver of Verilator'"'"'s LATCH warning: Yosys refuses the latch; set every signal of the always_comb in every path instead/')
[ -n "$out" ] && { echo "$out"; bad=1; }

[ $bad = 0 ] && echo "lint_house: layers, file sizes (<= $MAX_FILE lines), function sizes (<= $MAX_FUNC lines) and no LATCH waivers ok"
exit $bad
