"""`chatconform serve` throughput: a 100-turn scripted conversation through the openai SDK.

Run: python benchmarks/serve_throughput.py [--turns N] [--stream] [--rounds R]
(a script, not a test: it prints requests per second, never asserts)

One ``openai.OpenAI`` client (``max_retries=0``) plays the conversation against
``chatconform serve`` started in a process of its own (with ``--script`` and ``--report``),
so the client and the server each have a core. Each turn resends the conversation so far,
as an application does, so the bodies grow to about 200 messages; every third turn the
script answers with a tool call, which the next turn answers with a tool result.

Three rates, so that the client's share and the server's can be told apart:

* ``sdk_requests_per_second``: the SDK against ``chatconform serve``, every request judged;
* ``sdk_noop_requests_per_second``: the same SDK calls against a server that answers the
  same replies without reading the body: the client's own ceiling;
* ``httpx_requests_per_second``: the same bodies posted by a bare httpx client to
  ``chatconform serve`` (``--rounds`` times, each round a conversation of its own): the
  server's rate without the SDK, beside ``server_cpu_ms_per_request`` read from ``/proc``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import openai

TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {
    "type": "object", "properties": {"q": {"type": "string"}}}}}]
#: The first request to each server, untimed and from a conversation of its own: the server's
#: imports and the SDK's first-call work finish on it.
WARM = [{"role": "user", "content": "warm up"}]


def script(turns: int) -> list[dict]:
    return [{"tool_calls": [{"name": "lookup", "arguments": {"q": f"turn {n}"}}]} if n % 3 == 2
            else {"text": f"Answer {n}."} for n in range(turns)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--stream", action="store_true", help="stream every reply (SSE)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the httpx replay")
    parser.add_argument("--noop", metavar="SCRIPT", help=argparse.SUPPRESS)  # be the no-op server
    args = parser.parse_args()
    if args.noop:
        asyncio.run(_noop_server(json.loads(Path(args.noop).read_text()), args.stream))
        return
    with tempfile.TemporaryDirectory() as folder:
        entries = Path(folder) / "script.json"
        entries.write_text(json.dumps(script(args.turns)))
        report = Path(folder) / "serve.jsonl"
        with _process([sys.executable, __file__, "--noop", str(entries), *(["--stream"] * args.stream)]) as (root, _):
            noop, _ = _conversation(root, args.turns, args.stream)
        with _process([sys.executable, "-m", "chatconform", "serve", "--port", "0", "--script", str(entries),
                       "--report", str(report)]) as (root, pid):
            sdk, bodies = _conversation(root, args.turns, args.stream)
            replayed, cpu = _replay(root, bodies, args.rounds, pid)
        lines = report.read_text().splitlines()
    requests = [json.loads(line) for line in lines if line.startswith('{"type": "request"')]
    print(json.dumps({
        "turns": args.turns, "stream": args.stream, "messages_at_the_end": len(bodies[-1]["messages"]),
        "sdk_requests_per_second": round(args.turns / sdk, 1),
        "sdk_noop_requests_per_second": round(args.turns / noop, 1),
        "httpx_requests_per_second": round(len(bodies) * args.rounds / replayed, 1),
        "server_cpu_ms_per_request": round(cpu * 1000 / (len(bodies) * args.rounds), 2),
        "judged": len(requests), "rejected": sum(1 for r in requests if r["status"] == 400),
        "report_lines": len(lines)}))


class _process:
    """A server in a child process: (its root URL, its pid) once it listens; SIGINT after."""

    def __init__(self, command: list[str]) -> None:
        self.command = command

    def __enter__(self) -> tuple[str, int]:
        self.proc = subprocess.Popen(self.command, stdout=subprocess.PIPE, text=True)
        found = re.search(r"http://[\d.]+:\d+", self.proc.stdout.readline() if self.proc.stdout else "")
        if found is None:
            self.proc.kill()
            raise SystemExit(f"{self.command[1:3]} did not say where it listens")
        return found.group(0), self.proc.pid

    def __exit__(self, *exc: object) -> None:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=30)


def _conversation(root: str, turns: int, stream: bool) -> tuple[float, list[dict]]:
    """Seconds for the whole conversation through the SDK, and the bodies it sent."""
    messages: list[dict] = [{"role": "system", "content": "Be brief."}]
    bodies = []
    with openai.OpenAI(base_url=root + "/v1", api_key="bench", max_retries=0) as client:
        client.chat.completions.create(model="bench", messages=WARM, timeout=30)
        began = time.perf_counter()
        for turn in range(turns):
            if messages[-1]["role"] != "tool":
                messages.append({"role": "user", "content": f"Question {turn}?"})
            body = {"messages": list(messages), "model": "bench", "tools": TOOLS}
            bodies.append(body | {"stream": True} if stream else body)
            message, calls = (_streamed if stream else _plain)(client, messages)
            messages.append(message)
            messages += [{"role": "tool", "tool_call_id": c["id"], "content": "found"} for c in calls]
        return time.perf_counter() - began, bodies


def _replay(root: str, bodies: list[dict], rounds: int, pid: int) -> tuple[float, float]:
    """Seconds to post ``bodies`` ``rounds`` times (each round its own conversation, by its
    first user text) with a bare httpx client, and the server's CPU seconds meanwhile."""
    encoded = [[json.dumps(body).replace('"Question 0?"', f'"Round {n}?"') for body in bodies]
               for n in range(rounds)]
    with httpx.Client(base_url=root, timeout=30) as client:
        cpu, began = _cpu_seconds(pid), time.perf_counter()
        for round_ in encoded:
            for body in round_:
                client.post("/v1/chat/completions", content=body, headers={"content-type": "application/json"})
        seconds = time.perf_counter() - began
    time.sleep(0.5)  # the report's rewrite after the last request is the server's work too
    return seconds, _cpu_seconds(pid) - cpu


def _cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of a process so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _plain(client: openai.OpenAI, messages: list) -> tuple[dict, list[dict]]:
    reply = client.chat.completions.create(model="bench", messages=messages, tools=TOOLS).choices[0].message
    calls = [{"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
             for c in reply.tool_calls or ()]
    return _assistant(reply.content, calls), calls


def _streamed(client: openai.OpenAI, messages: list) -> tuple[dict, list[dict]]:
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


async def _noop_server(entries: list[dict], stream: bool) -> None:
    """Answer the n-th request after the warm-up with entry n of the script, in bytes made
    beforehand, reading only the request's headers and length: no judging, no report."""
    answers = [_canned({"text": "OK"}, stream), *(_canned(entry, stream) for entry in entries)]
    served = 0

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal served
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
            await reader.readexactly(int(length.group(1)) if length else 0)
            writer.write(answers[min(served, len(answers) - 1)])
            served += 1
        writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    print(f"no-op server: listening on http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGINT, stop.set_result, None)
    async with server:
        await stop


def _canned(entry: dict, stream: bool) -> bytes:
    """A whole HTTP response carrying ``entry`` as an OpenAI chat completion (or its stream)."""
    calls = [{"id": f"call_{n}", "type": "function",
              "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
             for n, c in enumerate(entry.get("tool_calls", ()))]
    message: dict = {"role": "assistant", "content": entry.get("text")}
    if calls:
        message["tool_calls"] = calls
    finish = "tool_calls" if calls else "stop"
    if stream:
        deltas = [{"role": "assistant", "content": entry.get("text") or ""},
                  *({"tool_calls": [{"index": n, **c}]} for n, c in enumerate(calls))]
        chunks = [{"id": "noop", "object": "chat.completion.chunk", "created": 0, "model": "bench",
                   "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
        chunks.append({"id": "noop", "object": "chat.completion.chunk", "created": 0, "model": "bench",
                       "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
        kind = b"text/event-stream"
    else:
        body = json.dumps({"id": "noop", "object": "chat.completion", "created": 0, "model": "bench",
                           "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
        kind = b"application/json"
    return b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n%s" % (kind, len(body), body)


if __name__ == "__main__":
    main()
