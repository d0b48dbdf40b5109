"""The ``sanitize`` contract: ``sanitize(history) -> history`` on a history a client sent.

The input is what a browser or another untrusted client posts back as
``message_history`` (:func:`~chatconform.strategies.hostile_histories`): client-written
system prompts and instructions, file URLs with schemes a provider would fetch with the
server's credentials, ``force_download`` flags, uploaded-file references, unresolved tool
calls at the end that a promptless run would execute. The checks judge that the result
keeps none of that, keeps everything else, and is a fixed point. The rules are the
reference's (:mod:`chatconform.reference.sanitize`), which are pydantic-ai's
``sanitize_messages`` defaults.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from chatconform.errors import Violation
from chatconform.frame.contract import Example
from chatconform.frame.history_contract import HistoryTransformContract, check_fixed_point
from chatconform.frame.lifecycle import Conversation, LifecycleStep
from chatconform.history import and_more, describe_at, first_difference, list_difference, message_text
from chatconform.lazy import pai
from chatconform.reference.sanitize import (
    ALLOWED_SCHEMES,
    is_no_output_feedback,
    sanitize,
    system_voice_parts,
    url_scheme,
)
from chatconform.strategies.hostile import expand_hostile_history, hostile_histories
from chatconform.strategies.lifecycles import Step

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage


def _client(conversation: Conversation, step: Step) -> Any:
    """A client round trip: the history a browser posts back is sanitized, and the application
    puts its standing prompt back in front where the sanitized history lost it."""
    mine = conversation.with_standing_prompt(conversation.call("sanitize", conversation.history))
    kept = conversation.with_standing_prompt(conversation.reference("sanitize", conversation.history))
    return conversation.record(mine, kept)


class SanitizeContract(HistoryTransformContract):
    name = "sanitize"
    method = "sanitize"
    signature = "sanitize(history) -> history"
    crash_rationale = ("a sanitizer that raises on what a client sent turns one malformed file URL into a "
                       "failed request for the whole conversation: Python's urlsplit raises ValueError "
                       "'Invalid IPv6 URL' on 'http://[' (https://docs.python.org/3/library/urllib.parse.html"
                       "#urllib.parse.urlsplit), and pydantic-ai's sanitize_messages calls it on every file URL")
    mutation_rationale = ("a sanitizer that strips parts in place edits the history the server may still "
                          "store or log as the client sent it, and the caller's copy it meant to keep")
    listing_order = 40
    result_description = "The result of sanitize: the history as kept, in the same JSON as the input history."
    reference_module = "chatconform.reference.sanitize"
    guard_tests = ("tests/contracts/test_sanitize.py",)
    lifecycle_steps = (LifecycleStep("client", "a client round trip: the posted history goes through sanitize",
                                     order=30, methods=("sanitize",), play=_client),)

    def transform(self, history):
        return sanitize(history)

    def histories(self):
        return hostile_histories()

    def expand(self, seed, size):
        return expand_hostile_history(seed, size)


CONTRACT = SanitizeContract()


# -- where files are ---------------------------------------------------------------------

def _nested(value: Any) -> Iterator[Any]:
    """Every value inside tool-result content, lists and dicts walked."""
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _nested(item)
    elif isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
        for item in value:
            yield from _nested(item)
    else:
        yield value


def _file_refs(history: Sequence[ModelMessage]) -> Iterator[tuple[str, Any]]:
    """(where, item) for every file URL and uploaded file of the history."""
    for index, message in enumerate(history):
        for k, part in enumerate(message.parts):
            if isinstance(part, pai.UserPromptPart) and not isinstance(part.content, str):
                items: Iterator[Any] = iter(part.content)
            elif isinstance(part, (pai.ToolReturnPart, pai.NativeToolReturnPart)):
                items = _nested(part.content)
            else:
                continue
            for item in items:
                if isinstance(item, (pai.FileUrl, pai.UploadedFile)):
                    yield f"message {index} part {k} ({part.part_kind})", item


def _files(ex: Example) -> list[tuple[str, Any]]:
    return ex.once("files", lambda: list(_file_refs(ex.output)))


# -- the checks --------------------------------------------------------------------------

@CONTRACT.check(
    "no_system_voice",
    title="nothing of the result speaks in the system voice",
    rationale="the system prompt is the server's: a client that can send a SystemPromptPart, instructions "
              "or 'no_output' retry feedback (rendered as system text) overrides the agent's behaviour "
              "(pydantic-ai sanitize_messages, https://github.com/pydantic/pydantic-ai/pull/6169)",
)
def no_system_voice(ex: Example) -> None:
    for index, message in enumerate(ex.output):
        if not isinstance(message, pai.ModelRequest):
            continue
        if message.instructions:
            raise Violation(f"message {index} keeps the client's instructions",
                            expected="instructions=None", actual=message.instructions[:200])
        for part in message.parts:
            if isinstance(part, system_voice_parts()) or is_no_output_feedback(part):
                raise Violation(f"message {index} keeps a {type(part).__name__} the client sent",
                                expected="no system-voice part", actual=repr(part)[:300])


@CONTRACT.check(
    "file_url_schemes",
    title="every file URL left has the scheme http or https (any case, padding ignored)",
    rationale="a provider fetches s3://, gs:// and file URLs with the server's own credentials, and a "
              "server that downloads a file: or data: URL reads its own disk; pydantic-ai drops non-http(s) "
              "schemes from client history (https://github.com/pydantic/pydantic-ai/pull/6169)",
)
def file_url_schemes(ex: Example) -> None:
    urls = [(where, item) for where, item in _files(ex) if isinstance(item, pai.FileUrl)]
    bad = [(where, item.url) for where, item in urls if url_scheme(item.url) not in ALLOWED_SCHEMES]
    if bad:
        where, url = bad[0]
        raise Violation(f"{where} keeps the file URL {url[:200]!r}" + and_more(bad, "disallowed URL"),
                        expected=f"a scheme in {sorted(ALLOWED_SCHEMES)}", actual=url_scheme(url) or "no scheme")


@CONTRACT.check(
    "force_download_reset",
    title="every file URL left has force_download=False",
    rationale="force_download=True makes the server download the file itself and 'allow-local' lifts its "
              "private-address block, an SSRF path from client history "
              "(https://github.com/pydantic/pydantic-ai/issues/5535, fixed in PR #5571)",
)
def force_download_reset(ex: Example) -> None:
    for where, item in _files(ex):
        if isinstance(item, pai.FileUrl) and item.force_download is not False:
            raise Violation(f"{where} keeps force_download={item.force_download!r} on {item.url[:200]!r}",
                            expected=False, actual=item.force_download)


@CONTRACT.check(
    "no_uploaded_files",
    title="no uploaded-file reference is left",
    rationale="an UploadedFile names an object in the server's provider storage (an S3 or GCS URI, a "
              "file id), which the provider reads with the server's credentials; pydantic-ai drops them "
              "from client history unless allowed (https://github.com/pydantic/pydantic-ai/pull/6169)",
)
def no_uploaded_files(ex: Example) -> None:
    for where, item in _files(ex):
        if isinstance(item, pai.UploadedFile):
            raise Violation(f"{where} keeps the uploaded file {item.file_id!r} ({item.provider_name})",
                            expected="no UploadedFile", actual=item.file_id)


@CONTRACT.check(
    "no_trailing_unresolved_calls",
    title="no response after the last request holds a tool call",
    rationale="a promptless run executes the calls a history ends with, so a client could have any tool "
              "run by sending a call; a trailing request that sanitizes to nothing exposes the response "
              "before it (https://github.com/pydantic/pydantic-ai/pull/6407), and a run merges adjacent "
              "responses that carry no model name, so every trailing response counts",
)
def no_trailing_unresolved_calls(ex: Example) -> None:
    index = len(ex.output) - 1
    while index >= 0 and isinstance(ex.output[index], pai.ModelResponse):
        calls = [p for p in ex.output[index].parts if isinstance(p, pai.ToolCallPart)]
        if calls:
            raise Violation(f"message {index}, after the last request, keeps the call {calls[0].tool_name} "
                            f"({calls[0].tool_call_id})", expected="no trailing tool call",
                            actual=[f"{c.tool_name} {c.tool_call_id}" for c in calls[:5]])
        index -= 1


@CONTRACT.check(
    "idempotent",
    title="sanitizing the result again changes nothing",
    rationale="servers sanitize at every boundary a history crosses (UI adapter, store, agent run); a "
              "sanitizer that finds more to strip on a second pass left something out on the first (a "
              "dropped trailing request exposing a dangling call, https://github.com/pydantic/pydantic-ai/pull/6407)",
)
def idempotent(ex: Example) -> None:
    check_fixed_point(ex)


@CONTRACT.check(
    "keeps_the_rest",
    title="the result differs from the input only in what the rules strip",
    rationale="a sanitizer that drops more than it must loses the user's content: a case-sensitive "
              "allow-list drops HTTPS:// images (URL schemes are case-insensitive, "
              "https://www.rfc-editor.org/rfc/rfc3986#section-3.1), a tail rule that drops whole responses "
              "loses the assistant's text",
)
def keeps_the_rest(ex: Example) -> None:
    # The rules applied to both sides: what the implementation stripped beyond them (or
    # changed otherwise) shows; what it failed to strip is the other checks' to judge.
    expected = ex.reference
    actual = ex.once("output_sanitized", lambda: sanitize(ex.output))
    if expected != actual:
        first = first_difference(expected, actual)
        raise Violation("apart from what the rules strip, the result differs from the input: "
                        + list_difference(expected, actual, "message", show=message_text),
                        expected=describe_at(expected, first), actual=describe_at(actual, first))


@CONTRACT.check(
    "matches_reference",
    title="the result equals the reference's",
    rationale="the rules leave one answer: what pydantic-ai's sanitize_messages strips with its defaults, "
              "through every trailing response",
)
def matches_reference(ex: Example) -> None:
    if ex.output != ex.reference:
        first = first_difference(ex.reference, ex.output)
        raise Violation("the result differs from the reference: "
                        + list_difference(ex.reference, ex.output, "message", show=message_text),
                        expected=describe_at(ex.reference, first), actual=describe_at(ex.output, first))


