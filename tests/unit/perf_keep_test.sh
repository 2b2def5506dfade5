#!/bin/sh
# perf_keep_test.sh - scripts/perf_keep.py (make bench keeps the sections of
# docs/PERFORMANCE.md measured by hand): an old file with generated sections
# A, B and hand-written ones X (after A), Y (after B), Z (before A, after
# the preamble); the new file has A and B with new numbers and a section C
# of its own. Expect: the preamble, Z, A (new), X, B (new), Y, C.
# Ends with "N passed, M failed".
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
printf '# P\nold preamble\n## Z by hand\nz\n## A\na old\n### X by hand\nx\n## B\nb old\n### Y by hand\ny\n' > "$d/old.md"
printf '# P\nnew preamble\n## A\na new\n## B\nb new\n## C\nc new\n' > "$d/new.md"
printf '# P\nnew preamble\n## Z by hand\nz\n## A\na new\n### X by hand\nx\n## B\nb new\n### Y by hand\ny\n## C\nc new\n' > "$d/want.md"
p=0
f=0
if /usr/bin/python3 scripts/perf_keep.py "$d/old.md" "$d/new.md" > "$d/out.txt" && cmp -s "$d/new.md" "$d/want.md"; then
	echo "ok   the hand-written sections back where they were, the generated ones new"
	p=$((p + 1))
else
	echo "FAIL perf_keep.py: got"
	cat "$d/new.md"
	f=$((f + 1))
fi
if [ "$(grep -c '^perf_keep: kept' "$d/out.txt")" -eq 3 ]; then
	echo "ok   it names the three sections it kept"
	p=$((p + 1))
else
	echo "FAIL perf_keep.py's report:"
	cat "$d/out.txt"
	f=$((f + 1))
fi
# a second run with nothing to keep leaves the file as it is
cp "$d/want.md" "$d/again.md"
if /usr/bin/python3 scripts/perf_keep.py "$d/want.md" "$d/again.md" > /dev/null && cmp -s "$d/again.md" "$d/want.md"; then
	echo "ok   the same file twice: unchanged"
	p=$((p + 1))
else
	echo "FAIL the same file twice changed it"
	f=$((f + 1))
fi
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
