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
    """The README's row: each reference module's mutants killed, of those that can change behaviour."""
    scores = _scores()
    names = [Path(module).stem for module in scores]
    cells = [_ratio(s["killed"], s["counted"]) if s else "not measured" for s in scores.values()]
    return "\n".join([f"| `chatconform/reference/` | {' | '.join(f'`{n}`' for n in names)} |",
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
        first = _ratio(*before, percent=True) if isinstance(before, list) else before or "not measured"
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
                         "session": session_example},
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
