"""Random Jinja expressions and small statements for the differential test
(compare.py --exprs N SEED): literals of every type, the context's values,
operators, filters, tests, methods, slices, conditionals, loops and macros,
combined at random. Nothing states an expected output: Python jinja2 decides,
and needle must agree, reject, or refuse."""
import random

CONTEXT = ('{"s": "Hello, World", "u": "caf\\u00e9 \\u4f60\\u597d \\ud83d\\ude00", "e": "", '
           '"w": "  a  b\\t\\nc  ", "n": 7, "m": -3, "f": 2.5, "z": 0, "big": 12345678901234567890, '
           '"t": true, "no": null, "xs": [3, 1, 2], "ys": ["b", "A", "c"], "ps": [[1, "a"], [2, "b"]], '
           '"d": {"b": 1, "a": [1, 2.0], "1": "one"}, "ds": [{"k": "x", "v": 1}, {"k": "y"}], '
           '"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": null, '
           '"tool_calls": [{"function": {"name": "f", "arguments": {"q": 1.0}}}]}]}')

ATOMS = ["s", "u", "e", "w", "n", "m", "f", "z", "t", "no", "xs", "ys", "ps", "d", "ds",
         "messages", "nope", "1", "0", "-2", "3.0", "0.1", "1e3", "'x'", "'a,b'", "\"q'\"", "''",
         "'\\n'", "none", "true", "false", "[]", "[1, 'a']", "{}", "{'k': 1}", "(1, 2)", "'é'",
         "messages[0]", "messages[-1].tool_calls", "d.a", "d['1']", "ds[0]", "xs[0]", "s[1:4]",
         "loop_free"]
BINOPS = ["+", "-", "*", "/", "//", "%", "~", "==", "!=", "<", ">", "<=", ">=", "in",
          "not in", "and", "or"]
FILTERS = ["length", "count", "trim", "string", "join", "join(', ')", "list", "first", "last",
           "lower", "upper", "capitalize", "title", "tojson", "tojson(indent=2)", "tojson(sort_keys=true)",
           "default('D')", "default('D', true)", "items", "safe", "e", "reverse", "sort",
           "sort(reverse=true)", "unique", "int", "float", "abs", "round", "dictsort",
           "map('string')", "map(attribute='k')", "select", "reject('none')", "selectattr('k')",
           "rejectattr('v', 'none')", "replace('a', 'b')", "indent(2)", "list|length", "batch(2)",
           "wordcount", "sum", "min", "max"]
TESTS = ["defined", "undefined", "none", "string", "number", "integer", "float", "mapping",
         "iterable", "sequence", "boolean", "true", "false", "odd", "even", "divisibleby 2",
         "eq 1", "in [1, 2]", "callable", "lower", "upper", "sameas none"]
METHODS = ["split()", "split(',')", "split(' ', 1)", "rsplit(',', 1)", "strip()", "lstrip()",
           "rstrip('d')", "startswith('H')", "endswith(('d', 'x'))", "replace('l', 'L')", "upper()",
           "lower()", "title()", "find('o')", "count('l')", "get('a')", "get('zz', 5)", "items()",
           "keys()", "values()", "index(1)", "splitlines()", "isdigit()", "join(['1', '2'])",
           "format(1)", "append(1)", "pop()", "update({})", "capitalize()", "isspace()"]


def expr(rng, depth=0):
    r = rng.random()
    if depth > 3 or r < 0.3:
        return rng.choice(ATOMS)
    if r < 0.5:
        if rng.random() < 0.05:
            return "(%s ** %s)" % (rng.choice(ATOMS), rng.choice(["2", "-1", "0.5", "3"]))
        return "(%s %s %s)" % (expr(rng, depth + 1), rng.choice(BINOPS), expr(rng, depth + 1))
    if r < 0.65:
        return "(%s|%s)" % (expr(rng, depth + 1), rng.choice(FILTERS))
    if r < 0.72:
        return "(%s is %s%s)" % (expr(rng, depth + 1), rng.choice(["", "not "]), rng.choice(TESTS))
    if r < 0.8:
        return "%s.%s" % (rng.choice(["s", "u", "w", "d", "xs", "e", "(s ~ n)"]), rng.choice(METHODS))
    if r < 0.86:
        return "(%s if %s else %s)" % (expr(rng, depth + 1), expr(rng, depth + 1), expr(rng, depth + 1))
    if r < 0.9:
        return "(not %s)" % expr(rng, depth + 1)
    if r < 0.95:
        return "%s[%s]" % (expr(rng, depth + 1), rng.choice(["0", "-1", "1:", ":-1", "::-1", "::2", "-2::-2", "1:5:3", "5:1:-2", "3:3", "::-3", "1::9223372036854775807", "::-9223372036854775807", "'a'", "5"]))
    return "[%s, %s]" % (expr(rng, depth + 1), expr(rng, depth + 1))


def statement(rng):
    a, b = expr(rng), expr(rng)
    forms = [
        "{{ %s }}" % a,
        "{{ %s }}|{{ %s }}" % (a, b),
        "{%% if %s %%}T{%% else %%}F{%% endif %%}" % a,
        "{%% for x in %s %%}[{{ x }}{{ loop.index }}{{ loop.last }}]{%% else %%}E{%% endfor %%}" % a,
        "{%% set v = %s %%}{{ v }}{{ v is defined }}" % a,
        "{%% set ns = namespace(v=%s) %%}{%% for x in [1, 2] %%}{%% set ns.v = ns.v ~ x %%}{%% endfor %%}{{ ns.v }}" % a,
        "{%% macro mm(p, q=%s) %%}<{{ p }}|{{ q }}>{%% endmacro %%}{{ mm(%s) }}{{ mm(1, q=2) }}" % (a, b),
        "{%% for k, v in %s %%}{{ k }}={{ v }};{%% endfor %%}" % rng.choice(["d.items()", "d|dictsort", "ps", a]),
        "{{ %s|tojson }}" % a,
        "{%% filter upper %%}{{ %s }}{%% endfilter %%}" % a,
    ]
    return rng.choice(forms)


def cases(n, seed):
    rng = random.Random(seed)
    return [("expr%d" % i, statement(rng), CONTEXT) for i in range(n)]
