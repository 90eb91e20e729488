#!/usr/bin/python3
"""The oracle: Python jinja2 configured the way transformers' chat-template
code configures it (utils/chat_template_utils.py): an immutable sandbox with
trim_blocks, lstrip_blocks and the loop-controls extension, a tojson filter
that is json.dumps without HTML escaping, and the raise_exception and
strftime_now globals. {% generation %} is accepted and renders its body, as
transformers' AssistantTracker does when no assistant mask is asked for.

Usage: render_py.py JOBS.json OUT.json
JOBS.json: {"date": "YYYY-MM-DDTHH:MM:SS", "templates": {NAME: TEXT},
            "contexts": {NAME: JSON-TEXT}, "jobs": [[TEMPLATE, CONTEXT], ...]}
Each context is a JSON object of template variables, read with json.loads so
that numbers and key order are Python's. OUT.json gets one entry per job:
{"ok": RENDERED} or {"err": "ExceptionType: message"}.
"""
import datetime
import json
import sys

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
        return now.strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    now = datetime.datetime.fromisoformat(spec.get("date", "2024-07-26T12:00:00"))
    env = make_env(now)
    compiled = {}
    results = []
    for tname, cname in spec["jobs"]:
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
            results.append({"ok": t.render(**ctx)})
        except Exception as e:
            results.append({"err": "%s: %s" % (type(e).__name__, e)})
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(results, f, ensure_ascii=False)


main()
