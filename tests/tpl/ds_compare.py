"""needle's DeepSeek V3.2 / V4 / V4.1 prompts against the independent model in
ds_oracle.py, over contexts x servers x thinking switches x reasoning
efforts, plus literal expectations taken from the cases of SGLang's V4.1
encoder unit test (test_encoding_dsv41.py), which check both.
Usage: python3 tests/tpl/ds_compare.py NEEDLE_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile

import ds_oracle as o

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def descriptor(name):
    with open(os.path.join(ROOT, "fixtures", "templates", name + ".json"), encoding="utf-8") as f:
        return json.load(f)


o.V32_TOOLS = descriptor("deepseek-v3.2")["tools_template"]
for v41, name in ((False, "deepseek-v4"), (True, "deepseek-v4.1")):
    d = descriptor(name)
    o.V4_TEXT[v41] = {"tools": d["tools_template"], "effort": d["effort_template"]}

TOOL = {"type": "function", "function": {"name": "lookup", "description": "Look up a value",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"},
                                                        "limit": {"type": "integer"}}}}}
BARE_TOOL = {"type": "function", "function": {"name": "now"}}


def call(cid, name, args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


U = lambda t: {"role": "user", "content": t}
A = lambda t, r=None: dict({"role": "assistant", "content": t}, **({"reasoning_content": r} if r else {}))
S = lambda t: {"role": "system", "content": t}

CONTEXTS = {
    "user": ([U("How many r in strawberry?")], None),
    "system_user": ([S("You are terse."), U("Hi")], None),
    "multi_turn": ([U("1+1=?"), A("2", "easy"), U("2+2=?")], None),
    "history_last_assistant": ([U("q"), A("a", "r")], None),
    "developer": ([S("sys"), {"role": "developer", "content": "be exact"}, U("q"), A("a", "r"), U("q2")], None),
    "tools_system": ([S("You help."), U("Find x")], [TOOL, BARE_TOOL]),
    "tools_no_system": ([U("Find x")], [TOOL]),
    "tool_round": ([S("s"), U("weather?"),
                    {"role": "assistant", "content": "", "reasoning_content": "need tools",
                     "tool_calls": [call("c1", "lookup", '{"query": "Lisbon", "limit": 2}'),
                                    call("c2", "lookup", '{"query": "Porto", "n": [1.5, null, true]}')]},
                    {"role": "tool", "tool_call_id": "c2", "content": "18 C"},
                    {"role": "tool", "tool_call_id": "c1", "content": "21 C"}], [TOOL]),
    "tool_then_user": ([U("go"), {"role": "assistant", "content": "",
                                  "tool_calls": [call("k", "now", "{}")]},
                        {"role": "tool", "tool_call_id": "k", "content": "noon"}, U("thanks"),
                        A("ok", "done")], None),
    "parts": ([{"role": "user", "content": [{"type": "text", "text": "part one"},
                                            {"type": "text", "text": "part two"}]}], None),
    "unicode": ([S("Réponds en français 🎯"), U("你好, ｜DSML｜ is plain text here")], None),
    "two_users": ([U("a"), U("b")], None),
    "mid_system": ([S("sys"), U("q1"), A("a1", "r1"), S("mid sys")], None),
    "task": ([dict(U("classify me"), task="query")], None),
    "task_action": ([dict(U("act"), task="action")], None),
    "image": ([{"role": "user", "content": [{"type": "text", "text": "inspect"},
                                            {"type": "image_url", "image_url": {"url": "/a.png"}},
                                            {"type": "text", "text": "and"}]}], None),
    "empty_developer": ([{"role": "developer", "content": ""}, U("q")], None),
    "bad_args": ([U("q"), {"role": "assistant", "content": "", "tool_calls": [call("x", "f", '"scalar"')]},
                  {"role": "tool", "tool_call_id": "x", "content": "r"}], None),
}
# (chat_template_kwargs, reasoning_effort) pairs: each switch alone, each
# effort alone, and an effort against an explicit switch.
MODES = [(None, None), ({"thinking": True}, None), ({"thinking": False}, None),
         ({"enable_thinking": True}, None), (None, "low"), (None, "high"), (None, "xhigh"),
         (None, "max"), (None, "none"), ({"thinking": False}, "max"), ({"thinking": True}, "low"),
         ({"thinking": True}, "none")]

# From SGLang's test_encoding_dsv41.py: encode_messages calls with their
# asserted results (the encoder alone: thinking mode and effort given
# directly, which needle reaches through vLLM's kwargs; vLLM turns any
# effort but "none" into enable_thinking=true unless the request sets it).
EFFORT_PREFIX = o.SYSTEM + "Reasoning Effort: %d (range 1-100, the higher the value, the more thorough the reasoning)\n\n"
FIXED = [
    ("v41 effort default", [U("question")], None, {"thinking": True}, None,
     o.BOS + EFFORT_PREFIX % 50 + "<｜User｜>question<｜Assistant｜><think>"),
] + [
    ("v41 effort " + e, [U("question")], None, {"thinking": True}, e,
     o.BOS + EFFORT_PREFIX % b + "<｜User｜>question<｜Assistant｜><think>")
    for e, b in (("low", 25), ("high", 50), ("xhigh", 75), ("max", 100))
] + [
    ("v41 chat no effort, no system token", [U("hello")], None,
     {"thinking": False, "enable_thinking": False}, "max",
     o.BOS + "<｜User｜>hello<｜Assistant｜></think>"),
    ("v41 leading system token", [S("You are a helpful assistant."), U("hello")], None, {"thinking": False}, None,
     o.BOS + o.SYSTEM + "You are a helpful assistant.<｜User｜>hello<｜Assistant｜></think>"),
    ("v41 drop thinking", [U("q1"), A("a1", "r1"), U("q2")], None, {"thinking": True}, None,
     o.BOS + EFFORT_PREFIX % 50 + "<｜User｜>q1<｜Assistant｜></think>a1<｜end▁of▁sentence｜>"
     "<｜User｜>q2<｜Assistant｜><think>"),
    ("v41 task token", [dict(U("classify me"), task="query")], None, {"thinking": False}, None,
     o.BOS + "<｜User｜>classify me<｜query｜>"),
    ("v41 image placeholders", [{"role": "user", "content": [
        {"type": "text", "text": "inspect"}, {"type": "image_url", "image_url": {"url": "/a.png"}},
        {"type": "text", "text": "and"}, {"type": "image_url", "image_url": {"url": "/b.png"}}]}],
     None, {"thinking": False}, None,
     o.BOS + "<｜User｜>inspect\n\n<｜deepseek_image｜>\n\nand\n\n<｜deepseek_image｜><｜Assistant｜></think>"),
    ("v41 assistant tool call (as the unit test's completion)",
     [U("question"), {"role": "assistant", "reasoning_content": "  reason  ", "content": "summary",
                      "tool_calls": [{"type": "function", "function": {
                          "name": "lookup", "arguments": '{"query":"value","limit":2}'}}]}],
     None, {"thinking": True}, None,
     o.BOS + EFFORT_PREFIX % 50 + "<｜User｜>question<｜Assistant｜><think>"
     "  reason  </think>summary\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"lookup\">\n"
     "<｜DSML｜ parameter name=\"query\" string=\"true\">value</｜DSML｜ parameter>\n"
     "<｜DSML｜ parameter name=\"limit\" string=\"false\">2</｜DSML｜ parameter>\n"
     "</｜DSML｜ invoke>\n</｜DSML｜ calls><｜end▁of▁sentence｜>"),
]

# DeepSeek V4 tool-call history, hand-written from encoding_dsv4.py as vLLM
# runs it (parsed arguments printed as DSML parameters, floats as json.dumps
# prints them) and refused for SGLang, whose releases print parsed arguments
# differently: (name, server, messages, kwargs, prompt or None for exit 2).
V4_CALL = [U("q"), {"role": "assistant", "content": "", "reasoning_content": "r1",
                    "tool_calls": [call("x", "get", '{"city": "Oslo", "n": 2, "lat": 59.0, "tags": ["a"]}')]},
           {"role": "tool", "tool_call_id": "x", "content": "r"}]
V4_DSML = ("\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get\">\n"
           "<｜DSML｜parameter name=\"city\" string=\"true\">Oslo</｜DSML｜parameter>\n"
           "<｜DSML｜parameter name=\"n\" string=\"false\">2</｜DSML｜parameter>\n"
           "<｜DSML｜parameter name=\"lat\" string=\"false\">59.0</｜DSML｜parameter>\n"
           "<｜DSML｜parameter name=\"tags\" string=\"false\">[\"a\"]</｜DSML｜parameter>\n"
           "</｜DSML｜invoke>\n</｜DSML｜tool_calls>")
FIXED_V4 = [
    ("v4 vllm tool call, chat", "vllm", V4_CALL, {"thinking": False},
     o.BOS + "<｜User｜>q<｜Assistant｜></think>" + V4_DSML + o.EOS +
     "<｜User｜><tool_result>r</tool_result><｜Assistant｜></think>"),
    ("v4 vllm tool call, thinking drops the earlier reasoning", "vllm", V4_CALL, None,
     o.BOS + "<｜User｜>q<｜Assistant｜></think>" + V4_DSML + o.EOS +
     "<｜User｜><tool_result>r</tool_result><｜Assistant｜><think>"),
    ("v4 sglang tool call is refused", "sglang", V4_CALL, {"thinking": False}, None),
    ("v4 vllm arguments not an object", "vllm",
     [U("q"), {"role": "assistant", "content": "", "tool_calls": [call("x", "get", "[1, 2]")]}],
     {"thinking": False}, None),
]


def needle_render(needle, tmp, template, server, messages, tools, kwargs, effort):
    mf = os.path.join(tmp, "m.json")
    with open(mf, "w", encoding="utf-8") as f:
        json.dump(messages, f, ensure_ascii=False)
    args = [needle, "count", "--template", template, "--server", server, "--messages", mf, "--print-prompt"]
    if tools:
        tf = os.path.join(tmp, "t.json")
        with open(tf, "w", encoding="utf-8") as f:
            json.dump(tools, f, ensure_ascii=False)
        args += ["--tools", tf]
    if kwargs is not None:
        args += ["--kwargs", json.dumps(kwargs)]
    if effort is not None:
        args += ["--reasoning-effort", effort]
    r = subprocess.run(args, capture_output=True)
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8")


def compare(needle, tmp):
    compared = refused = failed = 0
    for template in ("deepseek-v3.2", "deepseek-v4", "deepseek-v4.1"):
        for server in ("vllm", "sglang"):
            for cname, (messages, tools) in CONTEXTS.items():
                for kwargs, effort in MODES:
                    try:
                        want, kind = o.oracle(template, server, messages, tools, kwargs, effort), None
                    except (o.Rejected, o.Unsupported) as x:
                        want, kind = None, type(x).__name__
                    st, got, err = needle_render(needle, tmp, template, server, messages, tools, kwargs, effort)
                    ok = (st == 0 and got == want) if kind is None else (st == 2 and not got and err.count("\n") == 1)
                    compared += kind is None
                    refused += kind is not None
                    if not ok:
                        failed += 1
                        if failed <= 8:
                            print("FAIL %s %s %s kwargs=%s effort=%s: exit %d %s" %
                                  (template, server, cname, kwargs, effort, st, err.strip()))
                            print("  oracle: %r" % (want if kind is None else kind))
                            print("  needle: %r" % got)
    return compared, refused, failed


def fixed(needle, tmp):
    failed = 0
    for name, messages, tools, kwargs, effort, want in FIXED:
        # a completion (ending with the assistant turn) is SGLang's: vLLM's
        # V4.1 releases end it differently and needle refuses there
        server = "sglang" if messages[-1]["role"] == "assistant" else "vllm"
        st, got, err = needle_render(needle, tmp, "deepseek-v4.1", server, messages, tools, kwargs, effort)
        if st != 0 or got != want:
            failed += 1
            print("FAIL fixed %s: exit %d %s\n  want:   %r\n  needle: %r" % (name, st, err.strip(), want, got))
        try:
            mine = o.oracle("deepseek-v4.1", server, messages, tools, kwargs, effort)
        except (o.Rejected, o.Unsupported) as x:
            mine = type(x).__name__
        if mine != want:
            failed += 1
            print("FAIL fixed %s: the oracle gives %r" % (name, mine))
    for name, server, messages, kwargs, want in FIXED_V4:
        st, got, err = needle_render(needle, tmp, "deepseek-v4", server, messages, None, kwargs, None)
        if (st, got) != ((0, want) if want is not None else (2, "")):
            failed += 1
            print("FAIL fixed %s: exit %d %s\n  want:   %r\n  needle: %r" % (name, st, err.strip(), want, got))
        try:
            mine = o.oracle("deepseek-v4", server, messages, None, kwargs, None)
        except (o.Rejected, o.Unsupported):
            mine = None
        if mine != want:
            failed += 1
            print("FAIL fixed %s: the oracle gives %r" % (name, mine))
    return failed


def main():
    needle = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        compared, refused, failed = compare(needle, tmp)
        failed_fixed = fixed(needle, tmp)
    print("%d DeepSeek encoder prompts compared with the oracle, %d refusals agreed, %d failed; "
          "%d fixed expectations, %d failed" % (compared, refused, failed, len(FIXED) + len(FIXED_V4),
                                                failed_fixed))
    sys.exit(1 if failed or failed_fixed else 0)


main()
