#!/bin/sh
# The layout of the sources (issue 20), read from the tree and, for the calls
# between files, the objects of its build ($BUILD/obj, `make` first).
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
#    collapsed), once per pair of functions;
#  - a circle of calls between the files of one folder (file A calls a
#    function or reads data that file B defines, B one of A's, or a longer
#    loop), read from `nm` of the objects, that ARCHITECTURE.md does not
#    declare one module: in its folder's part of "harness/ — the modules,
#    folder by folder", a line "- one module: `a`, `b` (why)" names the files
#    (without .c) that are one module, and a circle inside it is no
#    violation ("circle:jinja:jinja_builtin+jinja_eval", every file of the
#    circle); such a line whose files are not one circle is one too
#    ("module:run:run+run_keys"); so is an object missing or older than
#    its source ("object:PATH").
# Each violation has a key, the word after "FAIL:". Needs python3 and nm.
set -eu
. "$TESTS/lib/cli.sh"

command -v python3 > /dev/null || fail "structure: python3 is needed"
python3 - "$ROOT" "$BUILD" > "$tmp/out" <<'PY' || st=$?
import os
import re
import subprocess
import sys

root, build = sys.argv[1], sys.argv[2]
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


def declared_modules():
    """{folder: [set of file stems]} from ARCHITECTURE.md's "- one module:"
    lines, each under its folder's heading ("`jinja/` — ...")."""
    out, folder = {}, None
    if not os.path.exists(os.path.join(root, 'ARCHITECTURE.md')):
        add('architecture', 'ARCHITECTURE.md is missing: no folder declares one module')
        return out
    for line in read('ARCHITECTURE.md'):
        m = re.match(r'(?:## )?`?(\w+)/`? — ', line)
        if m or line.startswith('## '):
            folder = m and m.group(1)
        m = re.match(r'- one module: (.*)', line)
        if m and folder:
            out.setdefault(folder, []).append(set(re.findall(r'`(\w+)`', m.group(1))))
    return out


def symbols(folder, paths):
    """({stem: {symbol}} defined, {stem: {symbol}} referenced) of the objects
    of `paths` (sources of one folder), from nm; weak definitions (inline
    copies) are neither."""
    objs = {}
    for path in paths:
        obj = os.path.join(build, 'obj', os.path.splitext(path)[0] + '.o')
        if not os.path.exists(obj) or os.path.getmtime(obj) < os.path.getmtime(os.path.join(root, path)):
            add('object:' + path, '%s has no object in %s/obj, or an older one: build first (make)' %
                (path, build))
            continue
        objs[obj] = os.path.splitext(os.path.basename(path))[0]
    defs, refs = {}, {}
    if not objs:
        return defs, refs
    try:
        text = subprocess.run(['nm', '-P', '-A'] + sorted(objs), capture_output=True, text=True,
                              check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        add('nm:' + folder, 'nm failed on the objects of %s/: %s' % (folder, e))
        return defs, refs
    for line in text.split('\n'):
        obj, _, rest = line.partition(': ')
        f = rest.split()
        if obj not in objs or len(f) < 2:
            continue
        if f[1] == 'U':
            refs.setdefault(objs[obj], set()).add(f[0])
        elif f[1].isupper() and f[1] not in 'WV':
            defs.setdefault(objs[obj], set()).add(f[0])
    return defs, refs


def strong_parts(graph):
    """The strongly connected parts of `graph` ({node: {node}}) with more
    than one node, each a sorted list."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def calls_between(folder, paths):
    """{(a, b): the symbols of file b that file a uses}, a and b files (stems)
    of one folder."""
    defs, refs = symbols(folder, paths)
    owner = {s: stem for stem, ss in defs.items() for s in ss}
    calls = {}
    for a, ss in refs.items():
        for s in ss:
            if owner.get(s, a) != a:
                calls.setdefault((a, owner[s]), set()).add(s)
    return calls


def check_modules(where, groups, stems, calls):
    """The "one module" lines of a folder: files of it, in one circle."""
    raw = {}
    for a, b in calls:
        raw.setdefault(a, set()).add(b)
    parts = strong_parts(raw)
    for group in groups:
        name = '+'.join(sorted(group))
        key = 'module:%s:%s' % (os.path.basename(where), name)
        if not group <= stems:
            add(key, 'ARCHITECTURE.md declares %s one module, but %s is no file of %s/' %
                (name, ', '.join(sorted(group - stems)), where))
        elif not any(group <= set(part) for part in parts):
            add(key, 'ARCHITECTURE.md declares %s one module, but they do not call each other '
                'in a circle' % name)


def check_circles(files):
    modules = declared_modules()
    folders = {}
    for folder, path in files:
        if path.endswith(('.c', '.cc')):
            folders.setdefault(folder, []).append(path)
    for folder, paths in sorted(folders.items()):
        where = os.path.dirname(paths[0])
        calls = calls_between(folder, paths)
        groups, stems = modules.get(folder, []), {os.path.splitext(os.path.basename(p))[0] for p in paths}
        check_modules(where, groups, stems, calls)
        node = {stem: '+'.join(sorted(group)) for group in groups if group <= stems for stem in group}
        graph = {}
        for a, b in calls:
            if node.get(a, a) != node.get(b, b):
                graph.setdefault(node.get(a, a), set()).add(node.get(b, b))
        for part in strong_parts(graph):
            names = sorted(s for n in part for s in n.split('+'))
            edges = ['%s -> %s (%s%s)' % (a, b, ', '.join(sorted(calls[a, b])[:2]),
                                          ', ...' if len(calls[a, b]) > 2 else '')
                     for a, b in sorted(calls) if a in names and b in names]
            add('circle:%s:%s' % (folder, '+'.join(names)), '%s/: %s call each other in a circle, '
                'and ARCHITECTURE.md declares them no one module: %s' %
                (where, ', '.join(names), '; '.join(edges)))


files = sources()
check_includes(files)
check_functions(files)
check_circles(files)
for key in sorted(found):
    print('FAIL: %s: %s' % (key, found[key]))
print('structure: %d violations' % len(found))
sys.exit(1 if found else 0)
PY
cat "$tmp/out"
[ "${st:-0}" = 0 ] || fail "structure: $(grep -c '^FAIL: ' "$tmp/out") violations (above)"
