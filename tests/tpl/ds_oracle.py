"""An independent model of the DeepSeek V3.2, V4 and V4.1 prompt encoders and
of how vLLM and SGLang prepare a chat request for them, written for needle's
tests from reading the encoders (encoding_dsv32.py, encoding_dsv4.py,
encoding_dsv41.py) and the servers' wrappers (vLLM deepseek_v32 / v4 / v41
tokenizer modes, SGLang serving_chat). It shares no code with needle's C.

oracle(template, server, messages, tools, kwargs, effort) returns the prompt
string, or raises Rejected (the server answers 400) or Unsupported (needle
refuses on purpose: V4 tool-call history on SGLang, V4.1 prompts that end
with an assistant or a lone system message on vLLM).
"""
import copy
import json

BOS = "<｜begin▁of▁sentence｜>"
EOS = "<｜end▁of▁sentence｜>"
USER, ASSISTANT, SYSTEM = "<｜User｜>", "<｜Assistant｜>", "<｜System｜>"
OPEN, CLOSE = "<think>", "</think>"
DSML = "｜DSML｜"
IMAGE = "<｜deepseek_image｜>"
TASKS = {t: "<｜%s｜>" % t for t in ("action", "query", "authority", "domain", "title", "read_url")}


class Rejected(Exception):
    pass


class Unsupported(Exception):
    pass


def dumps(v):
    return json.dumps(v, ensure_ascii=False)


# ---- what the servers hand the encoders ------------------------------------

def fold_effort(server, kwargs, effort):
    """reasoning_effort sets thinking switches the request did not set."""
    kw = dict(kwargs or {})
    if effort is None:
        return kw
    on = effort != "none"
    if server == "sglang":
        kw.setdefault("thinking", on)
    kw.setdefault("enable_thinking", on)
    return kw


def text_of(content, server):
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts = []
    for part in content:
        kind = part.get("type")
        if server == "sglang":
            if kind == "text":
                texts.append(part["text"])
        elif kind in ("text", "input_text", "output_text"):
            texts.append(part["text"])
        else:
            raise Unsupported("media part for vLLM")
    return (" " if server == "sglang" else "\n").join(texts)


def function_of(tool, server):
    fn = tool["function"]
    if server == "sglang":
        return {"description": fn.get("description"), "name": fn["name"],
                "parameters": fn.get("parameters"), "strict": fn.get("strict", False)}
    out = {"name": fn["name"], "description": fn.get("description"), "parameters": fn.get("parameters")}
    out.update({k: v for k, v in fn.items() if k not in out})
    return out


def basic_messages(messages, server):
    out = []
    for m in messages:
        m = copy.deepcopy(m)
        m["content"] = text_of(m.get("content"), server)
        if "reasoning" in m and "reasoning_content" not in m:
            m["reasoning_content"] = m.pop("reasoning")
        out.append(m)
    return out


# ---- V3.2 -------------------------------------------------------------------

V32_TOOLS = None  # read from the shipped descriptor by the test driver


def v32_tools_text(fns):
    return "\n\n" + V32_TOOLS.replace("{{tool_schemas}}", "\n".join(dumps(f) for f in fns))


def v32_params(args):
    if not isinstance(args, dict):
        raise Rejected("arguments not an object")
    return "\n".join('<%sparameter name="%s" string="%s">%s</%sparameter>'
                     % (DSML, k, "true" if isinstance(v, str) else "false",
                        v if isinstance(v, str) else dumps(v), DSML) for k, v in args.items())


def v32_assistant(m, idx, last, thinking):
    calls = m.get("tool_calls") or []
    text = ""
    if thinking and idx > last:
        if not (m.get("reasoning_content") or calls):
            raise Rejected("assistant after the last user turn needs reasoning or calls")
        text = (m.get("reasoning_content") or "") + CLOSE
    text += m.get("content") or ""
    if calls:
        invokes = ['<%sinvoke name="%s">\n%s\n</%sinvoke>'
                   % (DSML, c["function"]["name"], v32_params(json.loads(c["function"]["arguments"])), DSML)
                   for c in calls]
        text += "\n\n<%sfunction_calls>\n%s\n</%sfunction_calls>" % (DSML, "\n".join(invokes), DSML)
    return text + EOS


def v32_tool(msgs, idx, last, thinking):
    start = idx
    while start > 0 and msgs[start - 1]["role"] == "tool":
        start -= 1
    if start == 0 or msgs[start - 1]["role"] != "assistant":
        raise Rejected("tool result without a call")
    order, calls = idx - start + 1, msgs[start - 1].get("tool_calls") or []
    if len(calls) < order:
        raise Rejected("more results than calls")
    text = "\n\n<function_results>" if order == 1 else ""
    text += "\n<result>%s</result>" % msgs[idx]["content"]
    if order == len(calls):
        text += "\n</function_results>\n\n" + (OPEN if thinking and idx >= last else CLOSE)
    return text


def v32_encode(msgs, thinking, drop, tool_server):
    last = max([i for i, m in enumerate(msgs) if m["role"] in ("user", "developer")], default=-1)
    if thinking and drop:
        kept = []
        for i, m in enumerate(msgs):
            if m["role"] in ("user", "system", "tool") or i >= last:
                kept.append(m)
            elif m["role"] == "assistant":
                m = dict(m)
                m.pop("reasoning_content", None)
                kept.append(m)
        msgs = kept
        last = max([i for i, m in enumerate(msgs) if m["role"] in ("user", "developer")], default=-1)
    out = BOS
    for i, m in enumerate(msgs):
        role = m["role"]
        if role == "system":
            out += m["content"]
            if m.get("tools"):
                out += v32_tools_text([function_of(t, tool_server) for t in m["tools"]])
        elif role in ("user", "developer"):
            if role == "developer" and not m["content"]:
                raise Rejected("empty developer message")
            body = ("\n\n# The user's message is: " if role == "developer" else "") + m["content"]
            out += USER + body + ASSISTANT + (OPEN if thinking and i == last else CLOSE)
        elif role == "tool":
            out += v32_tool(msgs, i, last, thinking)
        elif role == "assistant":
            out += v32_assistant(m, i, last, thinking)
        else:
            raise Rejected("unknown role")
    return out


def v32(server, messages, tools, kwargs, effort):
    kw = fold_effort(server, kwargs, effort)
    msgs = basic_messages(messages, server)
    if server == "sglang":
        thinking = bool(kw.get("thinking"))
        if msgs[0]["role"] != "system":
            msgs.insert(0, {"role": "system", "content": ""})
        if tools:
            msgs[0]["tools"] = tools
        return v32_encode(msgs, thinking, True, server)
    thinking = bool(kw.get("thinking") or kw.get("enable_thinking"))
    if tools:
        msgs.insert(0, {"role": "system", "content": "", "tools": tools})
    return v32_encode(msgs, thinking, msgs[-1]["role"] == "user", server)


# ---- V4 and V4.1 --------------------------------------------------------------

V4_TEXT = {}  # "tools", "effort" per version, read from the descriptors


def v41_parts(content):
    if isinstance(content, str):
        if IMAGE in content:
            raise Rejected("placeholder in text")
        return content
    pieces = []
    for part in content or []:
        kind = part.get("type")
        if kind == "text":
            if IMAGE in part.get("text", ""):
                raise Rejected("placeholder in text")
            pieces.append(part.get("text", ""))
        elif kind in ("image_url", "input_image", "image_pil", "image"):
            pieces.append(IMAGE)
        else:
            raise Rejected("unsupported part")
    return "\n\n".join(pieces)


class V4:
    def __init__(self, v41, server):
        self.v41, self.server = v41, server
        self.calls_tag, self.invoke_tag, self.param_tag = (
            (" calls", " invoke", " parameter") if v41 else ("tool_calls", "invoke", "parameter"))

    def is_user(self, msgs, i):
        role = msgs[i]["role"]
        return role in ("user", "developer") or (self.v41 and role == "system" and i > 0)

    def last_user(self, msgs):
        return max([i for i in range(len(msgs)) if self.is_user(msgs, i)], default=-1)

    def merge(self, msgs):
        """Tool results and user texts pile into one user turn."""
        out = []
        for m in msgs:
            role = m["role"]
            if role == "tool":
                block = {"tool": True, "text": m["content"], "id": m.get("tool_call_id", "")}
                if out and out[-1]["role"] == "user":
                    out[-1]["blocks"].append(block)
                else:
                    out.append({"role": "user", "blocks": [block]})
            elif role == "user":
                block = {"tool": False, "text": m["content"]}
                if out and out[-1]["role"] == "user" and out[-1].get("task") is None:
                    out[-1]["blocks"].append(block)
                else:
                    turn = {"role": "user", "blocks": [block]}
                    if "task" in m:
                        turn["task"] = m["task"]
                    out.append(turn)
            else:
                out.append(m)
        order = {}
        for m in out:
            if m["role"] == "assistant" and m.get("tool_calls"):
                order = {c["id"]: k for k, c in enumerate(m["tool_calls"]) if c.get("id")}
            elif m["role"] == "user":
                results = [b for b in m["blocks"] if b["tool"]]
                if len(results) > 1 and order:
                    results.sort(key=lambda b: order.get(b["id"], 0))
                    it = iter(results)
                    m["blocks"] = [next(it) if b["tool"] else b for b in m["blocks"]]
        return out

    def tools_text(self, tools):
        fns = [function_of(t, self.server) for t in tools]
        return "\n\n" + V4_TEXT[self.v41]["tools"].replace("{{tool_schemas}}", "\n".join(dumps(f) for f in fns))

    def calls(self, m):
        if not self.v41 and self.server == "sglang":
            raise Unsupported("V4 tool-call history on SGLang (releases differ)")
        invokes = []
        for c in m["tool_calls"]:
            args = c["function"]["arguments"]
            if not self.v41:
                # vLLM's _postprocess_messages parses the string (null, "" or
                # bad JSON give {}); its V4 encoder copy takes a dict as is
                try:
                    args = json.loads(args) if isinstance(args, str) and args else args or {}
                except ValueError:
                    args = {}
            elif isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    raise Rejected("arguments not JSON")
            if not isinstance(args, dict):
                raise Rejected("arguments not an object")
            params = "\n".join('<%s%s name="%s" string="%s">%s</%s%s>'
                               % (DSML, self.param_tag, k, "true" if isinstance(v, str) else "false",
                                  v if isinstance(v, str) else dumps(v), DSML, self.param_tag)
                               for k, v in args.items())
            invokes.append('<%s%s name="%s">\n%s\n</%s%s>' % (DSML, self.invoke_tag, c["function"]["name"],
                                                                params, DSML, self.invoke_tag))
        return "\n\n<%s%s>\n%s\n</%s%s>" % (DSML, self.calls_tag, "\n".join(invokes), DSML, self.calls_tag)

    def head(self, msgs, i, thinking, effort):
        text = ""
        if i == 0 and thinking:
            if self.v41:
                text = V4_TEXT[True]["effort"].replace("{{budget}}", str(effort))
            elif effort == "max":
                text = V4_TEXT[False]["effort"]
        if self.v41 and ((i == 0 and (text or msgs[0]["role"] == "system")) or
                         (i > 0 and msgs[i]["role"] == "system")):
            text = SYSTEM + text
        return text

    def message(self, msgs, i, thinking, drop, effort):
        m, last = msgs[i], self.last_user(msgs)
        role = m["role"]
        out = self.head(msgs, i, thinking, effort)
        if role in ("system", "developer"):
            if role == "developer":
                if not m.get("content"):
                    raise Rejected("empty developer")
                out += USER
            out += m.get("content") or ""
            if m.get("tools"):
                out += self.tools_text(m["tools"])
        elif role == "user":
            out += USER + "\n\n".join("<tool_result>%s</tool_result>" % b["text"] if b["tool"] else b["text"]
                                      for b in m["blocks"])
        elif role == "assistant":
            after_task = i > 0 and msgs[i - 1].get("task") is not None
            if thinking and not after_task and (not drop or i > last):
                out += (m.get("reasoning_content") or "") + CLOSE
            out += m.get("content") or ""
            if m.get("tool_calls"):
                out += self.calls(m)
            out += EOS
        else:
            raise Rejected("unknown role")
        if i + 1 < len(msgs) and msgs[i + 1]["role"] != "assistant":
            return out
        task = m.get("task")
        if task is not None:
            if task not in TASKS:
                raise Rejected("unknown task")
            if task == "action":
                return out + ASSISTANT + (OPEN if thinking else CLOSE) + TASKS[task]
            return out + TASKS[task]
        if self.is_user(msgs, i):
            out += ASSISTANT + (OPEN if thinking and (not drop or i >= last) else CLOSE)
        return out

    def encode(self, msgs, thinking, effort):
        msgs = self.merge(msgs)
        drop = not any(m.get("tools") for m in msgs)
        if thinking and drop:
            last = self.last_user(msgs)
            kept = []
            for i, m in enumerate(msgs):
                if i >= last or m["role"] in ("user", "system"):
                    kept.append(m)
                elif m["role"] == "assistant":
                    kept.append({k: v for k, v in m.items() if k != "reasoning_content"})
            msgs = kept
        out = BOS + "".join(self.message(msgs, i, thinking, drop, effort) for i in range(len(msgs)))
        # vLLM's V4.1 encoder since PR 57882 (main at 21f4c25c; not at
        # 8ec00ec2) adds the generation prompt after a final assistant
        # message or a lone system message too; needle cannot tell the
        # server's release, so it refuses there
        last = msgs[-1] if msgs else {}
        if self.v41 and self.server == "vllm" and last.get("task") is None and (
                last.get("role") == "assistant" or (last.get("role") == "system" and len(msgs) == 1)):
            raise Unsupported("vLLM's V4.1 releases end this prompt differently")
        return out


V41_BUDGET = {"low": 25, "high": 50, "xhigh": 75, "max": 100}


def v4_family(v41, server, messages, tools, kwargs, effort):
    kw = fold_effort(server, kwargs, effort)
    if v41:
        msgs = []
        for m in messages:
            m = copy.deepcopy(m)
            m["content"] = v41_parts(m.get("content"))
            if "reasoning" in m and "reasoning_content" not in m:
                m["reasoning_content"] = m.pop("reasoning")
            msgs.append(m)
    else:
        msgs = basic_messages(messages, server)
    if server == "sglang":
        thinking = kw.get("thinking") is True
    else:
        given = [kw[k] for k in ("thinking", "enable_thinking") if kw.get(k) is not None]
        thinking = not given or any(given)
    eff = kw.get("reasoning_effort", effort) if effort is None else effort
    if v41:
        if eff == "none":
            thinking = thinking and server == "sglang"
            eff = None
        if eff is None:
            eff = "high"
        if isinstance(eff, str):
            if eff not in V41_BUDGET:
                raise Rejected("bad V4.1 effort")
            eff = V41_BUDGET[eff]
        elif not (isinstance(eff, int) and not isinstance(eff, bool) and 1 <= eff <= 100):
            raise Rejected("bad V4.1 effort")
    elif server == "vllm" and isinstance(eff, str):
        if eff == "none":
            thinking = False
        elif eff in ("low", "minimal", "medium"):
            raise Rejected("V4 preview encoder")
    if not v41 and server == "sglang" and msgs[0]["role"] != "system":
        msgs.insert(0, {"role": "system", "content": ""})
    if tools:
        head = None
        if msgs[0]["role"] == "system" or (not v41 and server == "vllm" and msgs[0]["role"] == "developer"):
            head = msgs[0]
        elif v41 and server == "vllm":
            head = next((m for m in msgs if m["role"] == "system"), None)
        if head is None:
            head = {"role": "system", "content": ""}
            msgs.insert(0, head)
        head["tools"] = tools
    return V4(v41, server).encode(msgs, thinking, eff)


def oracle(template, server, messages, tools, kwargs, effort):
    if template == "deepseek-v3.2":
        return v32(server, messages, tools, kwargs, effort)
    return v4_family(template == "deepseek-v4.1", server, messages, tools, kwargs, effort)
