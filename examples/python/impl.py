#!/usr/bin/env python3
"""A chat-history implementation in plain Python, checked by chatconform over stdio.

    chatconform run --impl exec:'python examples/python/impl.py'

It uses the standard library only, and never imports chatconform: chatconform starts it,
sends a hello and then one JSON request per line on stdin; it answers each with one JSON
line on stdout (docs/protocol.md). It implements two contracts:

- ``thread``: the newest row's thread from stored rows read newest first;
- ``payload``: a pydantic-ai history (its JSON) as an OpenAI Chat Completions body.

The same thread walk is importable, for a comparison in one process:
``--impl examples/python/impl.py:InProcessThreads``.
"""

from __future__ import annotations

import itertools
import json
import sys
import traceback

NAME = "example-python"
VERSION = "1.0.0"
PROVIDER = "openai-chat"

#: A legacy row's parent: "the row before me in time".
UUID_NIL = "00000000-0000-0000-0000-000000000000"
#: What a call that never got its result is answered with (pydantic-ai's wording).
INTERRUPTED = "The tool call was interrupted before a result was produced."


# -- thread ---------------------------------------------------------------------------------

def thread_of(rows, field):
    """The thread of the newest row, newest first.

    ``field(row, name)`` reads one field of a row, so the walk serves JSON objects and row
    objects alike. A parent is found by id, never by position (rows with equal timestamps
    come in any order), except a UUID_NIL parent, which is the next older row. The walk
    ends at a head, at a parent outside the rows, or where it would come back to a row it
    already holds (corrupted links). Of rows sharing an id, the newest stands.
    """
    ids, distinct = set(), []
    for row in rows:
        if field(row, "id") not in ids:
            ids.add(field(row, "id"))
            distinct.append(row)
    rows = distinct
    if not rows:
        return []
    place = {field(row, "id"): index for index, row in enumerate(rows)}
    walked, index = [0], 0
    while True:
        parent = field(rows[index], "parent_message_id")
        if not parent:
            break
        index = index + 1 if parent == UUID_NIL else place.get(parent, len(rows))
        if index >= len(rows) or index in walked:
            break
        walked.append(index)
    return [rows[i] for i in walked]


class InProcessThreads:
    """The same walk for chatconform's own rows (attributes), loaded in-process."""

    name = "example-python (in-process)"
    version = VERSION

    def extract_thread(self, rows):
        return thread_of(rows, getattr)


# -- payload --------------------------------------------------------------------------------

def _sent(text):
    """Blank text is never sent: providers reject it or drop it."""
    return bool(text.strip())


def _arguments(args):
    if args is None:
        return "{}"
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def _user_pieces(content):
    """A user prompt's content as ("text", str) and ("image", url) pieces."""
    for piece in [content] if isinstance(content, str) else content:
        if isinstance(piece, str):
            yield "text", piece
        elif piece.get("kind") == "text-content":
            yield "text", piece["content"]
        elif piece.get("kind") == "image-url":
            yield "image", piece["url"]
        elif piece.get("kind") == "binary" and piece.get("media_type", "").startswith("image/"):
            # pydantic writes bytes in the URL-safe base64 alphabet; a data URL takes the standard one
            data = piece["data"].replace("-", "+").replace("_", "/")
            yield "image", f"data:{piece['media_type']};base64,{data}"
        elif piece.get("kind") != "cache-point":
            raise ValueError(f"cannot send user content of kind {piece.get('kind')!r}")


def _request_pieces(part):
    """(role, pieces) of one request part; role None: not sent here."""
    kind = part["part_kind"]
    if kind == "system-prompt":
        return "system", [("text", part["content"])]
    if kind == "user-prompt":
        return "user", list(_user_pieces(part["content"]))
    if kind == "compaction":  # a summary of earlier turns, in the user's voice
        return "user", [("text", part["content"])] if part.get("content") else []
    if kind == "retry-feedback":
        content = part["content"]
        return "user", [("text", content if isinstance(content, str) else json.dumps(content))]
    return None, []


def _unique(call_id, used, stored_ids):
    """The id a call goes out under: its own, or ``<id>_<n>`` when an earlier call had it."""
    if call_id not in used:
        return call_id
    for n in itertools.count(2):  # at most 64 characters, and no id the history holds
        candidate = f"{call_id[:63 - len(str(n))]}_{n}"
        if candidate not in used and candidate not in stored_ids:
            return candidate


def openai_body(history, instructions=None):
    """The ``{"messages": [...]}`` of a Chat Completions request for ``history``.

    One system message first (every system prompt, then the instructions); the rest in
    history order; each call's results right after the assistant message that made it
    (the earliest stored result with its id; an interrupted one where there is none);
    failed tool results marked as errors; an id an earlier call used sent as a new one.
    """
    stored, stored_ids = {}, set()
    for message in history:
        for part in message["parts"]:
            if part["part_kind"] == "tool-return" and message["kind"] == "request":
                stored.setdefault(part["tool_call_id"], []).append(part)
            elif part["part_kind"] == "tool-call" and message["kind"] == "response":
                stored_ids.add(part["tool_call_id"])
    turns, used = [], set()  # [role, pieces]
    for message in history:
        if message["kind"] == "request":
            role = None
            for part in message["parts"]:
                voice, pieces = _request_pieces(part)
                if voice is None:
                    continue
                if voice != role:
                    turns.append([voice, []])
                    role = voice
                turns[-1][1].extend(p for p in pieces if p[0] != "text" or _sent(p[1]))
            continue
        said, answers = [], []
        for part in message["parts"]:
            if part["part_kind"] == "text" and _sent(part["content"]):
                said.append(("text", part["content"]))
            elif part["part_kind"] == "tool-call":
                wire = _unique(part["tool_call_id"], used, stored_ids)
                used.add(wire)
                said.append(("call", wire, part["tool_name"], _arguments(part.get("args"))))
                queue = stored.get(part["tool_call_id"])
                result = queue.pop(0) if queue else None
                if result is None:
                    answers.append(("result", wire, INTERRUPTED))
                else:
                    content = result["content"]
                    if result.get("outcome") in ("failed", "retried"):
                        content = {"error": content}
                    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
                    answers.append(("result", wire, text))
        turns.append(["assistant", said])
        if answers:
            turns.append(["tool", answers])

    system = [text for role, pieces in turns if role == "system" for _, text in pieces]
    if instructions and _sent(instructions):
        system.append(instructions)
    messages = [{"role": "system", "content": "\n\n".join(system)}] if system else []
    for role, pieces in turns:
        if role == "system" or not pieces:
            continue
        texts = [p[1] for p in pieces if p[0] == "text"]
        if role == "user":
            if len(texts) == len(pieces):
                messages.append({"role": "user", "content": "\n\n".join(texts)})
            else:
                messages.append({"role": "user", "content": [
                    {"type": "text", "text": p[1]} if p[0] == "text" else {"type": "image_url", "image_url": {"url": p[1]}}
                    for p in pieces]})
        elif role == "assistant":
            reply = {"role": "assistant"}
            if texts:
                reply["content"] = "\n\n".join(texts)
            calls = [p for p in pieces if p[0] == "call"]
            if calls:
                reply["tool_calls"] = [{"id": c[1], "type": "function", "function": {"name": c[2], "arguments": c[3]}}
                                       for c in calls]
            messages.append(reply)
        else:
            messages.extend({"role": "tool", "tool_call_id": p[1], "content": p[2]} for p in pieces)
    return {"messages": messages}


# -- the protocol ---------------------------------------------------------------------------

HELLO = {"protocol": 1, "name": NAME, "version": VERSION, "language": "python",
         "contracts": ["thread", "payload"], "providers": [PROVIDER]}


def answer(request):
    contract, data = request["contract"], request["input"]
    if contract == "thread":
        return thread_of(data, lambda row, name: row.get(name))
    if contract == "payload":
        if request["provider"] != PROVIDER:
            raise ValueError(f"no mapping for provider {request['provider']!r}")
        return openai_body(data["history"], data.get("instructions"))
    raise ValueError(f"no contract {contract!r}")


def main():
    for line in sys.stdin.buffer:
        request = json.loads(line)
        if request["type"] == "stop":
            break
        if request["type"] == "hello":
            reply = HELLO
        else:
            try:
                reply = {"id": request["id"], "result": answer(request)}
            except Exception as exc:  # the implementation's error, reported to chatconform
                reply = {"id": request["id"], "error": {"type": type(exc).__name__, "message": str(exc),
                                                         "traceback": traceback.format_exc()}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
