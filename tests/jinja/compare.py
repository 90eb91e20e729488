#!/usr/bin/python3
"""Renders real chat templates with Python jinja2 (render_py.py, the servers'
engine) and with needle's interpreter (the render driver) on the same
contexts and compares byte for byte.

Usage: compare.py RENDER_DRIVER CORPUS.json [MIN_PERCENT]
       compare.py RENDER_DRIVER CORPUS.json MIN_PERCENT --random N SEED
       compare.py RENDER_DRIVER --micro [MIN_PERCENT]
       compare.py RENDER_DRIVER --exprs MIN_PERCENT N SEED
       compare.py RENDER_DRIVER --fmts MIN_PERCENT N SEED
CORPUS.json is {NAME: TEMPLATE} (corpus.mjs writes it); duplicate texts are
rendered once, each with every context below. --micro renders the cases of
micro.py instead, each with its own context; --exprs N random expressions
and statements of exprs.py; --fmts N random % and str.format cases of
fmtcases.py. --random adds N random
conversations (random roles, text pieces that stress escaping and
whitespace, tool calls with random JSON arguments) drawn from SEED. Each context below is what vLLM hands the template: string
content, tool-call arguments parsed into objects, tools as model_dump leaves
them, tools None when absent, the special tokens. They are JSON text so that
Python reads 1.0, 1e+20 and 12345678901234567890 as it would from a request.

Prints one line per differing render and a summary; exits 1 when a render
differs, when needle renders what Python rejects, when fewer than
MIN_PERCENT (default 90) of the renders Python completes are identical, or
when jinja_tpl_openai_content disagrees with vLLM's content-format rule.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

TOOLS = """[{"type": "function", "function": {"name": "get_weather",
 "description": "Get the weather for a city", "parameters": {"type": "object",
 "properties": {"city": {"type": "string", "description": "City name"},
 "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}},
 {"type": "function", "function": {"name": "search", "description": null,
 "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}]"""

SYS = '{"role": "system", "content": "You are a helpful assistant."}'
USER = '{"role": "user", "content": "What is the weather in Lisbon?"}'


def conv(*msgs, tools="null", agp="true", extra=""):
    return ('{"messages": [%s], "tools": %s, "documents": null, "add_generation_prompt": %s,'
            ' "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"%s}'
            % (", ".join(msgs), tools, agp, extra))


def call(cid, name, args):
    return ('{"id": "%s", "type": "function", "function": {"name": "%s", "arguments": %s}}'
            % (cid, name, args))


CONTEXTS = {
    "basic": conv(SYS, USER),
    "multiturn": conv(SYS, USER, '{"role": "assistant", "content": "Sunny, 21 C."}',
                      '{"role": "user", "content": "And tomorrow?"}'),
    "nosys": conv(USER),
    "noagp": conv(SYS, USER, '{"role": "assistant", "content": "Sunny."}', agp="false"),
    "tools": conv(SYS, USER, tools=TOOLS),
    "toolcall": conv(SYS, USER,
                     '{"role": "assistant", "content": "", "tool_calls": [%s]}'
                     % call("call_1", "get_weather", '{"city": "Lisbon", "unit": "c"}'),
                     '{"role": "tool", "tool_call_id": "call_1", "content": "21 C, clear"}',
                     tools=TOOLS),
    "parallel": conv(USER,
                     '{"role": "assistant", "content": null, "tool_calls": [%s, %s]}'
                     % (call("a", "get_weather", '{"city": "Lisbon"}'),
                        call("b", "search", '{"query": "Lisbon news"}')),
                     '{"role": "tool", "tool_call_id": "a", "content": "21 C"}',
                     '{"role": "tool", "tool_call_id": "b", "content": "nothing new"}',
                     tools=TOOLS),
    "think_off": conv(SYS, USER, extra=', "enable_thinking": false, "thinking": false'),
    "think_on": conv(SYS, USER, extra=', "enable_thinking": true, "thinking": true'),
    "reasoning": conv(USER, '{"role": "assistant", "content": "It is sunny.", '
                      '"reasoning_content": "The user wants weather."}',
                      '{"role": "user", "content": "Thanks"}'),
    "unicode": conv('{"role": "system", "content": "Réponds en français 🙂"}',
                    '{"role": "user", "content": "你好 \\"quoted\\" back\\\\slash {{ x }} {% raw %} </think> tab\\tend\\u2028"}',
                    '{"role": "assistant", "content": "ok", "tool_calls": [%s]}'
                    % call("u", "search", '{"query": "é😀", "nested": [1, 2.5, true, null, {"a": ["x"]}]}'),
                    '{"role": "tool", "tool_call_id": "u", "content": "ß"}', tools=TOOLS),
    "numkeys": conv(USER, '{"role": "assistant", "content": "", "tool_calls": [%s]}'
                    % call("n", "search", '{"query": "q", "1": "one", "0": "zero"}'), tools=TOOLS),
    "floats": conv(USER, '{"role": "assistant", "content": "", "tool_calls": [%s]}'
                   % call("f", "search", '{"a": 1.0, "b": 1e+20, "c": 0.1, "d": -0.0, "e": 1e-07, '
                          '"f": 12345678901234567890, "g": 3}'), tools=TOOLS),
    "developer": conv('{"role": "developer", "content": "Be terse."}', USER),
    "multipart": conv('{"role": "user", "content": [{"type": "text", "text": "Part one."}, '
                      '{"type": "text", "text": "Part two."}]}'),
    "dupkeys": conv('{"role": "user", "content": "first", "content": "second"}'),
    "gptoss": conv('{"role": "developer", "content": "Answer in one line."}', USER,
                   '{"role": "assistant", "content": "", "thinking": "Need the tool.", "tool_calls": [%s]}'
                   % call("g", "get_weather", '{"city": "Lisbon"}'),
                   '{"role": "tool", "tool_call_id": "g", "content": "{\\"temp\\": 21}"}',
                   '{"role": "assistant", "content": "21 C.", "thinking": "Done."}',
                   '{"role": "user", "content": "Thanks!"}', tools=TOOLS,
                   extra=', "reasoning_effort": "high", "builtin_tools": ["browser", "python"], '
                         '"model_identity": "You are Test."'),
    "llama_kwargs": conv(SYS, USER, tools=TOOLS,
                         extra=', "date_string": "26 Jul 2024", "tools_in_user_message": false, '
                               '"builtin_tools": ["code_interpreter", "brave_search"], "custom_tools": %s'
                               % TOOLS),
    "richtools": conv(USER, tools=r"""[{"type": "function", "function": {"name": "book",
 "description": "Book a \"room\"\nsecond line: caf\u00e9", "parameters": {"type": "object",
 "properties": {"nights": {"type": "integer", "minimum": 1, "default": 2.0},
 "guests": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"},
 "age": {"type": ["integer", "null"]}}, "required": ["name"]}},
 "tier": {"type": "string", "enum": ["std", "suite"], "description": "Room tier"},
 "flags": {"type": "object", "additionalProperties": {"type": "boolean"}}},
 "required": ["nights", "guests"], "additionalProperties": false}, "strict": true}}]"""),
    "parts_all": conv('{"role": "system", "content": [{"type": "text", "text": "Sys part."}]}',
                      '{"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": " there"}]}',
                      '{"role": "assistant", "content": [{"type": "text", "text": "Hello."}]}',
                      '{"role": "user", "content": [{"type": "text", "text": "Again"}]}'),
    "multiround": conv(SYS, USER,
                       '{"role": "assistant", "content": "", "reasoning_content": "call it", "tool_calls": [%s]}'
                       % call("m1", "get_weather", '{"city": "Lisbon"}'),
                       '{"role": "tool", "tool_call_id": "m1", "content": "21 C"}',
                       '{"role": "assistant", "content": "It is 21 C.", "reasoning_content": "answer"}',
                       '{"role": "user", "content": "And Porto?"}',
                       '{"role": "assistant", "content": "<think>inline</think>Checking.", "tool_calls": [%s]}'
                       % call("m2", "get_weather", '{"city": "Porto"}'),
                       '{"role": "tool", "tool_call_id": "m2", "content": "18 C"}', tools=TOOLS,
                       extra=', "enable_thinking": true'),
    "empty": conv('{"role": "user", "content": ""}', '{"role": "assistant", "content": ""}',
                  '{"role": "user", "content": " "}'),
    "args_string": conv(USER, '{"role": "assistant", "content": null, "tool_calls": [%s]}'
                        % call("s", "search", '"{\\"query\\": \\"x\\"}"'),
                        '{"role": "tool", "tool_call_id": "s", "content": "r"}', tools=TOOLS),
}


def random_value(rng, depth):
    """A random JSON value as text, with the number forms Python keeps apart."""
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return rng.choice(["0", "-1", "7", "12345678901234567890", "-0", "9007199254740993"])
    if kind == 1:
        return rng.choice(["1.0", "0.5", "-2.25", "1e+20", "1e-07", "3.14159", "-0.0", "100.0", "1E3"])
    if kind == 2:
        return rng.choice(["true", "false", "null"])
    if kind in (3, 4, 5):
        return json.dumps(random_text(rng), ensure_ascii=rng.random() < 0.5)
    if kind in (6, 7):
        keys = ["a", "b", "1", "0", "name", "type", "é", "content", "items", "x y"]
        n = rng.randrange(4)
        return "{%s}" % ", ".join('"%s": %s' % (rng.choice(keys), random_value(rng, depth + 1))
                                  for _ in range(n))
    return "[%s]" % ", ".join(random_value(rng, depth + 1) for _ in range(rng.randrange(4)))


def random_text(rng):
    pieces = ["hello", " ", "\n", "\t", "</think>", "<think>", "{{ x }}", "{%", "'", '"', "\\",
              "\u00e9", "\u4f60\u597d", "\U0001F600", "\u2028", "\u00a0", "\u00df", "\u0130",
              "<tool_call>", "  ", "A", "z", "\r\n", "\u3000", "\x1c"]
    return "".join(rng.choice(pieces) for _ in range(rng.randrange(6)))


def random_message(rng, role):
    content = json.dumps(random_text(rng), ensure_ascii=False)
    if role == "assistant":
        extra = ""
        if rng.random() < 0.4:
            extra += ', "reasoning_content": %s' % json.dumps(random_text(rng))
        if rng.random() < 0.4:
            calls = ", ".join(call("c%d" % i, rng.choice(["get_weather", "search"]),
                                   "{%s}" % ", ".join('"%s": %s' % (k, random_value(rng, 1))
                                                      for k in rng.sample(["city", "query", "1", "0", "n"],
                                                                          rng.randrange(1, 3))))
                              for i in range(rng.randrange(1, 3)))
            extra += ', "tool_calls": [%s]' % calls
            if rng.random() < 0.5:
                content = "null"
        return '{"role": "assistant", "content": %s%s}' % (content, extra)
    if role == "tool":
        return '{"role": "tool", "tool_call_id": "c0", "content": %s}' % content
    return '{"role": "%s", "content": %s}' % (role, content)


def random_contexts(n, seed):
    import random
    rng = random.Random(seed)
    out = {}
    for i in range(n):
        msgs = []
        if rng.random() < 0.6:
            msgs.append(random_message(rng, rng.choice(["system", "developer"])))
        for _ in range(rng.randrange(1, 4)):
            msgs.append(random_message(rng, "user"))
            msgs.append(random_message(rng, "assistant"))
            if rng.random() < 0.3:
                msgs.append(random_message(rng, "tool"))
        if rng.random() < 0.7:
            msgs.pop()
        extra = ""
        for k in ("enable_thinking", "thinking"):
            if rng.random() < 0.4:
                extra += ', "%s": %s' % (k, rng.choice(["true", "false"]))
        out["random%d" % i] = conv(*msgs, tools=TOOLS if rng.random() < 0.5 else "null",
                                   agp=rng.choice(["true", "false"]), extra=extra)
    return out


def run(cmd):
    subprocess.run(cmd, check=True)


def corpus_jobs(corpus_path):
    with open(corpus_path, encoding="utf-8") as f:
        corpus = json.load(f)
    templates, seen = {}, set()
    for name in sorted(corpus):
        if corpus[name] not in seen:
            seen.add(corpus[name])
            templates[name] = corpus[name]
    return templates, CONTEXTS, [[t, c] for t in templates for c in CONTEXTS]


def case_jobs(cases):
    names = [c[0] for c in cases]
    if len(set(names)) != len(names):
        sys.exit("compare.py: duplicate case names")
    templates = {c[0]: c[1] for c in cases}
    contexts = {c[0]: c[2] for c in cases}
    return templates, contexts, [[n, n] for n in names]


def main():
    driver = sys.argv[1]
    min_percent = float(sys.argv[3]) if len(sys.argv) > 3 else 90.0
    sys.path.insert(0, HERE)
    if sys.argv[2] == "--micro":
        import micro
        templates, contexts, jobs = case_jobs(micro.CASES)
    elif sys.argv[2] == "--exprs":
        import exprs
        templates, contexts, jobs = case_jobs(exprs.cases(int(sys.argv[4]), int(sys.argv[5])))
    elif sys.argv[2] == "--fmts":
        import fmtcases
        templates, contexts, jobs = case_jobs(fmtcases.cases(int(sys.argv[4]), int(sys.argv[5])))
    else:
        templates, contexts, jobs = corpus_jobs(sys.argv[2])
        if len(sys.argv) > 5 and sys.argv[4] == "--random":
            contexts = dict(contexts, **random_contexts(int(sys.argv[5]), int(sys.argv[6])))
            jobs = [[t, c] for t in templates for c in contexts]
    for name, text in contexts.items():
        try:
            json.loads(text)
        except ValueError as e:
            sys.exit("compare.py: context %s is not JSON: %s" % (name, e))
    spec = {"date": "2024-07-26T12:00:00", "templates": templates, "contexts": contexts, "jobs": jobs}
    with tempfile.TemporaryDirectory() as tmp:
        jobs_path = os.path.join(tmp, "jobs.json")
        with open(jobs_path, "w", encoding="utf-8") as f:
            json.dump(spec, f, ensure_ascii=False)
        run(["/usr/bin/python3", os.path.join(HERE, "render_py.py"), jobs_path, os.path.join(tmp, "py.json")])
        run([driver, jobs_path, os.path.join(tmp, "c.json")])
        with open(os.path.join(tmp, "py.json"), encoding="utf-8") as f:
            py = json.load(f)
        with open(os.path.join(tmp, "c.json"), encoding="utf-8") as f:
            c = json.load(f)
    counts = {"py_ok": 0, "same": 0, "differ": 0, "refused": 0, "rejected_but_py_ok": 0,
              "py_raises": 0, "py_timeouts": 0, "both_reject": 0, "c_renders_py_raises": 0, "c_refuses_py_raises": 0}
    refusals = {}
    format_differs = set()
    for (tname, cname), p, n in zip(jobs, py, c):
        if "openai" in n and n["openai"] != p["openai"] and tname not in format_differs:
            format_differs.add(tname)
            print("CONTENT FORMAT %s: python says %s, needle %s" % (tname, p["openai"], n["openai"]))
        where = tname if tname == cname else "%s × %s" % (tname, cname)
        if "timeout" in p:
            counts["py_timeouts"] += 1
        elif "ok" in p:
            counts["py_ok"] += 1
            if "ok" in n:
                if n["ok"] == p["ok"]:
                    counts["same"] += 1
                else:
                    counts["differ"] += 1
                    i = next((k for k in range(min(len(p["ok"]), len(n["ok"])))
                              if p["ok"][k] != n["ok"][k]), min(len(p["ok"]), len(n["ok"])))
                    print("DIFFERS %s at %d: python %r needle %r" % (where, i, p["ok"][max(i - 20, 0):i + 40],
                                                                    n["ok"][max(i - 20, 0):i + 40]))
                if tname == cname:
                    print("  template: %r" % templates[tname])
            elif "reject" in n:
                counts["rejected_but_py_ok"] += 1
                print("REJECTED %s: %s" % (where, n["reject"]))
                if tname == cname:
                    print("  template: %r" % templates[tname])
            else:
                counts["refused"] += 1
                key = n["refuse"].split(" (template")[0]
                refusals[key] = refusals.get(key, 0) + 1
                if tname == cname and not tname.startswith("expr"):
                    print("REFUSED %s: %s" % (where, n["refuse"]))
        else:
            counts["py_raises"] += 1
            if "ok" in n:
                counts["c_renders_py_raises"] += 1
                print("RENDERS %s where Python raises %s" % (where, p["err"]))
                if tname == cname:
                    print("  template: %r" % templates[tname])
            elif "reject" in n:
                counts["both_reject"] += 1
            else:
                counts["c_refuses_py_raises"] += 1
    for k, v in sorted(refusals.items(), key=lambda kv: -kv[1]):
        print("refused %4d: %s" % (v, k))
    pct = 100.0 * counts["same"] / max(counts["py_ok"], 1)
    print("templates %d, contexts %d, renders %d" % (len(templates), len(contexts), len(jobs)))
    print("python completes %d: identical %d (%.1f%%), differ %d, needle refuses %d, needle rejects %d"
          % (counts["py_ok"], counts["same"], pct, counts["differ"], counts["refused"],
             counts["rejected_but_py_ok"]))
    print("python raises %d: needle rejects %d, refuses %d, renders %d%s"
          % (counts["py_raises"], counts["both_reject"], counts["c_refuses_py_raises"],
             counts["c_renders_py_raises"],
             "; python timed out on %d" % counts["py_timeouts"] if counts["py_timeouts"] else ""))
    n_openai = len({t for (t, _), p in zip(jobs, py) if p["openai"]})
    print("content format: %d of %d templates \"openai\", needle disagrees on %d"
          % (n_openai, len(templates), len(format_differs)))
    bad = counts["differ"] or counts["c_renders_py_raises"] or pct < min_percent or format_differs
    sys.exit(1 if bad else 0)


main()
