#!/bin/sh
# perf_keep_test.sh - scripts/perf_keep.py (make bench keeps the sections of
# docs/PERFORMANCE.md measured by hand): an old file with generated sections
# A, B and hand-written ones X (after A), Y (after B), Z (before A, after
# the preamble); the new file has A and B with new numbers and a section C
# of its own. Expect: the preamble, Z, A (new), X, B (new), Y, C.
# Ends with "N passed, M failed".
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
p=0
f=0
# check WHAT COMMAND...: one assertion, the command's exit status
check() {
	what=$1
	shift
	if "$@"; then
		echo "ok   $what"
		p=$((p + 1))
	else
		echo "FAIL $what"
		f=$((f + 1))
	fi
}
keep() { /usr/bin/python3 scripts/perf_keep.py "$1" "$2" > "$d/out.txt"; }
printf '# P\nold preamble\n## Z by hand\nz\n## A\na old\n### X by hand\nx\n## B\nb old\n### Y by hand\ny\n' > "$d/old.md"
printf '# P\nnew preamble\n## A\na new\n## B\nb new\n## C\nc new\n' > "$d/new.md"
printf '# P\nnew preamble\n## Z by hand\nz\n## A\na new\n### X by hand\nx\n## B\nb new\n### Y by hand\ny\n## C\nc new\n' > "$d/want.md"
keep "$d/old.md" "$d/new.md"
check "the hand-written sections back where they were, the generated ones new" cmp -s "$d/new.md" "$d/want.md"
check "it names the three sections it kept" test "$(grep -c '^perf_keep: kept' "$d/out.txt")" -eq 3
# a second run with nothing to keep leaves the file as it is
cp "$d/want.md" "$d/again.md"
keep "$d/want.md" "$d/again.md"
check "the same file twice: unchanged" cmp -s "$d/again.md" "$d/want.md"
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
