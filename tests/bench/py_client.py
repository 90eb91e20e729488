"""The reference client of the bench's load_client section (tests/bench/run.sh):
a vllm-bench-style Python client, as vLLM's benchmarks/backend_request_func.py
sends /v1/completions requests: one aiohttp session, an asyncio task per
request bounded by a semaphore (closed loop at CONCURRENCY), a streamed POST,
each "data: " line of the body parsed with json.loads, TTFT and the gaps
between chunks timed, the figures summarised at the end.

Usage: python3 py_client.py BASE_URL MODEL REQUESTS CONCURRENCY INPUT_WORDS OUTPUT_TOKENS

Prints one JSON line: {"ok", "requests", "cpu_s", "wall_s", "ttft_p50_ms"}, cpu_s
being the whole process's user + system time (the interpreter's start
included), as /usr/bin/time counts needle's.
"""
import asyncio
import json
import random
import resource
import sys
import time

import aiohttp

WORDS = ("the carpenters agreed that each honest ledger failed beyond careful meadow "
         "canal turned out badly with great care behind lighthouse river stone").split()


async def one(session, url, model, prompt, out_tokens, sem, stats):
    payload = {"model": model, "prompt": prompt, "max_tokens": out_tokens,
               "temperature": 0.0, "stream": True, "ignore_eos": True,
               "stream_options": {"include_usage": True}}
    async with sem:
        start = time.perf_counter()
        ttft, last, text, itl = 0.0, start, "", []
        async with session.post(url, json=payload) as resp:
            if resp.status != 200:
                stats["fail"] += 1
                return
            async for chunk in resp.content:
                chunk = chunk.strip()
                if not chunk:
                    continue
                body = chunk.decode("utf-8").removeprefix("data: ")
                if body == "[DONE]":
                    continue
                data = json.loads(body)
                now = time.perf_counter()
                if data.get("choices") and data["choices"][0].get("text"):
                    if not ttft:
                        ttft = now - start
                    else:
                        itl.append(now - last)
                    text += data["choices"][0]["text"]
                    last = now
        stats["ok"] += 1
        stats["ttft"].append(ttft)


async def main():
    base, model, n, conc, in_words, out_tokens = sys.argv[1:7]
    n, conc, in_words, out_tokens = int(n), int(conc), int(in_words), int(out_tokens)
    rng = random.Random(1)
    prompts = [" ".join(rng.choice(WORDS) for _ in range(in_words)) for _ in range(n)]
    stats = {"ok": 0, "fail": 0, "ttft": []}
    sem = asyncio.Semaphore(conc)
    timeout = aiohttp.ClientTimeout(total=6 * 60 * 60)
    t0 = time.perf_counter()
    async with aiohttp.ClientSession(timeout=timeout) as session:
        await asyncio.gather(*(one(session, base + "/completions", model, p, out_tokens, sem, stats)
                               for p in prompts))
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_SELF)
    ttft = sorted(stats["ttft"])
    print(json.dumps({"ok": stats["ok"], "requests": n, "cpu_s": ru.ru_utime + ru.ru_stime,
                      "wall_s": wall, "ttft_p50_ms": 1000 * ttft[len(ttft) // 2] if ttft else None}))


asyncio.run(main())
