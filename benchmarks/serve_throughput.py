"""`chatconform serve` throughput: a 100-turn scripted conversation through the openai SDK.

Run: python benchmarks/serve_throughput.py [--turns N] [--stream]
(a script, not a test: it prints requests per second, never asserts)

Each turn resends the conversation so far, as an application does, so the bodies grow to
about 300 messages: the number measures judging (``validate`` on the whole body), answering
and the report together. Every third turn the script answers with a tool call, which the
next turn answers with a tool result. The report is written to a temporary file. Then the
same bodies are posted again by a bare httpx client: ``bodies_replayed_per_second`` is the
server's own rate, without the SDK building each request.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import httpx
import openai

from chatconform.serve import start

TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {
    "type": "object", "properties": {"q": {"type": "string"}}}}}]


def script(turns: int) -> list[dict]:
    return [{"tool_calls": [{"name": "lookup", "arguments": {"q": f"turn {n}"}}]} if n % 3 == 2
            else {"text": f"Answer {n}."} for n in range(turns)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--stream", action="store_true", help="stream every reply (SSE)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "serve.jsonl"
        endpoint = start(script=script(args.turns), report=report, version="bench")
        client = openai.OpenAI(base_url=endpoint.base_url("openai-chat"), api_key="bench", max_retries=0)
        messages: list[dict] = [{"role": "system", "content": "Be brief."}]
        began = time.perf_counter()
        for turn in range(args.turns):
            if messages[-1]["role"] != "tool":
                messages.append({"role": "user", "content": f"Question {turn}?"})
            message, calls = (_streamed if args.stream else _plain)(client, messages)
            messages.append(message)
            messages += [{"role": "tool", "tool_call_id": c["id"], "content": "found"} for c in calls]
        seconds = time.perf_counter() - began
        # the same bodies again, posted as they are: the server's share without the SDK's
        bodies = [json.dumps(v.body) for v in endpoint.verdicts]
        began = time.perf_counter()
        with httpx.Client(base_url=endpoint.root, timeout=30) as raw:
            for body in bodies:
                raw.post("/v1/chat/completions", content=body, headers={"content-type": "application/json"})
        replayed = time.perf_counter() - began
        endpoint.stop()
        rejected = sum(1 for v in endpoint.verdicts if v.rejected)
        print(json.dumps({"turns": args.turns, "stream": args.stream, "messages_at_the_end": len(messages),
                          "seconds": round(seconds, 3), "requests_per_second": round(args.turns / seconds, 1),
                          "bodies_replayed_per_second": round(len(bodies) / replayed, 1),
                          "rejected": rejected, "report_lines": len(report.read_text().splitlines())}))


def _plain(client, messages: list) -> tuple[dict, list[dict]]:
    reply = client.chat.completions.create(model="bench", messages=messages, tools=TOOLS).choices[0].message
    calls = [{"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
             for c in reply.tool_calls or ()]
    return _assistant(reply.content, calls), calls


def _streamed(client, messages: list) -> tuple[dict, list[dict]]:
    text, calls = "", {}
    for chunk in client.chat.completions.create(model="bench", messages=messages, tools=TOOLS, stream=True):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for delta in choice.delta.tool_calls or ():
                call = calls.setdefault(delta.index, {"id": delta.id, "type": "function",
                                                      "function": {"name": delta.function.name, "arguments": ""}})
                call["function"]["arguments"] += delta.function.arguments or ""
    return _assistant(text or None, list(calls.values())), list(calls.values())


def _assistant(content: str | None, calls: list[dict]) -> dict:
    message: dict = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return message


if __name__ == "__main__":
    main()
