"""The tables and examples of the docs that the catalogs define, generated from them.

A table kept by hand drifts from what it describes. Each generated region of a page sits
between two markers, with hand-written prose around it:

    <!-- generated: contracts; regenerate with: python tools/generate_docs.py -->
    ...
    <!-- end generated: contracts -->

and this script writes every region from its source:

- README.md: the contract table (the contract catalog: each contract's page, signature and
  own checks), the provider table (the provider profiles and the rule catalog) and the
  mutation scores (``tools/mutation-scores.json``, which ``tools/mutate.py`` keeps);
- docs/protocol.md: the hello example and the hello line of the example session
  (``chatconform.runner.protocol.hello``), the call input and call-reply result tables
  (each contract's wire format, ``Contract.wire()``), and the example session's other lines,
  each checked against its message's schema;
- docs/mutation.md: the mutation scores, module by module;
- docs/provider-rules.md, whole (``chatconform.provider_schemas.catalog``).

    python tools/generate_docs.py           # rewrite what is stale, in place
    python tools/generate_docs.py --check   # exit 1 naming each stale file; nothing written

``tests/test_generated_docs.py`` fails, naming the file and this command, while a page differs
from what this script writes.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed one

COMMAND = "python tools/generate_docs.py"
SCORES = ROOT / "tools" / "mutation-scores.json"
_START = re.compile(r"^<!-- generated: ([\w-]+); regenerate with: .* -->$", re.MULTILINE)


def start_marker(name: str) -> str:
    return f"<!-- generated: {name}; regenerate with: {COMMAND} -->"


def end_marker(name: str) -> str:
    return f"<!-- end generated: {name} -->"


# --- cells --------------------------------------------------------------------------------

def _cell(text: str) -> str:
    """Text for a Markdown table cell: a ``|`` would end the cell."""
    return text.replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{_cell(text)}`"


def _clause(text: str) -> str:
    """A sentence continued after a colon: its first letter in lower case, unless the first
    word is an abbreviation (``ISO 8601``)."""
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def _names(names: list[str]) -> str:
    quoted = [f"`{name}`" for name in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


# --- README: contracts and providers ------------------------------------------------------

def contracts_table() -> str:
    """One row per contract: its page, its method's signature, its own checks (the three the
    engine judges for every contract are described under the table)."""
    from chatconform.contracts import all_contracts

    lines = ["| contract | method | checks |", "|---|---|---|"]
    for name, contract in all_contracts().items():
        if contract.composes:
            method = "any of the methods above, the reference's for the rest, played as one conversation"
        else:
            method = " and ".join(_code(call.text) for call in contract.calls()) or _code(contract.signature)
        own = [check.id.split(".", 1)[1] for check in contract.checks if check.evaluate is not None]
        lines.append(f"| [`{name}`](docs/contracts/{name}.md) | {method} | {', '.join(f'`{c}`' for c in own)} |")
    return "\n".join(lines)


def _anchor(heading: str) -> str:
    """The fragment GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def providers_table() -> str:
    """One row per provider profile: its id, what it is, its dialect and its rules."""
    from chatconform.provider_schemas.catalog import RULES
    from chatconform.providers import PROVIDERS

    lines = ["| provider | API | dialect | rules |", "|---|---|---|---|"]
    for provider, info in PROVIDERS.items():
        count = len(RULES.get(provider, {}))
        link = f"docs/provider-rules.md#{_anchor(f'{info.title} (`{provider}`)')}"
        lines.append(f"| `{provider}` | [{_cell(info.title)}]({info.docs}) | `{info.dialect}` "
                     f"| [{count} rule{'s' if count != 1 else ''}]({link}) |")
    return "\n".join(lines)


# --- docs/protocol.md ---------------------------------------------------------------------

def _placeholder(schema: dict[str, Any]) -> str:
    """A value of ``schema`` as the tables sketch it: ``[...]`` for a history, ``"..."`` for
    a string, an enum's first value, an integer's least."""
    if schema.get("$ref", "").endswith("/history"):
        return "[...]"
    if "enum" in schema:
        return json.dumps(schema["enum"][0])
    kinds = schema.get("type", "")
    kind = next((k for k in kinds if k != "null"), "") if isinstance(kinds, list) else kinds
    return {"string": '"..."', "integer": str(schema.get("minimum", 0)), "array": "[...]",
            "object": "{...}"}.get(kind, "...")


def _fields(schema: dict[str, Any]) -> tuple[str, list[str]]:
    """An object schema as a sketch of its JSON, and a note per field that has more to say."""
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    sketch = "{" + ", ".join(f'"{name}": {_placeholder(field)}' for name, field in properties.items()) + "}"
    notes = []
    for name, field in properties.items():
        said = []
        if "enum" in field:
            said.append("one of " + ", ".join(f"`{value}`" for value in field["enum"]))
        elif field.get("minimum") is not None:
            said.append(f"at least {field['minimum']}")
        if field.get("description"):
            said.append(_clause(field["description"]).rstrip("."))
        if name not in required and not said:
            said.append("may be left out")
        if said:
            notes.append(f"`{name}`{'' if name in required else ' (optional)'}: {'; '.join(said)}.")
    return sketch, notes


def _input_cell(schema: dict[str, Any]) -> str:
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        sketch, notes = _fields(schema["items"])
        shape = f"an array of {_code(sketch)}"
    else:
        sketch, notes = _fields(schema)
        shape = _code(sketch)
    said = ([schema["description"]] if schema.get("description") else []) + notes
    return _cell(" ".join([shape + ".", *said]) if said else shape)


def _result_cell(method: str, schema: dict[str, Any]) -> str:
    text = schema.get("description", "")
    text = _clause(text.removeprefix(f"The result of {method}: ")) if text else "any JSON"
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, dict) and items.get("properties") and items.get("required"):
        text = text.rstrip(".") + f"; each item has {_names(items['required'])}."
    return _cell(text)


def _wires() -> dict[str, Any]:
    from chatconform.runner.protocol.messages import carried

    return carried()


def call_input_table() -> str:
    lines = ["| contract | method | input |", "|---|---|---|"]
    for name, wire in _wires().items():
        lines += [f"| `{name}` | `{method.name}` | {_input_cell(method.input)} |" for method in wire]
    return "\n".join(lines)


def call_result_table() -> str:
    lines = ["| contract | method | result |", "|---|---|---|"]
    for name, wire in _wires().items():
        lines += [f"| `{name}` | `{method.name}` | {_result_cell(method.name, method.result)} |" for method in wire]
    return "\n".join(lines)


def _wrapped_object(key: str, value: dict[str, Any], indent: int, width: int = 100) -> list[str]:
    """``"key": {...}`` over as many lines as ``width`` needs, the entries under the first."""
    lead = " " * indent + f'"{key}": {{'
    entries = [f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in value.items()]
    lines, line = [], lead
    for index, entry in enumerate(entries):
        piece = entry + ("," if index < len(entries) - 1 else "}")
        if line != lead and len(line) + 1 + len(piece) > width:
            lines.append(line)
            line = " " * len(lead) + piece
        else:
            line += ("" if line == lead else " ") + piece
    return [*lines, line]


def hello_example() -> str:
    """The hello as chatconform sends it, laid out to be read."""
    from chatconform.runner.protocol import hello

    sent = hello()
    scalars = {k: v for k, v in sent.items() if not isinstance(v, (dict, list))}
    rest = [k for k in sent if k not in scalars]
    lines = ["{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in scalars.items()) + ","]
    for index, key in enumerate(rest):
        value = sent[key]
        if isinstance(value, dict):
            lines += _wrapped_object(key, value, 1)
        else:
            lines.append(f' "{key}": {json.dumps(value, ensure_ascii=False)}')
        lines[-1] += "," if index < len(rest) - 1 else "}"
    return "```json\n" + "\n".join(lines) + "\n```"


#: The example session after the hello: (who writes the line, its message), each checked
#: against its message's schema when the page is generated.
SESSION: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("<", "hello-reply", {"protocol": 1, "name": "example-python", "version": "1.0.0", "language": "python",
                          "contracts": ["thread", "payload"], "providers": ["openai-chat"]}),
    (">", "call", {"type": "call", "id": 1, "contract": "thread", "method": "extract_thread", "input": [
        {"id": "m3", "parent_message_id": "m1", "created_at": "2026-01-01T00:00:03+00:00"},
        {"id": "m2", "parent_message_id": "m1", "created_at": "2026-01-01T00:00:02+00:00"},
        {"id": "m1", "created_at": "2026-01-01T00:00:01+00:00"}]}),
    ("<", "call-reply", {"id": 1, "result": [
        {"id": "m3", "parent_message_id": "m1", "created_at": "2026-01-01T00:00:03+00:00"},
        {"id": "m1", "created_at": "2026-01-01T00:00:01+00:00"}]}),
    (">", "call", {"type": "call", "id": 2, "contract": "payload", "method": "to_payload", "provider": "openai-chat",
                   "input": {"history": [{"kind": "request", "parts": [
                       {"part_kind": "system-prompt", "content": "Be brief."},
                       {"part_kind": "user-prompt", "content": "Hi"}]}],
                             "instructions": "Answer in French."}}),
    ("<", "call-reply", {"id": 2, "result": {"messages": [
        {"role": "system", "content": "Be brief.\n\nAnswer in French."}, {"role": "user", "content": "Hi"}]}}),
    (">", "stop", {"type": "stop"}),
)


def session_example() -> str:
    """The example session: the hello as sent, then :data:`SESSION`, one line each."""
    from chatconform.runner.protocol import hello
    from chatconform.runner.protocol.messages import problem

    lines = ["> " + json.dumps(hello(), separators=(",", ":"), ensure_ascii=False)]
    for side, name, message in SESSION:
        wrong = problem(message, name)
        if wrong is not None:
            raise ValueError(f"the example session's {name} breaks its schema: {wrong}")
        lines.append(f"{side} " + json.dumps(message, separators=(",", ":"), ensure_ascii=False))
    return "```\n" + "\n".join(lines) + "\n```"


# --- docs/protocol.md: the history JSON ----------------------------------------------------

#: What a program does with each kind of part or item the history JSON can hold, by its tag
#: (``part_kind`` or ``kind``); what the kind *is* comes from pydantic-ai's own docstring. A
#: kind pydantic-ai adds without a note here stops the generator, naming it.
KIND_NOTES: dict[str, str] = {
    # request parts
    "system-prompt": "`payload`: every one, in history order, then the call's `instructions`, make the one "
                     "system message (or slot) at the start; a blank one is left out.",
    "user-prompt": "Sent in the user's voice.",
    "speech": "Not sent by the reference.",
    "tool-return": "Answers the earlier `tool-call` with its `tool_call_id`. `outcome` `failed` and `retried` "
                   "are errors the provider is told of (`payload.error_flag_kept`); `denied` and `interrupted` "
                   "(pydantic-ai's repair writes it for a call a cancel cut off) are sent as plain results.",
    "retry-prompt": "Never in a history chatconform sends: pydantic-ai reads a stored `retry-prompt` as what "
                    "it meant, a `tool-return` with `outcome: \"retried\"` when it names a `tool_name`, "
                    "else a `retry-feedback`, and writes it so; a `retry-prompt` in a program's result is "
                    "read the same way.",
    "retry-feedback": "Answers no tool call (`retry.cause`: `validation_error`, `no_output`, `model_retry`). "
                      "`payload`: sent as user text.",
    "tool-availability-delta": "A record, not content: not sent.",
    "model-settings-delta": "A record, not content: not sent.",
    "instruction-delta": "A record, not content: not sent. Written by a client, it speaks in the system "
                         "voice: `sanitize` drops it.",
    "instruction-baseline": "A record, not content: not sent; `sanitize` drops it, as `instruction-delta`.",
    "compaction": "In a request: the application's summary (pydantic-ai-harness marks it in `metadata`), "
                  "sent as user text, never as system. In a response: the provider's own item (`content` "
                  "null, its data in `provider_details`), which only that provider takes back: the reference "
                  "does not send it.",
    # response parts
    "text": "A blank one is left out (no provider takes it).",
    "tool-call": "`args`: an object, a JSON string, or left out for none. Each call needs one result in a "
                 "later request; one without (a run cut off while its tools ran) is closed by the reference "
                 "with a result holding pydantic-ai's interrupted text, as pydantic-ai's repair does.",
    "builtin-tool-call": "Run by the provider itself (web search, code execution): only that provider takes "
                         "it back; the reference does not send it.",
    "builtin-tool-return": "Not sent by the reference, as its call.",
    "thinking": "`signature` is the provider's proof that it wrote the block (Anthropic's thinking "
                "signature, Gemini's thought signature): only that provider takes thinking back, and only "
                "with it. chatconform's histories hold thinking without one, and the reference sends no "
                "thinking: Anthropic rejects a replayed block whose signature is missing or altered, the "
                "others have no slot for it. `payload` does not count it lost.",
    "file": "Not sent by the reference.",
    "instruction": "Held by an `instruction-baseline` only.",
    "instruction-digest": "Held by an `instruction-baseline` only.",
    # items
    "structured-content": "Sent as its `content` (the text of `value`).",
    "text-content": "Sent as its `content`; `metadata` is the application's, not sent.",
    "image-url": "Every provider takes an image by link, Bedrock as the URL in text.",
    "audio-url": "Sent in the provider's part for a link of the kind, else as the URL in text (*Files, by "
                 "provider*).",
    "document-url": "As `audio-url`.",
    "video-url": "As `audio-url`.",
    "binary": "`data` is base64 in the URL-safe alphabet (`-`, `_`), as pydantic writes bytes; a data URL "
              "wants the standard one. Bytes of a kind the provider takes in no form are declined (*Files, "
              "by provider*).",
    "uploaded-file": "Only the store of `provider_name` can read it; `payload` histories hold none.",
    "cache-point": "A hint, no content: nothing to send.",
    "web": "In a `text` part's `citations`. Not sent.",
    "document": "In a `text` part's `citations`. Not sent.",
    "content": "In a `text` part's `citations`. Not sent.",
    "marker": "In a `text` part's `citations`. Not sent.",
}

#: Notes on message fields, by ``<message kind>.<field>``.
FIELD_NOTES: dict[str, str] = {
    "request.timestamp": "left out: the previous message's (the first's: `2026-01-05T09:00:00Z`); `null`: none",
    "response.timestamp": "left out: the previous message's",
    "request.instructions": "the instructions a past run used, a record: not sent (the call's `instructions` "
                            "are the current ones)",
    "request.state": "`interrupted`: a cancel cut the tools of its round off; it holds the results that "
                     "finished, maybe none",
    "response.state": "`interrupted`: the run was cancelled while this response streamed: its text may stop "
                      "mid-word, and its calls may have no result, or results pydantic-ai's repair wrote "
                      "(`outcome: \"interrupted\"`). Sent as a complete one is",
    "response.finish_reason": "as the provider reported it; not sent",
    "response.model_name": "the model that answered; not sent",
}


@functools.cache
def _message_schema() -> dict[str, Any]:
    """pydantic-ai's JSON Schema of a history as written (serialization mode: computed fields
    such as an item's ``media_type`` too)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    return ModelMessagesTypeAdapter.json_schema(mode="serialization")


def _tag(definition: dict[str, Any]) -> str | None:
    """The ``kind`` or ``part_kind`` a definition is tagged with, or None."""
    for key in ("kind", "part_kind"):
        const = definition.get("properties", {}).get(key, {}).get("const")
        if isinstance(const, str):
            return const
    return None


def history_kinds() -> dict[str, list[str]]:
    """Every tag the history JSON can hold, with the schema definitions that carry it (a tag
    pydantic-ai gives a subclass too, ``tool-call`` for ``ToolSearchCallPart``, has several),
    in the order a reader meets them: the messages, their parts, then what parts hold."""
    defs = _message_schema()["$defs"]
    found: dict[str, list[str]] = {}
    queue, seen = ["ModelRequest", "ModelResponse"], {"ModelRequest", "ModelResponse"}
    while queue:
        name = queue.pop(0)
        if (tag := _tag(defs[name])) is not None:
            found.setdefault(tag, []).append(name)
        for child in _refs(defs[name]):
            if child not in seen:
                seen.add(child)
                queue.append(child)
    return found


def _refs(node: Any) -> list[str]:
    """The definitions ``node`` refers to, in the order it names them."""
    found: list[str] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "$ref" in item:
                found.append(item["$ref"].rsplit("/", 1)[-1])
            stack.extend(reversed([v for k, v in item.items() if k != "$ref"]))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return list(dict.fromkeys(found))


def _holders() -> dict[str, list[str]]:
    """For each tagged definition, the tags of the tagged definitions that hold it, looking
    through untagged ones (``ToolReturnContent``, ``Citation``)."""
    defs = _message_schema()["$defs"]
    held: dict[str, set[str]] = {}
    for definition in defs.values():
        tag = _tag(definition)
        if tag is None:
            continue
        seen: set[str] = set()
        todo = set(_refs(definition))
        while todo:
            child = todo.pop()
            if child in seen:
                continue
            seen.add(child)
            if _tag(defs[child]) is None:
                todo.update(_refs(defs[child]))
            else:
                held.setdefault(child, set()).add(tag)
    return {name: sorted(tags) for name, tags in held.items()}


def _type_text(node: dict[str, Any], stack: tuple[str, ...] = ()) -> str:
    """A schema node as the tables say it: ``string``, ``time``, an item's tag, ``one of ...``."""
    defs = _message_schema()["$defs"]
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        definition = defs[name]
        if (tag := _tag(definition)) is not None:
            return f"`{tag}`"
        if name in stack:
            return "the same"
        if "properties" in definition:
            fields = list(definition["properties"])
            return "object (" + ", ".join(f"`{f}`" for f in fields[:5]) + (", ..." if len(fields) > 5 else "") + ")"
        return _type_text(definition, (*stack, name))
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{value}`" for value in node["enum"])
    options = node.get("anyOf") or node.get("oneOf")
    if options:
        if any(not option for option in options):  # {}: anything
            return "any JSON"
        if {"type": "string"} in options:  # known values beside any string: a string
            options = [o for o in options if not (o.get("type") == "string" and "enum" in o)]
        said = [_type_text(option, stack) for option in options if option.get("type") != "null"]
        return " or ".join(dict.fromkeys(said))
    kind = node.get("type")
    if kind == "array":
        items = node.get("items")
        if not items:
            return "array"
        inner = _type_text(items, stack)
        return f"array of {f'({inner})' if ' or ' in inner else inner}"
    if kind == "object":
        return "object"
    if kind == "string":
        return {"date-time": "time", "base64url": "base64url"}.get(node.get("format", ""), "string")
    return str(kind) if kind else "any JSON"


def _field_list(name: str) -> str:
    """The fields of a definition: the ones always written first, then the others, each with
    its default where that is not null (what a message or part leaves out)."""
    definition = _message_schema()["$defs"][name]
    required = set(definition.get("required", ()))
    shown = []
    for field, node in definition.get("properties", {}).items():
        if field in ("kind", "part_kind"):
            continue
        text = f"`{field}` {_type_text(node)}"
        if field not in required and node.get("default") is not None:
            text += f" (default `{json.dumps(node['default'])}`)"
        shown.append((field in required, text))
    return "; ".join(text for _, text in sorted(shown, key=lambda pair: not pair[0]))


def _summary(name: str) -> str:
    """The first sentence of pydantic-ai's docstring of a definition, cross-references as code."""
    text = _message_schema()["$defs"][name].get("description", "").split("\n\n")[0].replace("\n", " ")
    text = re.sub(r"\[`([^`]+)`\]\[[^\]]+\]", r"`\1`", text)
    return re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)


def _base(names: list[str]) -> str:
    """Of the definitions that share a tag, the one pydantic-ai loads (the base class)."""
    import pydantic_ai.messages as messages

    classes = {name: getattr(messages, name, None) for name in names}
    for name, cls in classes.items():
        if isinstance(cls, type) and all(isinstance(other, type) and issubclass(other, cls)
                                         for other in classes.values()):
            return name
    return names[0]


def _note(tag: str) -> str:
    if tag not in KIND_NOTES:
        raise ValueError(f"pydantic-ai's history JSON has a kind {tag!r} that {COMMAND.split()[-1]} does not "
                         "describe: add it to KIND_NOTES")
    return KIND_NOTES[tag]


def history_tables() -> str:
    """The history JSON, from pydantic-ai's schema: each message's fields, then every part
    kind and every item kind it can hold, where, with what fields, and what it is for."""
    kinds = history_kinds()
    defs = _message_schema()["$defs"]
    fields = {f"{tag}.{field}" for tag in ("request", "response") for field in defs[_base(kinds[tag])]["properties"]}
    stale = sorted(set(KIND_NOTES) - set(kinds)) + sorted(set(FIELD_NOTES) - fields)
    if stale:
        raise ValueError(f"{COMMAND.split()[-1]} describes what pydantic-ai's history JSON no longer has: "
                         f"{', '.join(stale)}")
    holders = _holders()
    lines = ["| message | field | JSON | note |", "|---|---|---|---|"]
    for tag in ("request", "response"):
        definition = defs[_base(kinds[tag])]
        required = set(definition.get("required", ()))
        for field, node in definition["properties"].items():
            if field == "kind":
                continue
            default = node.get("default")
            said = [FIELD_NOTES[f"{tag}.{field}"]] if f"{tag}.{field}" in FIELD_NOTES else []
            if field not in required and default is not None and f"{tag}.{field}" not in FIELD_NOTES:
                said.append(f"left out: `{json.dumps(default)}`")
            lines.append(f"| `{tag}` | `{field}` | {_cell(_type_text(node))} | {_cell('; '.join(said))} |")
    parts = {tag: names for tag, names in kinds.items() if "part_kind" in defs[names[0]]["properties"]}
    items = {tag: names for tag, names in kinds.items() if tag not in parts and tag not in ("request", "response")}
    for title, group in (("part_kind", parts), ("kind", items)):
        lines += ["", f"| `{title}` | in | what it is | fields | for a program |", "|---|---|---|---|---|"]
        for tag, names in group.items():
            where = sorted({holder for name in names for holder in holders.get(name, ())})
            base = _base(names)
            lines.append(f"| `{tag}` | {', '.join(f'`{w}`' for w in where)} | {_cell(_summary(base))} "
                         f"| {_cell(_field_list(base))} | {_cell(_note(tag))} |")
    return "\n".join(lines)


def files_table() -> str:
    """How each provider takes each kind of file, as bytes and by link, from what the reference
    does with a prompt holding one: the body's part, the URL as text, or declined."""
    from chatconform.errors import UnsendableContent
    from chatconform.lazy import pai
    from chatconform.providers import PROVIDERS
    from chatconform.reference.payload import links_sent_as_text, to_payload

    samples = {"image": ("image/png", "png"), "document": ("application/pdf", "pdf"),
               "audio": ("audio/wav", "wav"), "video": ("video/mp4", "mp4")}
    urls = {"image": pai.ImageUrl, "document": pai.DocumentUrl, "audio": pai.AudioUrl, "video": pai.VideoUrl}
    lines = ["| provider | " + " | ".join(f"{kind} bytes | {kind} link" for kind in samples) + " |",
             "|---|" + "---|---|" * len(samples)]
    for provider, info in PROVIDERS.items():
        cells = []
        for kind, (media_type, extension) in samples.items():
            inline = pai.BinaryContent(data=b"\x00", media_type=media_type)
            link = urls[kind](url=f"https://example.com/file.{extension}")
            for item, parts in ((inline, info.inline_files), (link, info.linked_files)):
                history = [pai.ModelRequest(parts=[pai.UserPromptPart(["Look (u1)", item])])]
                try:
                    to_payload(history, provider=provider)
                except UnsendableContent:
                    cells.append("declined")
                    continue
                if links_sent_as_text(history, provider):
                    cells.append("URL as text")
                else:
                    part = next((name for key, name in parts.items() if key == kind), None)
                    cells.append(f"`{part}`" if part else "yes")
        lines.append(f"| `{provider}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --- mutation scores ----------------------------------------------------------------------

def _scores() -> dict[str, dict[str, Any]]:
    """Each reference module's last score (``tools/mutation-scores.json``), in the file's
    order, then every module ``tools/mutate.py`` measures that has none yet (an empty entry)."""
    scores: dict[str, dict[str, Any]] = json.loads(SCORES.read_text("utf-8")) if SCORES.is_file() else {}
    for module in _measured_modules():
        scores.setdefault(module, {})
    return scores


def mutate_tool() -> Any:
    """``tools/mutate.py``, the script beside this one, as a module."""
    tools = str(Path(__file__).resolve().parent)
    if tools not in sys.path:
        sys.path.insert(0, tools)
    import mutate

    return mutate


def _measured_modules() -> list[str]:
    return list(mutate_tool().guards())


def _ratio(killed: int, counted: int, percent: bool = False) -> str:
    text = f"{killed} / {counted}"
    if percent:
        share = 100.0 * killed / counted if counted else 100.0
        text += " (100%)" if killed == counted else f" ({share:.1f}%)"
    return text


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f}".removesuffix(".0") + " min"


def mutation_summary() -> str:
    """The README's row: each oracle module's mutants killed, of those that can change behaviour."""
    scores = _scores()
    names = [module.removeprefix("chatconform/").removesuffix(".py") for module in scores]
    cells = [_ratio(s["killed"], s["counted"]) if s else "not measured" for s in scores.values()]
    return "\n".join([f"| `chatconform/` | {' | '.join(f'`{n}`' for n in names)} |",
                      "|---|" + "---|" * len(names), f"| killed | {' | '.join(cells)} |"])


def mutation_table() -> str:
    """docs/mutation.md's table: per module, the mutants, the score when first measured and now,
    the equivalent mutants and how long a full run took."""
    lines = ["| module | mutants | before: killed / non-equivalent | after: killed / non-equivalent "
             "| equivalent | full run |", "|---|---|---|---|---|---|"]
    for module, score in _scores().items():
        name = "`" + module.removeprefix("chatconform/") + "`"
        if not score:
            lines.append(f"| {name} | not measured: `python tools/mutate.py --module {module}` | | | | |")
            continue
        before = score.get("before")
        first = _ratio(before[0], before[1], percent=True) if isinstance(before, list) else before or "not measured"
        said = [f"`--jobs {score['jobs']}`"] if score.get("jobs", 1) > 1 else []
        said += [score["note"]] if score.get("note") else []
        run = _duration(score["seconds"]) + (f" ({', '.join(said)})" if said else "")
        lines.append(f"| {name} | {score['mutants']} | {first} | {_ratio(score['killed'], score['counted'], True)} "
                     f"| {score['equivalent']} | {run} |")
    return "\n".join(lines)


# --- the pages ------------------------------------------------------------------------------

#: Each page's generated regions, by name, with what writes them.
REGIONS: dict[str, dict[str, Callable[[], str]]] = {
    "README.md": {"contracts": contracts_table, "providers": providers_table, "mutation": mutation_summary},
    "docs/protocol.md": {"hello": hello_example, "call-input": call_input_table, "call-result": call_result_table,
                         "history": history_tables, "files": files_table, "session": session_example},
    "docs/mutation.md": {"mutation": mutation_table},
}


def _provider_rules() -> str:
    from chatconform.provider_schemas.catalog import markdown

    return markdown()


#: The pages generated whole.
WHOLE: dict[str, Callable[[], str]] = {"docs/provider-rules.md": _provider_rules}


def rewrite(text: str, regions: dict[str, Callable[[], str]], page: str = "the page") -> str:
    """``text`` with each of its marked regions written anew; a ValueError when a region is
    missing, unknown or has no end marker."""
    found = _START.findall(text)
    unknown = sorted(set(found) - set(regions))
    missing = [name for name in regions if name not in found]
    if unknown or missing:
        raise ValueError(f"{page}: " + "; ".join(
            [*(f"no generator for the region {name!r}" for name in unknown),
             *(f"no region {name!r} (add {start_marker(name)} ... {end_marker(name)})" for name in missing)]))
    for name, write in regions.items():
        start, end = start_marker(name), end_marker(name)
        before, found_start, rest = text.partition(start)
        if not found_start or end not in rest:
            raise ValueError(f"{page}: the region {name!r} has no line {end}")
        _, _, after = rest.partition(end)
        text = f"{before}{start}\n{write()}\n{end}{after}"
    return text


def generated(root: Path | None = None) -> dict[str, str]:
    """What every generated page should hold, by its path under ``root`` (this checkout)."""
    root = root or ROOT
    pages = {page: rewrite((root / page).read_text("utf-8"), regions, page) for page, regions in REGIONS.items()}
    pages.update({page: write() for page, write in WHOLE.items()})
    return pages


def differing(pages: dict[str, str], root: Path | None = None) -> list[str]:
    """The pages of ``pages`` whose file under ``root`` (this checkout) does not hold their text."""
    root = root or ROOT
    return [page for page, text in pages.items()
            if not (root / page).is_file() or (root / page).read_text("utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--check", action="store_true", help="exit 1 naming each stale page; write nothing")
    options = parser.parse_args(argv)
    try:
        pages = generated()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    changed = differing(pages)
    if options.check:
        for page in changed:
            print(f"{page} is stale; run: {COMMAND}", file=sys.stderr)
        return 1 if changed else 0
    for page in changed:
        (ROOT / page).write_text(pages[page], "utf-8")
        print(f"wrote {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
