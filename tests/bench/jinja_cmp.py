#!/usr/bin/python3
"""The reference of the bench's jinja section (tests/bench/run.sh): Python
jinja2 rendering a model's own chat template the way transformers does it,
compiled once (Environment.from_string, then render only), against needle
rendering and counting the same conversation.

Usage:
  jinja_cmp.py gen N MEAN TEXT OUT.json
      N messages cut from the text file TEXT (a system message, then user and
      assistant turns of MEAN/3 to 5*MEAN/3 characters; every third assistant
      turn with a <think> block, every tenth a tool call with its tool
      answer), written as an OpenAI request's messages.
  jinja_cmp.py render TEMPLATE MESSAGES
      One whole process: imports, reading, compiling and one render; the
      prompt to standard output (its CPU is the whole-process reference).
  jinja_cmp.py cmp RUNS NEEDLE TOKENIZER TEMPLATE MESSAGES [BUILTIN]
      RUNS rounds side by side: needle count --template TEMPLATE --messages
      MESSAGES (a child process, its CPU from its rusage), then the same
      count with --template BUILTIN (a text one of needle's built-in
      renderers recognises, so no interpreter runs), then jinja2's render of
      the compiled template in this process (process_time around render
      alone). Prints one JSON object: needle_cpu_s, builtin_cpu_s,
      jinja2_render_cpu_s, jinja2_render_wall_s (lists), tokens, bytes,
      whether needle's --print-prompt equals jinja2's prompt, and whether the
      built-in renderer's prompt and count equal the interpreter's.

The context is vLLM's for a request without tools: messages as vLLM
prepares them (tool-call arguments parsed by json.loads), tools and
documents None, add_generation_prompt True. The environment is the oracle's
(tests/jinja/render_py.py: transformers' sandbox and globals).
"""
import json
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "jinja"))
from render_py import make_env  # noqa: E402


def gen(n, mean, text_path, out_path):
    with open(text_path, encoding="utf-8") as f:
        text = f.read()
    pos = 0
    msgs = [{"role": "system", "content": text[:600]}]

    def cut(i):
        nonlocal pos
        size = mean // 3 + (i * 7919) % (4 * mean // 3 + 1)
        if pos + size > len(text):
            pos = (pos + 4099) % 1000
        s = text[pos:pos + size]
        pos += size
        return s

    i = 1
    while len(msgs) < n:
        msgs.append({"role": "user", "content": cut(i)})
        k = len(msgs)
        if k % 20 == 0 and len(msgs) + 2 < n:
            args = json.dumps({"query": cut(k)[:80], "limit": k % 7, "exact": k % 2 == 0})
            msgs.append({"role": "assistant", "content": "",
                         "tool_calls": [{"id": "call_%d" % k, "type": "function",
                                         "function": {"name": "search", "arguments": args}}]})
            msgs.append({"role": "tool", "tool_call_id": "call_%d" % k, "content": cut(k + 1)})
        elif len(msgs) < n:
            body = cut(k)
            if k % 3 == 0:
                body = "<think>\n" + cut(k + 2)[:mean // 4] + "\n</think>\n\n" + body
            msgs.append({"role": "assistant", "content": body})
        i += 1
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(msgs[:n], f, ensure_ascii=False)


def prepared(messages_path):
    """The messages as vLLM hands them to the template."""
    with open(messages_path, encoding="utf-8") as f:
        msgs = json.load(f)
    for m in msgs:
        if m.get("content") is None:
            m["content"] = ""
        for c in m.get("tool_calls") or []:
            c["function"]["arguments"] = json.loads(c["function"]["arguments"])
    return msgs


def compiled(template_path):
    with open(template_path, encoding="utf-8") as f:
        return make_env(None).from_string(f.read())


def render(tpl, msgs):
    return tpl.render(messages=msgs, tools=None, documents=None, add_generation_prompt=True)


def child_cpu(argv):
    """Runs argv; its standard output and its CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(argv, check=True, stdout=subprocess.PIPE).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cmp(runs, needle, tokenizer, template, messages, builtin=None):
    tpl = compiled(template)
    msgs = prepared(messages)

    def count(text):
        return [needle, "count", "--tokenizer", tokenizer, "--template", text,
                "--messages", messages]
    prompt = render(tpl, msgs)
    printed, _ = child_cpu(count(template) + ["--print-prompt"])
    res = {"needle_cpu_s": [], "builtin_cpu_s": [], "jinja2_render_cpu_s": [],
           "jinja2_render_wall_s": [], "bytes": len(prompt.encode("utf-8")),
           "identical": printed == prompt.encode("utf-8")}
    if builtin:
        res["builtin_identical"] = child_cpu(count(builtin) + ["--print-prompt"])[0] == printed
    for _ in range(runs):
        out, cpu = child_cpu(count(template))
        res["needle_cpu_s"].append(round(cpu, 6))
        res["tokens"] = int(out)
        if builtin:
            out, cpu = child_cpu(count(builtin))
            res["builtin_cpu_s"].append(round(cpu, 6))
            res["builtin_identical"] = res["builtin_identical"] and int(out) == res["tokens"]
        c0, w0 = time.process_time(), time.perf_counter()
        render(tpl, msgs)
        c1, w1 = time.process_time(), time.perf_counter()
        res["jinja2_render_cpu_s"].append(round(c1 - c0, 6))
        res["jinja2_render_wall_s"].append(round(w1 - w0, 6))
    print(json.dumps(res))


def main(argv):
    if len(argv) == 6 and argv[1] == "gen":
        gen(int(argv[2]), int(argv[3]), argv[4], argv[5])
    elif len(argv) == 4 and argv[1] == "render":
        sys.stdout.write(render(compiled(argv[2]), prepared(argv[3])))
    elif len(argv) in (7, 8) and argv[1] == "cmp":
        cmp(int(argv[2]), *argv[3:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
