"""The hostile-history strategy: valid, reaching every kind of edit, deterministic, shrinking."""

import pytest
from hypothesis import Phase, find, given, settings
from hypothesis.errors import InvalidArgument
from pydantic_ai.messages import (
    FileUrl,
    InstructionDeltaPart,
    ModelRequest,
    ModelResponse,
    NativeToolReturnPart,
    RetryFeedbackPart,
    SystemPromptPart,
    TextContent,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
)

from chatconform.history import history_from_json, history_to_json
from chatconform.reference.repair import match_calls
from chatconform.reference.sanitize import url_scheme
from chatconform.strategies import expand_hostile_history, hostile_histories

OFF = dict(system_voice=False, file_urls=False, uploaded_files=False, metadata=False, unresolved_calls=False,
           orphan_results=False, duplicate_ids=False)
#: Whether a shape is reached (the first example that has it; no shrinking).
REACH = settings(max_examples=300, derandomize=True, database=None, deadline=None, phases=[Phase.generate])
FIND = settings(max_examples=300, derandomize=True, database=None, deadline=None)


def _parts(history):
    return [part for message in history for part in message.parts]


def _items(history):
    """User-prompt items and tool-result contents, one level of nesting walked."""
    for part in _parts(history):
        if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
            yield from part.content
        elif isinstance(part, (ToolReturnPart, NativeToolReturnPart)):
            content = part.content
            values = content if isinstance(content, list) else [content]
            for value in values:
                if isinstance(value, dict):
                    for inner in value.values():
                        yield from inner if isinstance(inner, list) else [inner]
                        if isinstance(inner, list):
                            yield from (v.get("file") for v in inner if isinstance(v, dict))
                else:
                    yield value


@settings(max_examples=40, derandomize=True, database=None, deadline=None)
@given(hostile_histories(max_bulk_turns=40))
def test_hostile_histories_load_back_from_the_json_a_failure_saves(history):
    assert history
    assert history_from_json(history_to_json(history), "history") == history


@pytest.mark.parametrize(("flag", "found"), [
    ("system_voice", lambda h: any(isinstance(p, (SystemPromptPart, InstructionDeltaPart)) for p in _parts(h))
     and any(isinstance(m, ModelRequest) and m.instructions for m in h)
     and any(isinstance(p, RetryFeedbackPart) and p.retry.cause == "no_output" for p in _parts(h))),
    ("file_urls", lambda h: {url_scheme(i.url) for i in _items(h) if isinstance(i, FileUrl)} >= {"https", "file", ""}
     and any(isinstance(i, FileUrl) and i.force_download == "allow-local" for i in _items(h))),
    ("uploaded_files", lambda h: any(isinstance(i, UploadedFile) for i in _items(h))),
    ("metadata", lambda h: any(isinstance(i, TextContent) and i.metadata for i in _items(h))),
    ("unresolved_calls", lambda h: sum(isinstance(m, ModelResponse) for m in h[-3:]) >= 2
     and any(isinstance(p, ToolCallPart) for m in h[-3:-1] for p in m.parts)),
    ("orphan_results", lambda h: bool(match_calls(h).orphans)),
    ("duplicate_ids", lambda h: bool(match_calls(h).second_answers)),
])
def test_each_kind_of_edit_is_reached(flag, found):
    find(hostile_histories(**{**OFF, flag: True}, max_bulk_turns=0), found, settings=REACH)


@settings(max_examples=20, derandomize=True, database=None, deadline=None)
@given(hostile_histories(**OFF, max_bulk_turns=0))
def test_every_edit_off_gives_the_plain_generated_history(history):
    written = [p for p in _parts(history) if "(x" in str(getattr(p, "content", ""))]
    assert history and written == [] and not match_calls(history).orphans


def test_a_failure_shrinks_to_the_one_edit_on_a_short_history():
    def client_system_prompt(history):
        return any(isinstance(p, SystemPromptPart) and "(x" in p.content for p in _parts(history))

    history = find(hostile_histories(), client_system_prompt, settings=FIND)
    assert len(history) <= 2, [m.kind for m in history]
    assert sum(isinstance(p, SystemPromptPart) for p in _parts(history)) == 1


@pytest.mark.parametrize(("argument", "value"), [("system_voice", 1), ("max_edits", -1), ("max_bulk_turns", "9"),
                                                 ("odd_text", None)])
def test_bad_arguments_name_the_parameter(argument, value):
    with pytest.raises(InvalidArgument, match=argument):
        hostile_histories(**{argument: value}).example()


def test_expand_hostile_history_is_deterministic_about_the_size_and_hostile():
    history = expand_hostile_history(7, 10_000)  # two hundred edits, every kind several times
    assert history == expand_hostile_history(7, 10_000)
    assert 10_000 <= len(history) <= 10_500
    matching = match_calls(history)
    assert matching.orphans and matching.second_answers and matching.unanswered
    assert any(isinstance(i, FileUrl) and url_scheme(i.url) not in ("http", "https") for i in _items(history))
