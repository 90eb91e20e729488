#!/bin/sh
# The layout of the sources (issue 20), read from the tree and nothing else.
# Each violation is one line naming the offender:
#  - a C file directly in harness/ (not in a stage folder); fewer than six
#    stage folders; a folder that is not a stage of the order below;
#  - an include against the folders' order
#      cli > report > run > load > {generators, net} > tpl > jinja > tok > base
#    (a folder includes only folders to its right; generators and net are
#    peers: neither includes the other), every such back edge with its file
#    and include, and every cycle of the folders' include graph (named by
#    its back edge between folders: "cycle:base->tok");
#  - harness/run/run.c over 1,500 lines, harness/cli/cmd_run.c over 400;
#  - a function of harness/ or generators/ over 80 lines, counted from its
#    opening '{' at column 0 to its closing '}' at column 0, both included
#    (brace-initialised tables such as tok/uni_data.c's are not functions);
#  - report/report.c, report/diff.c or report/gate.c including a generators/
#    header;
#  - a run of 10 or more lines repeated inside the function bodies of
#    harness/ and generators/ (comments and blank lines left out, whitespace
#    collapsed), once per pair of functions.
# Each violation has a key, the word after "FAIL:". Needs python3.
set -eu
. "$TESTS/lib/cli.sh"

command -v python3 > /dev/null || fail "structure: python3 is needed"
python3 - "$ROOT" > "$tmp/out" <<'PY' || st=$?
import os
import re
import sys

root = sys.argv[1]
ORDER = [['cli'], ['report'], ['run'], ['load'], ['generators', 'net'], ['tpl'], ['jinja'],
         ['tok'], ['base']]
RANK = {f: i for i, group in enumerate(ORDER) for f in group}
MAX_LINES = {'harness/run/run.c': 1500, 'harness/cli/cmd_run.c': 400}
FUNC_MAX = 80
DUP_LINES = 10
NO_GENERATORS = ['harness/report/report.c', 'harness/report/diff.c', 'harness/report/gate.c']
EXT = ('.c', '.h', '.cc')
found = {}


def add(key, msg):
    found.setdefault(key, msg)


def read(rel):
    with open(os.path.join(root, rel), encoding='utf-8', errors='replace') as f:
        return f.read().split('\n')


def sources():
    """(folder, path) of every source file; checks the folders themselves."""
    harness = os.path.join(root, 'harness')
    folders = []
    for n in sorted(os.listdir(harness)):
        p = os.path.join(harness, n)
        if os.path.isfile(p) and n.endswith(EXT):
            add('loose:harness/' + n, 'harness/%s is directly in harness/, not in a stage folder' % n)
        elif os.path.isdir(p) and any(f.endswith(EXT) for f in os.listdir(p)):
            folders.append(n)
    if len(folders) < 6:
        add('stages', 'harness/ has %d stage folders (%s), fewer than six' % (len(folders), ', '.join(folders)))
    out = []
    for f in folders:
        if f not in RANK:
            add('stage:' + f, 'harness/%s/ is not a stage of the order' % f)
        out += [(f, 'harness/%s/%s' % (f, n)) for n in sorted(os.listdir(os.path.join(harness, f)))
                if n.endswith(EXT)]
    gen = os.path.join(root, 'generators')
    out += [('generators', 'generators/' + n) for n in sorted(os.listdir(gen)) if n.endswith(EXT)]
    return out


def target(folder, inc):
    first = inc.split('/')[0]
    if '/' not in inc:
        return folder
    if first == 'generators' or os.path.isdir(os.path.join(root, 'harness', first)):
        return first
    return None


def path_between(graph, a, b):
    """The shortest folder path a -> ... -> b in the include graph, or None."""
    prev, todo = {a: None}, [a]
    while todo:
        v = todo.pop(0)
        if v == b:
            out = []
            while v is not None:
                out.append(v)
                v = prev[v]
            return out[::-1]
        for w in sorted(graph.get(v, ())):
            if w not in prev:
                prev[w] = v
                todo.append(w)
    return None


def check_includes(files):
    graph = {}
    for folder, path in files:
        for line in read(path):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            to = m and target(folder, m.group(1))
            if not to or to == folder:
                continue
            graph.setdefault(folder, set()).add(to)
            if path in NO_GENERATORS and to == 'generators':
                add('generators:%s->%s' % (path, m.group(1)),
                    '%s includes "%s": report and diff include no generator header' % (path, m.group(1)))
            if folder in RANK and to in RANK and RANK[folder] >= RANK[to]:
                how = 'peers' if RANK[folder] == RANK[to] else 'back edge'
                add('include:%s->%s' % (path, m.group(1)),
                    '%s includes "%s": %s %s -> %s against the folders\' order' %
                    (path, m.group(1), how, folder, to))
    for a in sorted(graph):
        for b in sorted(graph[a]):
            back = path_between(graph, b, a)
            if back and (a not in RANK or b not in RANK or RANK[a] >= RANK[b]):
                add('cycle:%s->%s' % (a, b), 'the folders include each other: %s' %
                    ' -> '.join([a] + back))


def functions(lines):
    """(name, first, last) of each function: 0-based lines of its braces."""
    out, i = [], 0
    while i < len(lines):
        if not lines[i].startswith('{'):
            i += 1
            continue
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        k = j
        while k > 0 and lines[k][:1] in (' ', '\t'):
            k -= 1
        head = ' '.join(lines[k:j + 1]) if j >= 0 else ''
        names = [n for n in re.findall(r'(\w+)\s*\(', head) if n not in ('__attribute__', 'sizeof')]
        end = next((e for e in range(i + 1, len(lines)) if lines[e].startswith('}')), len(lines) - 1)
        if names and not re.search(r'[=\],]\s*$', lines[j] if j >= 0 else '='):
            out.append((names[0], i, end))
        i = end + 1
    return out


def code_lines(lines, first, last):
    """(line number, text) of the code between two lines: comments and blank
    lines left out, white space collapsed."""
    out, in_comment = [], False
    for n in range(first, last + 1):
        s, text = lines[n], ''
        while s:
            if in_comment:
                end = s.find('*/')
                if end < 0:
                    s = ''
                else:
                    s, in_comment = s[end + 2:], False
                continue
            m = re.search(r'/\*|//|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', s)
            if not m:
                text, s = text + s, ''
            elif m.group(0) == '//':
                text, s = text + s[:m.start()], ''
            elif m.group(0) == '/*':
                text, s, in_comment = text + s[:m.start()], s[m.end():], True
            else:
                text, s = text + s[:m.end()], s[m.end():]
        text = ' '.join(text.split())
        if text:
            out.append((n + 1, text))
    return out


def check_functions(files):
    windows = {}
    for _, path in files:
        if not path.endswith(('.c', '.cc')):
            continue
        lines = read(path)
        limit = MAX_LINES.get(path)
        if limit and len(lines) - (lines[-1] == '') > limit:
            add('length:' + path, '%s has %d lines, more than %d' % (path, len(lines) - (lines[-1] == ''), limit))
        for name, first, last in functions(lines):
            if last - first + 1 > FUNC_MAX:
                add('function:%s:%s' % (path, name), '%s:%d: function %s is %d lines, more than %d' %
                    (path, first + 1, name, last - first + 1, FUNC_MAX))
            code = code_lines(lines, first + 1, last - 1)
            for w in range(len(code) - DUP_LINES + 1):
                key = tuple(t for _, t in code[w:w + DUP_LINES])
                windows.setdefault(key, []).append((path, name, code[w][0]))
    pairs = {}
    for occ in windows.values():
        for a in range(len(occ)):
            for b in range(a + 1, len(occ)):
                x, y = sorted([occ[a], occ[b]])
                pairs.setdefault((x[0], x[1], y[0], y[1]), (x[2], y[2]))
    for (fa, na, fb, nb), (la, lb) in sorted(pairs.items()):
        add('dup:%s:%s+%s:%s' % (fa, na, fb, nb),
            '%s:%d (%s) and %s:%d (%s) repeat a run of %d or more lines' % (fa, la, na, fb, lb, nb, DUP_LINES))


files = sources()
check_includes(files)
check_functions(files)
for key in sorted(found):
    print('FAIL: %s: %s' % (key, found[key]))
print('structure: %d violations' % len(found))
sys.exit(1 if found else 0)
PY
cat "$tmp/out"
[ "${st:-0}" = 0 ] || fail "structure: $(grep -c '^FAIL: ' "$tmp/out") violations (above)"
