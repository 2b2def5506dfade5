#!/usr/bin/python3
"""perf_keep.py OLD NEW - keeps the hand-written sections of
docs/PERFORMANCE.md when `make bench` (scripts/bench.sh) writes the file
again from its template: every section of OLD (a "## " or "### " heading
and the lines up to the next such heading) whose heading NEW does not have
is put back into NEW after the section it followed in OLD (the nearest
earlier heading that NEW has; after NEW's preamble if none). Those are the
measurements taken by hand, each with the commands behind it (a round of
issue work, a trial not kept); the generated sections are NEW's own.
Rewrites NEW in place and prints the headings it kept."""
import re
import sys


def sections(lines):
    pre, secs = [], []
    for line in lines:
        if re.match(r'#{2,3} ', line):
            secs.append([line])
        elif secs:
            secs[-1].append(line)
        else:
            pre.append(line)
    return pre, secs


def lines_of(path):
    with open(path) as f:
        text = f.read()
    return text.split('\n')[:-1] if text.endswith('\n') else text.split('\n'), text.endswith('\n')


def main():
    old_path, new_path = sys.argv[1], sys.argv[2]
    _, old = sections(lines_of(old_path)[0])
    new_lines, newline_end = lines_of(new_path)
    pre, new = sections(new_lines)
    heads = {s[0] for s in new}
    after = {}  # NEW's heading (None: the preamble) -> OLD's sections to put after it
    anchor = None
    for s in old:
        if s[0] in heads:
            anchor = s[0]
        else:
            after.setdefault(anchor, []).append(s)
    out = pre[:]
    for s in after.get(None, []):
        out += s
    placed = set()
    for s in new:
        out += s
        if s[0] not in placed:
            placed.add(s[0])
            for k in after.get(s[0], []):
                out += k
    with open(new_path, 'w') as f:
        f.write('\n'.join(out) + ('\n' if newline_end else ''))
    for k in sum(after.values(), []):
        print('perf_keep: kept "%s"' % k[0])


if __name__ == '__main__':
    main()
