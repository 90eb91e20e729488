#!/usr/bin/python3
"""The oracle: Python jinja2 configured the way transformers' chat-template
code configures it (utils/chat_template_utils.py): an immutable sandbox with
trim_blocks, lstrip_blocks and the loop-controls extension, a tojson filter
that is json.dumps without HTML escaping, and the raise_exception and
strftime_now globals. {% generation %} is accepted and renders its body, as
transformers' AssistantTracker does when no assistant mask is asked for.

Usage: render_py.py JOBS.json OUT.json
       render_py.py --serve
JOBS.json: {"date": "YYYY-MM-DDTHH:MM:SS", "templates": {NAME: TEXT},
            "contexts": {NAME: JSON-TEXT}, "jobs": [[TEMPLATE, CONTEXT], ...]}
Each context is a JSON object of template variables, read with json.loads so
that numbers and key order are Python's. OUT.json gets one entry per job:
{"ok": RENDERED}, {"err": "ExceptionType: message"} or {"timeout": ...} (a
render Python could not finish in 5 s), plus "openai": whether
vLLM's content-format detection (chat_utils.py _detect_content_format, as
restated in content_format below) calls the template "openai".

--serve is the reference server's renderer (tests/refserver/render.js): one
JSON request per line on standard input, {"template": TEXT, "context":
JSON-TEXT or null, "date": "YYYY-MM-DDTHH:MM:SS" or null (now)}, one answer
per line on standard output, in order: {"openai": 0|1} with "ok": RENDERED or
"err": "ExceptionType: message" when a context is given.
"""
import datetime
import json
import signal
import sys
import warnings

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class Generation(Extension):
    """{% generation %}...{% endgeneration %}: renders the body unchanged."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_keep"), [], [], body).set_lineno(lineno)

    def _keep(self, caller):
        return caller()


def make_env(now):
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                          separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return (now or datetime.datetime.now()).strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def accesses(node, var, key=None):
    """vLLM's _is_var_or_elems_access."""
    if isinstance(node, (nodes.Filter, nodes.Test)):
        return node.node is not None and accesses(node.node, var, key)
    if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Slice):
        return accesses(node.node, var, key)
    if key is None:
        return isinstance(node, nodes.Name) and node.ctx == "load" and node.name == var
    if isinstance(node, nodes.Getitem):
        return (isinstance(node.node, nodes.Name) and node.node.name == var
                and isinstance(node.arg, nodes.Const) and node.arg.value == key)
    if isinstance(node, nodes.Getattr):
        return isinstance(node.node, nodes.Name) and node.node.name == var and node.attr == key
    return False


def loop_targets(root, names, key=None):
    found = []
    for loop in root.find_all(nodes.For):
        if any(accesses(loop.iter, n, key) for n in names):
            if not isinstance(loop.target, nodes.Name):
                raise ValueError("tuple target")
            found.append(loop.target.name)
    return found


def content_format(env, text):
    """1 when vLLM would hand this template content as a list of parts."""
    try:
        root = env.parse(text)
        names, queue = ["messages"], ["messages"]
        while queue:
            var = queue.pop(0)
            for a in root.find_all(nodes.Assign):
                if accesses(a.node, var):
                    if not isinstance(a.target, nodes.Name):
                        raise ValueError("non-name target")
                    if a.target.name not in names:
                        names.append(a.target.name)
                        queue.append(a.target.name)
        return int(bool(loop_targets(root, loop_targets(root, names), "content")))
    except Exception:
        return 0


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout("render took more than 5 s")


def main():
    signal.signal(signal.SIGALRM, on_alarm)
    warnings.filterwarnings("ignore")  # compile-time SyntaxWarnings of odd test expressions
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    now = datetime.datetime.fromisoformat(spec.get("date", "2024-07-26T12:00:00"))
    env = make_env(now)
    compiled = {}
    results = []
    for tname, cname in spec["jobs"]:
        fmt = content_format(env, spec["templates"][tname])
        try:
            if tname not in compiled:
                try:
                    compiled[tname] = env.from_string(spec["templates"][tname])
                except Exception as e:  # a syntax error fails every job of it
                    compiled[tname] = e
            t = compiled[tname]
            if isinstance(t, Exception):
                raise t
            ctx = json.loads(spec["contexts"][cname])
            signal.alarm(5)
            try:
                results.append({"ok": t.render(**ctx), "openai": fmt})
            finally:
                signal.alarm(0)
        except Timeout as e:
            results.append({"timeout": str(e), "openai": fmt})
        except Exception as e:
            results.append({"err": "%s: %s" % (type(e).__name__, e), "openai": fmt})
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(results, f, ensure_ascii=False)


def serve():
    """The request loop of --serve; templates are compiled once per text."""
    envs, compiled = {}, {}
    for line in sys.stdin:
        req = json.loads(line)
        date = req.get("date")
        if date not in envs:
            now = datetime.datetime.fromisoformat(date) if date else None
            envs[date] = make_env(now)
        env = envs[date]
        text = req["template"]
        answer = {"openai": content_format(env, text)}
        if req.get("context") is not None:
            try:
                if (date, text) not in compiled:
                    compiled[(date, text)] = env.from_string(text)
                answer["ok"] = compiled[(date, text)].render(**json.loads(req["context"]))
            except Exception as e:
                answer["err"] = "%s: %s" % (type(e).__name__, e)
        sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        main()
