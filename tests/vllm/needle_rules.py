"""A vLLM that answers by rule, for make test-vllm.

Random weights never end a turn, so nothing graded could be proven on the real
engine. This logits processor (vLLM v1, loaded with
`--logits-processors needle_rules:RuleAnswers`, this folder on PYTHONPATH) reads
each new request's prompt, works out the answer by rule, and then lets exactly
one token through at every step: the answer's next token, then the end of the
turn. Everything after the logits is vLLM's own: sampling, detokenizing, the
reasoning parser, the tool-call parser, streaming, usage.

Two rules:
  - a needle document (needle gen haystack's question, "Requested projects:
    A, B." and the default question): the JSON object of each requested
    project's code, found in the document by the project's exact name;
  - a case of the suites named in NEEDLE_RULES_SUITES (paths, os.pathsep
    between them), keyed by its last user message: the answer its "expect"
    asks for (for a case graded by its own response_format alone, the
    schema's properties filled from the prompt's "name: value" pairs; a
    response_format's answer without whitespace, which the server's grammar
    may refuse). A tool case answers with its calls in the model's own format
    (Qwen3's <tool_call> blocks, DeepSeek V3's tool-call tokens), and once the
    prompt holds every tool result, with a sentence holding final_contains.

A request that asks to ignore the end of the turn (ignore_eos: fixed-length
load and audit requests), or that no rule answers, is left alone.

NEEDLE_RULES_MODE=wrong plants one defect a case, each a kind needle must
catch: recall answers drop the middle requested project and swap the first
and last codes (a lone code is written backwards); JSON answers come fenced or wrapped in prose, in turn;
single tool calls get a wrong argument or are missing, in turn; parallel
calls lose their last call; a case that must call no tool calls one; a
multi-turn answer forgets its first recalled fact; structured-output cases
are left to the grammar. NEEDLE_RULES_REASONING=1
opens every answer with a <think> block (serve with --reasoning-parser).
"""
import json
import os
import re

CODE = r"[0-9A-Z]{3}-[0-9]{4}-[A-Z]{2}"
QUESTION = "Return only a JSON object mapping each requested project name to its access_code."
ASKED = re.compile(r"Requested projects: ([^\n]*)\.\n" + re.escape(QUESTION))


def _text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _json(value):
    return json.dumps(value, ensure_ascii=False)


def _mutated(args):
    """The arguments with their first string (else number) value changed."""
    out = dict(args)
    for k, v in out.items():
        if isinstance(v, str):
            out[k] = v[::-1] if v[::-1] != v else v + "x"
            return out
    for k, v in out.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = v + 1
            return out
    return out


class Case:
    """One suite case's answers: `calls` (name, arguments) to make first, the
    tool results that end that stage, and `text`, the content after them;
    `grammar` when the server holds the answer to a response_format (no
    whitespace the grammar may refuse)."""

    def __init__(self, key, calls, results, text, grammar=False):
        self.key, self.calls, self.results, self.text = key, calls, results, text
        self.grammar = grammar


def _case(c, wrong, turn):
    """The Case of suite case `c`, or None when no rule answers it; `turn`
    counts the cases of each kind so far (the wrong mode alternates on it)."""
    msgs = c.get("messages") or []
    users = [m for m in msgs if m.get("role") == "user"]
    x = c.get("expect") or {}
    if not users or c.get("kind") in ("image_order", "recall", "load") or "image_order" in x:
        return None
    key = _text(users[-1].get("content"))
    if "image_url" in _json(msgs) or not key:
        return None
    fmt = (c.get("request") or {}).get("response_format")
    if fmt and wrong:
        return None
    if fmt:
        schema = (fmt.get("json_schema") or {}).get("schema") or {}
        want = x["json"] if "json" in x else _filled(schema, key)
        return Case(key, [], [], json.dumps(want, ensure_ascii=False, separators=(",", ":")), True)
    calls = x.get("tool_calls") or ([dict(x["tool_call"], tool_result=x.get("tool_result"))]
                                    if x.get("tool_call") else [])
    if calls:
        results = [k.get("tool_result") for k in calls if k.get("tool_result")]
        made = [(k["name"], k.get("arguments", {})) for k in calls]
        text = "From the tool results: " + ", ".join(x.get("final_contains") or []) + "."
        if wrong:
            n = turn.setdefault("calls" if len(made) == 1 else "parallel", [0])
            n[0] += 1
            if len(made) > 1:
                made = made[:-1]
            elif n[0] % 2:
                made = [(made[0][0], _mutated(made[0][1]))]
            else:
                return Case(key, [], [], "I cannot look that up right now.")
        return Case(key, made, results, text)
    if "json" in x:
        want = x["json"]
        if wrong and x.get("no_tool_call") and c.get("tools"):
            t = c["tools"][0]["function"]["name"]
            return Case(key, [(t, {})], [], _json(want))
        if wrong and x.get("recall") and isinstance(want, dict):
            gone = x["recall"][0]["key"]
            return Case(key, [], [], _json({k: v for k, v in want.items() if k != gone}))
        if wrong:
            n = turn.setdefault("json", [0])
            n[0] += 1
            return Case(key, [], [], "```json\n" + _json(want) + "\n```" if n[0] % 2
                        else "Here is the JSON you asked for: " + _json(want))
        return Case(key, [], [], _json(want))
    if x.get("contains"):
        return Case(key, [], [], " ".join(x["contains"]))
    return None


def _filled(schema, text):
    """The object of `schema` whose properties take the values the prompt
    names ("name: value" pairs, ';' between them), integers where the
    property may be one."""
    said = {k: v.strip() for k, v in re.findall(r"(\w+): ([^;\n]+)", text)}
    out = {}
    for k, p in (schema.get("properties") or {}).items():
        if k not in said:
            continue
        types = p.get("type") if isinstance(p.get("type"), list) else [p.get("type")]
        out[k] = int(said[k]) if "integer" in types and said[k].lstrip("-").isdigit() else said[k]
    return out


class Rules:
    """The answer text for a prompt, by rule; `fmt` is "hermes" or
    "deepseek_v3" (the tool-call format), `think` opens answers with a
    reasoning block."""

    def __init__(self, suites, wrong, fmt, think):
        self.wrong, self.fmt, self.think = wrong, fmt, think
        self.cases = []
        turn = {}
        for path in suites:
            with open(path, encoding="utf-8") as f:
                s = json.load(f)
            for c in s.get("cases", []):
                k = _case(c, wrong, turn)
                if k:
                    self.cases.append(k)

    def _calls(self, calls):
        if self.fmt == "deepseek_v3":
            return ("<｜tool▁calls▁begin｜>" + "".join(
                "<｜tool▁call▁begin｜>function<｜tool▁sep｜>" + n + "\n```json\n" + _json(a) +
                "\n```<｜tool▁call▁end｜>" for n, a in calls) + "<｜tool▁calls▁end｜>")
        return "\n".join("<tool_call>\n" + _json({"name": n, "arguments": a}) + "\n</tool_call>"
                         for n, a in calls)

    def _recall(self, prompt):
        m = None
        for m in ASKED.finditer(prompt):
            pass
        if not m:
            return None
        doc = prompt[:m.start()]
        names = m.group(1).split(", ")
        found = {}
        for n in names:
            r = re.search(r"(?<![A-Za-z])" + re.escape(n) + r"(?![A-Za-z])[^.。\n]{0,80}?(" + CODE + ")", doc)
            found[n] = r.group(1) if r else ""
        if self.wrong and len(names) == 1:
            found[names[0]] = found[names[0]][::-1]
        elif self.wrong:
            a, b = names[0], names[-1]
            found[a], found[b] = found[b], found[a]
            if len(names) >= 3:
                del found[names[len(names) // 2]]
        return _json(found)

    def answer(self, prompt):
        """The answer's text for `prompt` (the decoded prompt), or None."""
        text, grammar = self._recall(prompt), False
        if text is None:
            best, at = None, -1
            for c in self.cases:
                i = prompt.rfind(c.key)
                if i > at or (i == at and best and len(c.key) > len(best.key)):
                    best, at = c, i
            if not best or at < 0:
                return None
            after = prompt[at + len(best.key):]
            if best.calls and not (best.results and all(r in after for r in best.results)):
                text = self._calls(best.calls)
            else:
                text = best.text
            grammar = best.grammar
        if self.think:
            # A grammar starts at the end of the reasoning and refuses the
            # blank line a model writes there otherwise.
            text = "<think>\nAnswering by rule.\n</think>" + ("" if grammar else "\n\n") + text
        return text


try:
    from vllm.v1.sample.logits_processor import LogitsProcessor, process_dict_updates
except ImportError:  # the rules alone, outside vLLM
    LogitsProcessor = None

if LogitsProcessor:
    class RuleAnswers(LogitsProcessor):
        """Forces each answered request's tokens, then the end of the turn."""

        def __init__(self, vllm_config, device, is_pin_memory):
            from transformers import AutoTokenizer

            self.tok = AutoTokenizer.from_pretrained(vllm_config.model_config.tokenizer)
            vocab = self.tok.get_vocab()
            fmt = "deepseek_v3" if "<｜tool▁calls▁begin｜>" in vocab else "hermes"
            suites = [p for p in os.environ.get("NEEDLE_RULES_SUITES", "").split(os.pathsep) if p]
            self.rules = Rules(suites, os.environ.get("NEEDLE_RULES_MODE") == "wrong", fmt,
                               os.environ.get("NEEDLE_RULES_REASONING") == "1")
            self.eos = self.tok.eos_token_id
            self.active = {}  # batch index -> (answer ids, the request's output ids)

        def is_argmax_invariant(self):
            return False

        def _plan(self, params, prompt_ids, output_ids):
            if params.ignore_eos or not prompt_ids:
                return None
            text = self.rules.answer(self.tok.decode(prompt_ids))
            if text is None:
                return None
            return self.tok.encode(text, add_special_tokens=False) + [self.eos], output_ids

        def update_state(self, batch_update):
            process_dict_updates(self.active, batch_update, self._plan)

        def apply(self, logits):
            for i, (ids, out) in self.active.items():
                t = ids[min(len(out), len(ids) - 1)]
                logits[i].fill_(float("-inf"))
                logits[i, t] = 0.0
            return logits
