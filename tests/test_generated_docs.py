"""The docs' tables and examples are what ``tools/generate_docs.py`` writes from the catalogs,
and what it writes says what the catalogs hold."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from chatconform.contracts import all_contracts
from chatconform.providers import PROVIDERS
from chatconform.runner.protocol import hello

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def docs():
    spec = importlib.util.spec_from_file_location("_generate_docs_tool", ROOT / "tools" / "generate_docs.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def _rows(table: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in table.splitlines()[2:]]


def test_every_generated_page_is_current(docs):
    stale = docs.differing(docs.generated())
    assert not stale, f"{', '.join(stale)}: stale; run: {docs.COMMAND}"


def test_a_page_edited_by_hand_is_stale_and_the_check_names_it(docs, tmp_path, monkeypatch, capsys):
    for page in docs.generated():
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / page, tmp_path / page)
    protocol = tmp_path / "docs" / "protocol.md"
    protocol.write_text(protocol.read_text("utf-8").replace("| `trim` | `trim` |", "| `trim` | `cut` |"), "utf-8")
    assert docs.differing(docs.generated(tmp_path), tmp_path) == ["docs/protocol.md"]

    monkeypatch.setattr(docs, "ROOT", tmp_path)
    assert docs.main(["--check"]) == 1
    assert capsys.readouterr().err == f"docs/protocol.md is stale; run: {docs.COMMAND}\n"
    assert "| `trim` | `cut` |" in protocol.read_text("utf-8")  # --check writes nothing
    assert docs.main([]) == 0 and docs.main(["--check"]) == 0
    assert "| `trim` | `cut` |" not in protocol.read_text("utf-8")


def test_a_region_is_rewritten_and_the_prose_around_it_kept(docs):
    text = f"prose before\n{docs.start_marker('x')}\nold row\n{docs.end_marker('x')}\nprose after\n"
    assert docs.rewrite(text, {"x": lambda: "new row"}) == text.replace("old row", "new row")


START = "<!-- generated: {}; regenerate with: python tools/generate_docs.py -->\n"


@pytest.mark.parametrize(("text", "error"), [
    ("no markers\n", "no region 'x'"),
    (START.format("y") + "<!-- end generated: y -->\n", "no generator for the region 'y'"),
    (START.format("x") + "row\n", "has no line <!-- end generated: x -->"),
])
def test_a_region_missing_unknown_or_unended_is_an_error(docs, text, error):
    with pytest.raises(ValueError, match=re.escape(error)):
        docs.rewrite(text, {"x": lambda: "row"}, "page.md")


def test_the_contract_table_has_each_contract_with_its_own_checks(docs):
    rows = _rows(docs.contracts_table())
    assert [row[0] for row in rows] == [f"[`{name}`](docs/contracts/{name}.md)" for name in all_contracts()]
    for row, contract in zip(rows, all_contracts().values(), strict=True):
        own = [check.id.split(".", 1)[1] for check in contract.checks if check.evaluate is not None]
        assert row[2] == ", ".join(f"`{short}`" for short in own)
        assert "no_crash" not in row[2]  # the engine's own checks are said once, under the table
        if not contract.composes:
            assert all(call.method in row[1] for call in contract.calls())


def test_the_call_tables_have_a_row_per_method_each_contract_carries(docs):
    carried = {(name, method.name) for name, contract in all_contracts().items() for method in contract.wire()}
    for table in (docs.call_input_table(), docs.call_result_table()):
        assert {(row[0].strip("`"), row[1].strip("`")) for row in _rows(table)} == carried


def test_an_input_cell_says_what_the_schema_says(docs):
    schema = {"type": "object", "required": ["history", "outcome"], "properties": {
        "history": {"$ref": "#/$defs/history"}, "outcome": {"enum": ["success", "timeout"]},
        "note": {"description": "Left out when there is none.", "type": "string"}}}
    assert docs._input_cell(schema) == ('`{"history": [...], "outcome": "success", "note": "..."}`. '
                                        "`outcome`: one of `success`, `timeout`. "
                                        "`note` (optional): left out when there is none.")


def test_the_hello_examples_are_the_hello_chatconform_sends(docs):
    block = docs.hello_example().removeprefix("```json\n").removesuffix("\n```")
    assert json.loads(block) == hello()
    first = docs.session_example().splitlines()[1]
    assert first.startswith("> ") and json.loads(first[2:]) == hello()


def test_the_example_session_follows_the_protocol_schemas(docs, monkeypatch):
    assert len(docs.session_example().splitlines()) == len(docs.SESSION) + 3
    broken = (docs.SESSION[0], (">", "call", {"type": "call", "id": 0, "contract": "thread"}))
    monkeypatch.setattr(docs, "SESSION", broken)
    with pytest.raises(ValueError, match="the example session's call breaks its schema"):
        docs.session_example()


def test_the_provider_table_links_each_provider_to_its_section_of_the_rules_page(docs):
    rows = _rows(docs.providers_table())
    assert [row[0] for row in rows] == [f"`{provider}`" for provider in PROVIDERS]
    page = docs.WHOLE["docs/provider-rules.md"]()
    anchors = {docs._anchor(line[3:]) for line in page.splitlines() if line.startswith("## ")}
    for row in rows:
        assert re.fullmatch(r"\[\d+ rules?\]\(docs/provider-rules\.md#([\w-]+)\)", row[3]).group(1) in anchors


def test_github_anchors(docs):
    assert docs._anchor("Z.ai / Zhipu GLM chat completions (`glm`)") == "zai--zhipu-glm-chat-completions-glm"
    assert docs._anchor("Qwen3.5+ chat template served by vLLM (`qwen-vllm`)") == \
        "qwen35-chat-template-served-by-vllm-qwen-vllm"


def test_the_mutation_tables_show_every_module_mutate_measures(docs, tmp_path, monkeypatch):
    scores = json.loads(docs.SCORES.read_text("utf-8"))
    modules = docs._measured_modules()
    assert set(scores) <= set(modules), "a module of tools/mutation-scores.json that mutate.py no longer measures"
    table = docs.mutation_table()
    assert all(f"| `{module.removeprefix('chatconform/')}` | {scores[module]['mutants']} |" in table
               for module in scores)
    # A module not measured yet says so, with the command that measures it.
    assert all(f"| `{module.removeprefix('chatconform/')}` | not measured: `python tools/mutate.py --module {module}` |"
               in table for module in set(modules) - set(scores))

    del scores[modules[-1]]
    (tmp_path / "scores.json").write_text(json.dumps(scores), "utf-8")
    monkeypatch.setattr(docs, "SCORES", tmp_path / "scores.json")
    assert f"| `{modules[-1].removeprefix('chatconform/')}` | not measured" in docs.mutation_table()
    assert docs.mutation_summary().splitlines()[-1].endswith("| not measured |")


def test_mutate_keeps_a_score_with_its_first_measurement(docs, tmp_path):
    mutate = docs.mutate_tool()
    path = tmp_path / "scores.json"
    path.write_text(json.dumps({"a.py": {"mutants": 3, "killed": 1, "counted": 3, "equivalent": 0, "seconds": 9,
                                         "jobs": 1, "before": [1, 3], "note": "a busy machine"}}), "utf-8")
    figures = {"mutants": 4, "killed": 3, "counted": 3, "equivalent": 1}
    mutate.record_score("b.py", figures, 61.4, 2, path)
    mutate.record_score("a.py", figures, 12.0, 1, path)
    assert path.read_text("utf-8").splitlines()[1].startswith('  "a.py": {"mutants": 4,')  # one module a line
    assert json.loads(path.read_text("utf-8")) == {
        "a.py": {**figures, "seconds": 12, "jobs": 1, "before": [1, 3]},
        "b.py": {**figures, "seconds": 61, "jobs": 2}}


def _region(page: str, name: str) -> str:
    text = (ROOT / page).read_text("utf-8")
    start = f"<!-- generated: {name}; regenerate with: python tools/generate_docs.py -->"
    return text.partition(start)[2].partition(f"<!-- end generated: {name} -->")[0]


def test_every_kind_and_message_field_the_history_json_can_hold_is_on_the_protocol_page():
    """Read from pydantic-ai's own schema of a history: a kind a new release adds fails here
    until the page (regenerated, with a note for it) describes it."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    defs = ModelMessagesTypeAdapter.json_schema(mode="serialization")["$defs"]
    tags = {definition["properties"][key]["const"] for definition in defs.values()
            for key in ("kind", "part_kind") if "const" in definition.get("properties", {}).get(key, {})}
    assert {"thinking", "retry-prompt", "retry-feedback", "document-url", "audio-url", "video-url"} <= tags
    region = _region("docs/protocol.md", "history")
    rows = {line.split(" | ")[0].strip("| `") for line in region.splitlines() if line.startswith("| `")}
    assert tags - {"request", "response"} - rows == set()
    fields = {(tag, field) for tag, name in (("request", "ModelRequest"), ("response", "ModelResponse"))
              for field in defs[name]["properties"] if field != "kind"}
    shown = {tuple(cell.strip(" `") for cell in line.split(" | ")[:2]) for line in region.splitlines()
             if line.startswith(("| `request` |", "| `response` |"))}
    assert {(tag.strip("| `"), field) for tag, field in shown} >= fields


def test_a_kind_without_a_note_stops_the_generator(docs, monkeypatch):
    monkeypatch.setattr(docs, "KIND_NOTES", {k: v for k, v in docs.KIND_NOTES.items() if k != "thinking"})
    with pytest.raises(ValueError, match=re.escape("a kind 'thinking' that tools/generate_docs.py does not describe")):
        docs.history_tables()
    monkeypatch.setattr(docs, "KIND_NOTES", {**docs.KIND_NOTES, "thinking": "x", "hologram": "gone"})
    with pytest.raises(ValueError, match="no longer has: hologram"):
        docs.history_tables()


def test_the_files_table_agrees_with_each_providers_profile(docs):
    """The table is what the reference does; the profiles declare which kinds each provider
    takes as bytes and by link: the two must say the same."""
    rows = _rows(docs.files_table())
    assert [row[0] for row in rows] == [f"`{provider}`" for provider in PROVIDERS]
    for row, info in zip(rows, PROVIDERS.values(), strict=True):
        assert row[1] == "yes" and row[2] == ("URL as text" if info.dialect == "bedrock_converse" else "yes")
        for index, kind in enumerate(("document", "audio", "video")):
            inline, link = row[3 + 2 * index], row[4 + 2 * index]
            assert inline == (f"`{info.inline_files[kind]}`" if kind in info.inline_files else "declined")
            assert link == (f"`{info.linked_files[kind]}`" if kind in info.linked_files else "URL as text")


def test_a_blank_system_block_is_the_anthropic_rejection_the_page_cites():
    from chatconform.provider_schemas import validate
    from chatconform.reference.payload import to_payload

    history = [{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Hi"}]}]
    case = all_contracts()["payload"].case_from_json({"history": history, "instructions": ""})
    body = to_payload(case.history, provider="anthropic", instructions=case.instructions)
    assert "system" not in body  # the reference leaves blank instructions out
    problems = validate({**body, "system": [{"type": "text", "text": ""}]}, "anthropic")
    assert [(p.rule, p.severity) for p in problems] == [("A7", "error")]
    assert "A7: `system: text content blocks must contain non-whitespace text`" in \
        (ROOT / "docs" / "protocol.md").read_text("utf-8")
