"""Take facts from a public repository's recorded traffic into the evidence corpus (development only).

A cassette recorded against a real API is a fact about the provider: this body shape was
answered 200 by this model on this date, that one got this error. This script reads a
checkout's cassettes with ``validate``'s own reader and writes one recorded interaction per
fact to ``tests/data/evidence/<owner>-<name>.jsonl``, with its source (repository, path,
commit, interaction, date). The bodies are chatconform's own: every free text is replaced by
a short placeholder (blank, empty and trailing-whitespace texts kept as they are: they are
facts), ids keep their form with other characters, inline data shrinks to ``AAAA``, and
tool names and schema keys stay (they are identifiers, not prompts). Of the accepted bodies
only those that show a shape not already kept for the provider are written; every rejection
about the request's messages or tools is kept.

    python tools/evidence.py CHECKOUT --repo owner/name --commit SHA [--out tests/data/evidence]

pydantic-ai's recorded traffic is held out of the corpus (it measures chatconform
independently): paths naming pydantic-ai are never read.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import string
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chatconform.provider_schemas import lint, traffic
from chatconform.provider_schemas.endpoints import endpoint

#: Keys whose string values are the body's structure, not its text: kept as they are.
KEEP = {"role", "type", "model", "media_type", "mimeType", "mime_type", "format", "detail", "status", "name",
        "anthropic_version", "tool_choice", "reasoning_effort", "service_tier", "verbosity", "mode",
        "function_call", "cachePoint", "stop", "encoding", "language", "outcome", "caller"}
#: Keys whose values are ids: the same id always becomes the same new id, of the same form.
IDS = {"id", "tool_use_id", "tool_call_id", "toolUseId", "call_id"}
#: Keys of inline data: shrunk to a few bytes of base64.
DATA = {"data", "bytes", "file_data", "signature", "thoughtSignature", "thought_signature", "encrypted_content"}
#: Keys of a JSON Schema whose values are the schema's structure.
SCHEMA_KEYS = {"properties", "required", "enum", "$defs", "definitions", "propertyOrdering"}
#: Keys whose values are a tool's data (a call's arguments, a result): every string in them is text.
FREE = {"arguments", "input", "args", "response", "output", "result", "partial_json"}
HELD_OUT = re.compile(r"pydantic[_-]ai", re.IGNORECASE)
ALNUM = string.ascii_letters + string.digits


class Rewriter:
    """Rewrites one body: texts to placeholders, ids to ids of the same form."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}
        self.texts = 0

    def new_id(self, old: str) -> str:
        if old not in self.ids:
            digest = hashlib.sha256(old.encode()).digest()
            chars = iter(ALNUM[b % len(ALNUM)] for b in digest * 8)
            head, sep, tail = old.partition("_") if "_" in old[:12] else ("", "", old)
            self.ids[old] = head + sep + "".join(next(chars) if c.isalnum() else c for c in tail)
        return self.ids[old]

    def text(self, old: str) -> str:
        if not old.strip():
            return old
        if old.startswith("data:"):
            return old.split(",", 1)[0] + ",AAAA"
        if re.match(r"^(https?|gs|s3)://", old):
            return "https://example.com/file" + os.path.splitext(old.split("?")[0])[1][:5]
        self.texts += 1
        lead = old[: len(old) - len(old.lstrip())]
        trail = old[len(old.rstrip()):]
        core = f"text {self.texts}"
        for wrapper in ("tool_response", "thinking"):
            if old.strip().startswith(f"<{wrapper}>") and old.strip().endswith(f"</{wrapper}>"):
                core = f"<{wrapper}>{core}</{wrapper}>"
        return lead + core + trail

    def value(self, value: Any, key: str | None = None, in_schema: bool = False, free: bool = False) -> Any:
        if free:
            return self.free(value)
        if key in FREE and not isinstance(value, str):
            return self.free(value)
        if isinstance(value, dict):
            schema = in_schema or key in ("parameters", "input_schema", "inputSchema", "json", "parameters_json_schema",
                                          "parametersJsonSchema", "response_schema", "schema")
            return {k: self.value(v, k, schema and k not in ("description", "title")) if k not in SCHEMA_KEYS
                    else self.schema_part(k, v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(item, key, in_schema) for item in value]
        if not isinstance(value, str):
            return value
        if key in IDS:
            return self.new_id(value)
        if key in DATA:
            return "AAAA" if value else value
        if key == "arguments":
            try:
                return json.dumps(self.free(json.loads(value)))
            except ValueError:
                return self.text(value)
        if key in KEEP or (in_schema and key not in ("description", "title", "default", "examples")):
            return value
        return self.text(value)

    def free(self, value: Any) -> Any:
        """A tool's data: its keys kept, every string a placeholder."""
        if isinstance(value, dict):
            return {k: self.free(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.free(item) for item in value]
        return self.text(value) if isinstance(value, str) else value

    def schema_part(self, key: str, value: Any) -> Any:
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            return {name: self.value(sub, name, True) for name, sub in value.items()}
        return value


def features(provider: str, body: Any) -> set[tuple]:
    """The local shapes one body shows: top-level keys, each role's keys, each block's type, keys
    and the kinds of their values, each pair of neighbouring roles, blank or padded text, and
    the tools' keys."""
    found: set[tuple] = set()
    if not isinstance(body, dict):
        return {("not an object",)}
    found |= {("top", key) for key in body}
    messages = body.get("messages", body.get("contents"))
    previous = None
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        found.add(("message", role, tuple(sorted(message))))
        content = message.get("content", message.get("parts"))
        blocks = content if isinstance(content, list) else [{"text": content}] if isinstance(content, str) else []
        kinds = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type") or next(iter(block), None)
            kinds.append(kind)
            found.add(("block", role, kind, tuple(sorted((key, type(value).__name__) for key, value in block.items()))))
            text = block.get("text")
            if isinstance(text, str) and (not text.strip() or text != text.rstrip()):
                found.add(("text", role, "empty" if not text else "blank" if not text.strip() else "trailing"))
        found.add(("pair", previous, (role, tuple(sorted(set(map(str, kinds)))))))
        previous = (role, tuple(sorted(set(map(str, kinds)))))
    for tool in body.get("tools") or [] if isinstance(body.get("tools"), list) else []:
        if isinstance(tool, dict):
            found.add(("tool", tuple(sorted(tool))))
    return {(provider, *feature) for feature in found}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    parser.add_argument("checkout", help="a checkout (or an extracted archive) of the repository")
    parser.add_argument("--repo", required=True, help="owner/name, as GitHub spells it")
    parser.add_argument("--commit", required=True, help="the commit the checkout is of")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "tests" / "data" / "evidence"))
    args = parser.parse_args(argv)
    seen: set[tuple] = set()
    records = []
    for name in lint._files(args.checkout):
        relative = os.path.relpath(name, args.checkout)
        if HELD_OUT.search(relative):
            continue
        try:
            values = list(lint._values_of(name))
        except traffic.TrafficError:
            continue
        for item in values:
            if not isinstance(item, lint._Body) or not traffic.is_traffic(item.value):
                continue
            for exchange in traffic.exchanges(item.value):
                found = endpoint(exchange.method, exchange.url, exchange.body)
                if found.provider is None or exchange.body is traffic.NOT_JSON or exchange.status is None:
                    continue
                if not (exchange.url or "").startswith("https://") or "localhost" in (exchange.url or ""):
                    continue  # a local proxy: what it forwarded is not known
                accepted = 200 <= exchange.status < 300
                new = features(found.provider, exchange.body)
                if accepted and new <= seen:
                    continue
                message = traffic.answer_message(exchange.answer)
                if not accepted and not (exchange.status in (400, 422) and message
                                         and lint._ABOUT_MESSAGES.search(message)):
                    continue  # a key, a quota, a model name: not a fact about the body
                seen |= new
                body = Rewriter().value(exchange.body)
                response: dict[str, Any] = {"status": {"code": exchange.status}}
                if not accepted:
                    response["parsed_body"] = {"error": {"message": message}}
                when = exchange.date or "date not recorded"
                verb = "accepted" if accepted else "rejected"
                records.append({
                    "fact": f"{found.model or 'a model not named'} {verb} this shape ({exchange.status}, {when})",
                    "source": {"repo": args.repo, "path": relative, "commit": args.commit,
                               "interaction": exchange.index, "date": exchange.date},
                    "request": {"method": "POST", "uri": exchange.url.split("?")[0] if exchange.url else None,
                                "parsed_body": body},
                    "response": response,
                })
    out = Path(args.out) / (args.repo.replace("/", "-") + ".jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n" for record in records))
    print(f"{out}: {len(records)} facts", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
