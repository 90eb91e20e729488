"""Random cases of Python's two string formatters as templates use them:
printf-style `%` (flags, width, precision, '*', %(key)) and str.format
(auto, numbered and keyword fields, conversions, the format-spec
mini-language), over ints, big ints, floats that round at every digit,
strings, None, lists and Undefined; and of integer arithmetic across the
64-bit edge (+ - * // % / ** and comparisons on ints of 1 to 200 digits). Each case is (name, template, context)
as in micro.py; Python jinja2 decides what is right (compare.py --fmts)."""
import json
import random

VALUES = ["0", "7", "-42", "255", "1234567", "-9876543210", "2**70", "-10**20 - 1",
          "true", "false", "0.0", "-0.0", "1.5", "2.5", "-2.675", "3.14159", "1e-05",
          "123456.789", "1e16", "1.5e300", "-1e-300", "0.1", "x", "big", "(ns|float)", "(x * 1e308 * 10)", "(-x * 1e308 * 10)",
          "'abc'", "'é😀'", "''", "none", "[1, 'a']", "u", "'q'", "65"]
# nan and inf come from the context: jinja2 folds constant expressions and
# writes a folded inf or nan into its compiled code as a name (NameError).
CONTEXT = json.dumps({"x": 0.3, "big": 12345678901234567890, "ns": "nan"})
PCT_CONV = "sradiuoxXeEfFgGc"
FMT_TYPES = ["", "", "", "s", "d", "b", "c", "o", "x", "X", "e", "E", "f", "F", "g", "G", "%",
             "n", "q"]


def pct_spec(rng):
    flags = "".join(rng.choice("-+ #0") for _ in range(rng.choice([0, 0, 1, 2, 3])))
    width = rng.choice(["", "", "1", "5", "12", "*"])
    prec = rng.choice(["", "", ".0", ".1", ".3", ".10", ".", ".*"])
    return "%" + flags + width + prec + rng.choice(PCT_CONV)


def pct_case(rng):
    specs = [pct_spec(rng) for _ in range(rng.choice([1, 1, 2, 3]))]
    args = []
    for s in specs:
        args += ["5"] * s.count("*") + [rng.choice(VALUES)]
    if rng.random() < 0.05:
        args.append("1")
    text = "|".join(specs) + rng.choice(["", "%%", "%", " 100%% "])
    if len(args) == 1 and rng.random() < 0.5:
        return "{{ %r %% %s }}" % (text, args[0])
    return "{{ %r %% (%s,) }}" % (text, ", ".join(args))


def fmt_spec(rng):
    fill_align = rng.choice(["", "", "<", ">", "^", "=", "*^", "0>", "é<", "_="])
    sign = rng.choice(["", "", "+", "-", " "])
    z = rng.choice(["", "", "", "z"])
    alt = rng.choice(["", "", "#"])
    zero = rng.choice(["", "", "0"])
    width = rng.choice(["", "", "1", "6", "15"])
    group = rng.choice(["", "", "", ",", "_"])
    prec = rng.choice(["", "", "", ".0", ".2", ".6", ".12"])
    return fill_align + sign + z + alt + zero + width + group + prec + rng.choice(FMT_TYPES)


def fmt_case(rng):
    n = rng.choice([1, 1, 2, 3])
    fields, pos, kw = [], [], []
    numbered = rng.random() < 0.3
    for i in range(n):
        conv = rng.choice(["", "", "", "", "!r", "!s", "!a"])
        spec = rng.choice(["", ":" + fmt_spec(rng), ":" + fmt_spec(rng)])
        if rng.random() < 0.3:
            name = "k%d" % i
            kw.append("%s=%s" % (name, rng.choice(VALUES)))
        else:
            name = str(i) if numbered else ""
            pos.append(rng.choice(VALUES))
        fields.append("{" + name + conv + spec + "}")
    text = rng.choice(["", "{{", "}}"]).join(fields) + rng.choice(["", "!", "{{}}"])
    return "{{ %r.format(%s) }}" % (text, ", ".join(pos + kw))


def big_int(rng):
    n = rng.randrange(1, 10 ** rng.choice([1, 2, 5, 18, 19, 20, 30, 60, 200]))
    n = rng.choice([n, n, n, 0, 2 ** 63, 2 ** 63 - 1, 2 ** 64])
    return -n if rng.random() < 0.4 else n


def big_case(rng):
    a, b = big_int(rng), big_int(rng)
    op = rng.choice(["+", "-", "*", "//", "%", "/", "**", "<", "==", ">="])
    if op == "**":
        a, b = rng.choice([a, rng.randrange(-1000, 1000)]), rng.randrange(0, 70)
    # a literal, or the context's json.loads int when beyond 64 bits
    left = "(%d)" % a if abs(a) < 2 ** 63 or rng.random() < 0.5 else "n"
    return "{{ %s %s (%d) }}" % (left, op, b), json.dumps({"n": a})


def cases(n, seed):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 3 == 2:
            text, context = big_case(rng)
        else:
            text, context = pct_case(rng) if i % 3 == 0 else fmt_case(rng), CONTEXT
        out.append(("fmt%d" % i, text, context))
    return out
