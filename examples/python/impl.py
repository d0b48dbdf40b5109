#!/usr/bin/env python3
"""A chat-history implementation in plain Python, checked by chatconform over stdio.

    chatconform run --impl exec:'python examples/python/impl.py'

It uses the standard library only, and never imports chatconform: chatconform starts it,
sends a hello and then one JSON request per line on stdin; it answers each with one JSON
line on stdout (docs/protocol.md). It implements every contract it can be checked on
except ``compaction`` and ``persist``:

- ``thread``: the newest row's thread from stored rows read newest first;
- ``payload``: a pydantic-ai history (its JSON) as an OpenAI Chat Completions body;
- ``sanitize``: what a server keeps of a history a client posted back;
- ``repair``: every tool call answered exactly once, every result answering a call;
- ``trim``: the newest valid part of a history within a message budget;
- ``serde``: ``dump`` to pydantic-ai's message JSON and ``load`` back, refusing bad data.

The same thread walk is importable, for a comparison in one process:
``--impl examples/python/impl.py:InProcessThreads``.
"""

from __future__ import annotations

import itertools
import json
import re
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


#: The audio formats Chat Completions takes as ``input_audio``, by media type.
AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}


def _user_pieces(content):
    """A user prompt's content as ("text", str), ("image", url), ("link", url), ("file", data
    URL, filename) and ("audio", base64, format) pieces."""
    for piece in [content] if isinstance(content, str) else content:
        if isinstance(piece, str):
            yield "text", piece
        elif piece.get("kind") == "text-content":
            yield "text", piece["content"]
        elif piece.get("kind") == "image-url":
            yield "image", piece["url"]
        elif piece.get("kind") in ("document-url", "audio-url", "video-url"):
            yield "link", piece["url"]  # Chat Completions takes no file by URL: the link, as text
        elif piece.get("kind") == "binary":
            # pydantic writes bytes in the URL-safe base64 alphabet; a data URL takes the standard one
            data, media_type = piece["data"].replace("-", "+").replace("_", "/"), piece.get("media_type", "")
            if media_type.startswith("image/"):
                yield "image", f"data:{media_type};base64,{data}"
            elif media_type == "application/pdf":
                yield "file", f"data:{media_type};base64,{data}", "document.pdf"
            elif media_type in AUDIO_FORMATS:
                yield "audio", data, AUDIO_FORMATS[media_type]
            else:  # video bytes: no part of the body takes them, and dropping them would lose them
                raise ValueError(f"{PROVIDER} takes no {media_type or 'untyped'} bytes")
        elif piece.get("kind") != "cache-point":
            raise ValueError(f"cannot send user content of kind {piece.get('kind')!r}")


def _user_part(piece):
    """One piece of a user prompt as a Chat Completions content part."""
    if piece[0] in ("text", "link"):
        return {"type": "text", "text": piece[1]}
    if piece[0] == "image":
        return {"type": "image_url", "image_url": {"url": piece[1]}}
    if piece[0] == "file":
        return {"type": "file", "file": {"filename": piece[2], "file_data": piece[1]}}
    return {"type": "input_audio", "input_audio": {"data": piece[1], "format": piece[2]}}


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
                messages.append({"role": "user", "content": [_user_part(p) for p in pieces]})
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

# -- histories: every timestamp written out ------------------------------------------------

#: The protocol's history JSON leaves out a timestamp equal to the previous message's (the
#: first message's is this one); a part's defaults to its message's.
FIRST_TIME = "2026-01-05T09:00:00Z"
#: The part kinds that carry a timestamp.
TIMED_PARTS = {"system-prompt", "user-prompt", "tool-return", "retry-prompt", "retry-feedback", "builtin-tool-return"}


def with_times(history):
    """A copy of ``history`` with every timestamp written out, so that dropping, adding or
    moving a message changes no other message's time."""
    out, previous = [], FIRST_TIME
    for message in history:
        message = dict(message)
        message.setdefault("timestamp", previous)
        if message["timestamp"] is not None:
            previous = message["timestamp"]
        message["parts"] = [dict(part, timestamp=previous)
                            if part.get("part_kind") in TIMED_PARTS and "timestamp" not in part else part
                            for part in message["parts"]]
        out.append(message)
    return out


def is_result(part):
    """A part that answers a tool call (a retry prompt naming no tool is feedback)."""
    return part["part_kind"] == "tool-return" or (part["part_kind"] == "retry-prompt" and part.get("tool_name"))


# -- trim -----------------------------------------------------------------------------------

def _visible(message):
    """The kinds of what a reader sees in one message, in order; blank text and system prompts left out."""
    for part in message["parts"]:
        kind = part["part_kind"]
        if message["kind"] == "response":
            if kind == "tool-call":
                yield "call"
            elif kind in ("text", "thinking") and part["content"].strip():
                yield kind
        elif kind == "user-prompt":
            content = part["content"]
            for piece in [content] if isinstance(content, str) else content:
                what = "text-content" if isinstance(piece, str) else piece.get("kind")
                if what in FILE_URLS or what == "binary":
                    yield "media"
                elif what == "text-content" and (piece if isinstance(piece, str) else piece["content"]).strip():
                    yield "user"
        elif kind == "compaction" and (part.get("content") or "").strip():
            yield "summary"
        elif kind == "retry-feedback" and isinstance(part.get("content"), str) and part["content"].strip():
            yield "feedback"
        elif is_result(part) and part.get("tool_call_id"):
            yield "result"


def trim(history, max_messages):
    """The longest suffix within ``max_messages`` that starts at a user turn and splits no tool
    call from its result, with the standing system prompt put back in front when it was cut;
    the shortest such suffix when none fits (less would be rejected or lose the turn)."""
    if isinstance(max_messages, bool) or not isinstance(max_messages, int) or max_messages < 1:
        raise ValueError(f"max_messages={max_messages!r} must be an int of at least 1")
    history, n = with_times(history), len(history)
    if n <= max_messages:
        return history
    spans, calls = [0] * (n + 1), {}  # spans: calls opened minus calls answered, before each index
    for index, message in enumerate(history):
        for part in message["parts"]:
            if message["kind"] == "response" and part["part_kind"] == "tool-call":
                calls.setdefault(part["tool_call_id"], index)
            elif message["kind"] == "request" and is_result(part) and part.get("tool_call_id") in calls:
                spans[calls.pop(part["tool_call_id"]) + 1] += 1
                spans[index + 1] -= 1
    opens = [None] * (n + 1)  # the first thing a reader sees from each message on
    for index in range(n - 1, -1, -1):
        opens[index] = next(_visible(history[index]), opens[index + 1])
    starts, spanning = [0], 0
    for index in range(1, n):
        spanning += spans[index]
        if not spanning and history[index]["kind"] == "request" and opens[index] in ("user", "summary"):
            starts.append(index)
    leading = next((i for i, m in enumerate(history) if m["kind"] == "response"), n)
    prompted = [i for i in range(leading) if any(p["part_kind"] == "system-prompt" for p in history[i]["parts"])]
    start = next((s for s in starts if n - s + bool(prompted and s > prompted[0]) <= max_messages), starts[-1])
    standing = [p for m in history[:min(start, leading)] for p in m["parts"] if p["part_kind"] == "system-prompt"]
    return ([{"kind": "request", "timestamp": None, "parts": standing}] if standing else []) + history[start:]


# -- repair ---------------------------------------------------------------------------------

#: The metadata key that marks a result written for a call that never got one.
SYNTHESIZED = "pydantic_ai_synthesized_tool_return"


def _interrupted(call, response):
    """The result of a call that never got one, as pydantic-ai writes it (marked, and timed
    with the call's response, so repairing again changes nothing)."""
    result = {"part_kind": "tool-return", "tool_name": call["tool_name"], "tool_call_id": call["tool_call_id"],
              "content": INTERRUPTED, "outcome": "interrupted", "metadata": {SYNTHESIZED: True},
              "timestamp": response["timestamp"]}
    return dict(result, tool_kind=call["tool_kind"]) if "tool_kind" in call else result


def repair(history):
    """Results matched to calls in one walk: a result answers the oldest open call with its id
    (a call whose id a later response takes over stays open); a result answering no open call
    is dropped; each call left open gets an interrupted result after the next request's own
    results, or in a new request. Nothing else moves."""
    history = with_times(history)
    open_calls, left_open, dropped = {}, [], set()
    for index, message in enumerate(history):
        for k, part in enumerate(message["parts"]):
            if message["kind"] == "response" and part["part_kind"] == "tool-call":
                pending = open_calls.setdefault(part["tool_call_id"], [])
                if pending and pending[-1][0] != index:
                    left_open += pending
                    pending.clear()
                pending.append((index, k, part))
            elif message["kind"] == "request" and is_result(part):
                pending = open_calls.get(part["tool_call_id"])
                if pending:
                    pending.pop(0)
                else:
                    dropped.add((index, k))
    unanswered = {}
    for index, _, call in sorted(left_open + [c for p in open_calls.values() for c in p], key=lambda c: c[:2]):
        unanswered.setdefault(index, []).append(call)
    out, owed = [], []
    for index, message in enumerate(history):
        if message["kind"] == "response":
            if owed:
                out.append({"kind": "request", "timestamp": None, "parts": owed})
            out.append(message)
            owed = [_interrupted(call, message) for call in unanswered.get(index, ())]
            continue
        parts = [part for k, part in enumerate(message["parts"]) if (index, k) not in dropped]
        if not parts and len(parts) != len(message["parts"]) and index != len(history) - 1:
            continue
        if owed:
            at = next((k + 1 for k in range(len(parts) - 1, -1, -1) if is_result(parts[k])), 0)
            parts, owed = parts[:at] + owed + parts[at:], []
        out.append(dict(message, parts=parts))
    if owed:
        out.append({"kind": "request", "timestamp": None, "parts": owed})
    return out


# -- sanitize -------------------------------------------------------------------------------

SYSTEM_VOICE = {"system-prompt", "instruction-delta", "instruction-baseline"}
FILE_URLS = {"image-url", "audio-url", "document-url", "video-url"}
RESERVED_KEY = "__pydantic_ai__"
PLANTED_KEY = "pydantic_ai_standing_prompt_planted"
#: How retry feedback is put to the model in the user's voice, and the tags it must not open.
FEEDBACK_FRAME = ("Your previous response failed the application's validation "
                  "(this is automated feedback, not a message from the user):")
FRAMING_TAG = re.compile(r"<(?=\s*(?:/\s*)?(?:system|tool_result|assistant_thinking|context|context_diff"
                         r"|validation_errors|retry_feedback|conversation_summary)(?=[\s/>]|$))")
DROP = object()


def allowed_url(url):
    """Only http and https, read as a URL parser reads the scheme (no scheme is not allowed)."""
    cleaned = url.strip("".join(map(chr, range(0x21)))).translate({9: None, 10: None, 13: None})
    match = re.match(r"([A-Za-z][A-Za-z0-9+.\-]*):", cleaned)
    return bool(match) and match.group(1).lower() in ("http", "https")


def clean_file(item):
    """A file reference as kept (DROP when it goes); any other value as it is."""
    if isinstance(item, dict) and item.get("kind") == "uploaded-file":
        return DROP
    if isinstance(item, dict) and item.get("kind") in FILE_URLS and isinstance(item.get("url"), str):
        if not allowed_url(item["url"]):
            return DROP
        if item.get("force_download", False) is not False:
            return dict(item, force_download=False)
    return item


def clean_content(value):
    """Tool-result content with its file references cleaned, lists and objects walked."""
    value = clean_file(value)
    if value is DROP or (isinstance(value, dict) and value.get("kind") in FILE_URLS | {"binary"}):
        return value
    if isinstance(value, dict):
        return {key: kept for key, kept in ((k, clean_content(v)) for k, v in value.items()) if kept is not DROP}
    if isinstance(value, list):
        return [kept for kept in map(clean_content, value) if kept is not DROP]
    return value


def _request_part(part):
    kind = part["part_kind"]
    if kind in SYSTEM_VOICE:
        return None
    if kind == "retry-feedback" and part.get("retry", {}).get("cause") == "no_output":
        content = part["content"] if isinstance(part["content"], str) else json.dumps(part["content"])
        fenced = FRAMING_TAG.sub("&lt;", f"\n{content}\n")
        return {"part_kind": "user-prompt", "content": f"{FEEDBACK_FRAME}\n<retry_feedback>{fenced}</retry_feedback>",
                "timestamp": part["timestamp"]}
    if kind == "user-prompt" and not isinstance(part["content"], str):
        kept = [clean_file(piece) for piece in part["content"]]
        kept = [{k: v for k, v in piece.items() if k != "metadata"} if isinstance(piece, dict)
                and piece.get("kind") == "text-content" else piece for piece in kept if piece is not DROP]
        return dict(part, content=kept)
    if kind == "tool-return":
        content = clean_content(part.get("content"))
        return dict(part, content=None if content is DROP else content)
    return part


def _response_part(part):
    if part["part_kind"] == "builtin-tool-return":
        content = clean_content(part.get("content"))
        return dict(part, content=None if content is DROP else content)
    if part["part_kind"] == "compaction" and PLANTED_KEY in (part.get("provider_details") or {}):
        return dict(part, provider_details={k: v for k, v in part["provider_details"].items() if k != PLANTED_KEY})
    return part


def sanitize(history):
    """What a client may control of a history: no system voice, http(s) file URLs only and
    never downloaded by the server, no uploaded files, no reserved metadata, and no tool
    calls left for a promptless run to execute. Everything else as it was."""
    out = []
    for message in with_times(history):
        request = message["kind"] == "request"
        message = {k: v for k, v in message.items() if k not in ("instructions", "workspace_ref")}
        if RESERVED_KEY in (message.get("metadata") or {}):
            metadata = {k: v for k, v in message.pop("metadata").items() if k != RESERVED_KEY}
            message.update({"metadata": metadata} if metadata else {})
        parts = [kept for kept in map(_request_part if request else _response_part, message["parts"]) if kept]
        if parts:
            out.append(dict(message, parts=parts))
    index = len(out) - 1
    while index >= 0 and out[index]["kind"] == "response":  # calls a promptless run would execute
        parts = [part for part in out[index]["parts"] if part["part_kind"] != "tool-call"]
        if parts:
            out[index] = dict(out[index], parts=parts)
        else:
            del out[index]
        index -= 1
    return out


# -- serde ----------------------------------------------------------------------------------

#: The part kinds pydantic-ai knows, by message kind.
PART_KINDS = {
    "request": {"system-prompt", "user-prompt", "tool-return", "retry-prompt", "retry-feedback", "compaction",
                "instruction-baseline", "instruction-delta", "model-settings-delta", "tool-availability-delta",
                "speech"},
    "response": {"text", "thinking", "tool-call", "builtin-tool-call", "builtin-tool-return", "file", "compaction",
                 "speech"},
}


class InvalidData(ValueError):
    """Stored data that is not a history: answered as an error with ``invalid_input``."""


def dump(history):
    """pydantic-ai's message JSON: the protocol's history JSON with every timestamp written out."""
    return json.dumps(with_times(history), ensure_ascii=False)


def load(data):
    """The history in ``data``; InvalidData for anything that is not one, never a shorter history."""
    try:
        history = json.loads(data)
    except ValueError as exc:
        raise InvalidData(f"not JSON: {exc}") from None
    if not isinstance(history, list):
        raise InvalidData("a history is a JSON array of messages")
    for i, message in enumerate(history):
        if not isinstance(message, dict) or message.get("kind") not in PART_KINDS:
            raise InvalidData(f"[{i}]: not a message (kind 'request' or 'response')")
        if not isinstance(message.get("parts"), list):
            raise InvalidData(f"[{i}].parts: not an array")
        for k, part in enumerate(message["parts"]):
            if not isinstance(part, dict) or part.get("part_kind") not in PART_KINDS[message["kind"]]:
                kind = part.get("part_kind") if isinstance(part, dict) else None
                raise InvalidData(f"[{i}].parts[{k}]: no {message['kind']} part of kind {kind!r}")
    return history


# -- the protocol ---------------------------------------------------------------------------

HELLO = {"protocol": 1, "name": NAME, "version": VERSION, "language": "python",
         "contracts": ["thread", "payload", "sanitize", "repair", "trim", "serde"], "more_methods": ["load"],
         "providers": [PROVIDER]}


def answer(request):
    contract, data = request["contract"], request["input"]
    if contract == "thread":
        return thread_of(data, lambda row, name: row.get(name))
    if contract == "payload":
        if request["provider"] != PROVIDER:
            raise ValueError(f"no mapping for provider {request['provider']!r}")
        return openai_body(data["history"], data.get("instructions"))
    if contract == "sanitize":
        return sanitize(data["history"])
    if contract == "repair":
        return repair(data["history"])
    if contract == "trim":
        return trim(data["history"], data["max_messages"])
    if contract == "serde":
        return dump(data["history"]) if request["method"] == "dump" else load(data["data"])
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
                if isinstance(exc, InvalidData):  # a refusal of bad data, not a crash
                    reply["error"]["invalid_input"] = True
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
