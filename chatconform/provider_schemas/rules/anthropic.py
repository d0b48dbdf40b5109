"""Anthropic Messages: turn order (A4, A5), tool_use/tool_result pairing (A8, A9, A15), the last message
(A10, A11), a blank text block beside others (A18), thinking blocks (A20, A21); across requests, the
thinking blocks an answer returned come back as they were (A22, A23, ``replayed``)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ..problems import Problem, path_tokens
from .common import (
    ALTERNATION_NEXT_ROLES,
    BOTH,
    SCHEMA,
    SEQUENCE,
    Family,
    ModelDependence,
    PendingCalls,
    Report,
    RuleInfo,
    answer_values,
    as_dict,
    as_list,
    as_str,
    role_of,
    rules,
    thinking_on,
)

A2 = "messages.{i}.role: Input should be 'user' or 'assistant'"
# Only these models accept role "system" inside messages (mid-conversation system blocks).
SYSTEM_ROLE_MODELS = ("claude-opus-4-8",)
A4 = 'messages: roles must alternate between "user" and "assistant", but found multiple "{role}" roles in a row'
A5 = 'messages: first message must use the "user" role'
A6 = "messages.{i}: all messages must have non-empty content except for the optional final assistant message"
A8 = (
    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)
A9 = (
    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)
A10 = "messages: final assistant content cannot end with trailing whitespace"
A20 = ("messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` "
       "is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of "
       "`tool_use` and `tool_result` blocks).")
A21 = "messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
A22 = A21
A23 = ("messages.{i}.content.{j}: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be "
       "modified. These blocks must remain as they were in the original response.")
A15 = "messages.{i}.content.{j}: `tool_use` ids must be unique"
A11 = "This model does not support assistant message prefill. The conversation must end with a user message."
A18 = ("messages: text content blocks must contain non-whitespace text (a blank text block beside other blocks of "
       "an assistant message: claude-haiku-4-5 accepted one in 2026-04, other models are not known)")


def _blocks(message: dict, i: int) -> list[tuple[int, int | None, Any]]:
    """(message index, block index, block) of a message; string content is one text block."""
    content = message.get("content")
    if isinstance(content, str):
        return [(i, None, {"type": "text", "text": content})]
    return [(i, j, block) for j, block in enumerate(as_list(content))]


def _block_type(block: Any) -> str | None:
    return as_str(block.get("type")) if isinstance(block, dict) else None


def _report_a9(pending: PendingCalls, report: Report) -> None:
    missing = pending.unanswered()
    if missing:
        i = pending.opened[missing[0]]
        report.error("A9", ["messages", i], A9.format(i=i, ids=", ".join(missing)))


def _beside_other_blocks(message: Any) -> bool:
    """An assistant message holding a block that is not blank text (a tool_use, say)."""
    if role_of(message) != "assistant" or not isinstance(message.get("content"), list):
        return False
    return any(_block_type(block) != "text" or (as_str(block.get("text")) or "").strip()
               for block in message["content"] if isinstance(block, dict))


def refine(body: dict, problems: list[Problem]) -> list[Problem]:
    """A18: a blank text block beside other blocks of an assistant message is a warning, not A7:
    claude-haiku-4-5 answered an assistant turn of [" ", tool_use, tool_use] (llm-anthropic
    recorded it, 2026-04-05); the rejections of A7 were of user text, system text and
    assistant messages of blank text alone."""
    messages = as_list(body.get("messages"))
    out = []
    for problem in problems:
        tokens = path_tokens(problem.path)
        if (problem.rule == "A7" and len(tokens) == 5 and tokens[0] == "messages" and tokens[2] == "content"
                and isinstance(tokens[1], int) and tokens[1] < len(messages)
                and _beside_other_blocks(messages[tokens[1]])):
            problem = replace(problem, rule="A18", severity="warning", message=A18)
        out.append(problem)
    return out


def _thinking(messages: list, body: dict, report: Report) -> None:
    """A21: a thinking block with an empty signature (a stream cut before its signature came);
    A20: with thinking on, the last assistant message, when it holds tool_use answered by the
    message after it, starts with its thinking block."""
    for i, message in enumerate(messages):
        if role_of(message) == "assistant":
            for _, j, block in _blocks(message, i):
                if _block_type(block) == "thinking" and not (as_str(block.get("signature")) or "").strip():
                    report.error("A21", ["messages", i, "content", j], A21.format(i=i, j=j))
    if not thinking_on(body, report.reasoning):
        return
    last = max((i for i, m in enumerate(messages) if role_of(m) == "assistant"), default=None)
    if last is None or last == len(messages) - 1:
        return
    blocks = [block for _, _, block in _blocks(messages[last], last)]
    if any(_block_type(b) == "tool_use" for b in blocks) and _block_type(blocks[0]) not in (
            "thinking", "redacted_thinking"):
        report.error("A20", ["messages", last, "content", 0], A20.format(i=last, found=_block_type(blocks[0])))


_THINKING = ("thinking", "redacted_thinking")


def _answered_blocks(text: str) -> list[dict]:
    """The content blocks of one recorded answer: a message, or its stream's blocks put
    together from their start and delta events."""
    blocks: dict[int, dict] = {}
    for value in answer_values(text):
        event = as_dict(value)
        kind, index = event.get("type"), event.get("index")
        if kind == "message":
            return [block for block in as_list(event.get("content")) if isinstance(block, dict)]
        if kind == "content_block_start" and isinstance(index, int):
            blocks[index] = dict(as_dict(event.get("content_block")))
        elif kind == "content_block_delta" and index in blocks:
            block, delta = blocks[index], as_dict(event.get("delta"))
            if delta.get("type") == "thinking_delta":
                block["thinking"] = (as_str(block.get("thinking")) or "") + (as_str(delta.get("thinking")) or "")
            elif delta.get("type") == "signature_delta":
                block["signature"] = delta.get("signature")
            elif delta.get("type") == "text_delta":
                block["text"] = (as_str(block.get("text")) or "") + (as_str(delta.get("text")) or "")
    return [blocks[i] for i in sorted(blocks)]


def _kept(block: Any) -> tuple:
    """What a thinking block must bring back unchanged: its text and signature (its data)."""
    if _block_type(block) == "redacted_thinking":
        return ("redacted_thinking", block.get("data"))
    return ("thinking", block.get("thinking"), block.get("signature"))


def _same_turn(message: dict, i: int, blocks: list[dict]) -> bool:
    """Whether an assistant message of the body is the answer ``blocks`` sent back: they share a
    tool_use id, or (with no tool_use) their text is the same and not empty."""
    sent = _blocks(message, i)
    ids = {as_str(b.get("id")) for _, _, b in sent if _block_type(b) == "tool_use"} - {None}
    answered = {as_str(b.get("id")) for b in blocks if _block_type(b) == "tool_use"} - {None}
    if ids or answered:
        return bool(ids & answered)
    text = "".join(as_str(b.get("text")) or "" for _, _, b in sent if _block_type(b) == "text")
    return bool(text) and text == "".join(as_str(b.get("text")) or "" for b in blocks if _block_type(b) == "text")


def replayed(body: dict, model: str | None, earlier: list[str], report: Report) -> None:
    """With thinking on, an assistant message that sends back an answer holding thinking blocks
    (known by its tool_use ids or its text) brings them back as they were. A22: a thinking
    block with the text or the signature of one returned, not both, has an invalid signature.
    A23: the latest assistant message, while its tool round goes on, keeps every thinking block
    returned, in order (A20 judges one that keeps none)."""
    if not thinking_on(body, report.reasoning):
        return
    answers = [blocks for blocks in map(_answered_blocks, earlier)
               if any(_block_type(b) in _THINKING for b in blocks)]
    messages = as_list(body.get("messages"))
    assistants = [i for i, m in enumerate(messages) if role_of(m) == "assistant"]
    for i in assistants:
        returned = next((blocks for blocks in answers if _same_turn(messages[i], i, blocks)), None)
        if returned is None:
            continue
        kept = [_kept(b) for b in returned if _block_type(b) in _THINKING]
        blocks = [block for _, _, block in _blocks(messages[i], i)]
        sent = [(j, block) for _, j, block in _blocks(messages[i], i) if _block_type(block) in _THINKING]
        if (i == assistants[-1] and i < len(messages) - 1 and _block_type(blocks[0]) in _THINKING
                and any(_block_type(b) == "tool_use" for b in blocks)):
            changed = next((j for n, (j, block) in enumerate(sent) if n >= len(kept) or _kept(block) != kept[n]),
                           None)
            if changed is None and len(sent) < len(kept):
                changed = sent[-1][0] + 1 if isinstance(sent[-1][0], int) else None
            if changed is not None:
                report.error("A23", ["messages", i, "content", changed], A23.format(i=i, j=changed))
            continue
        texts = {k[1] for k in kept if k[0] == "thinking"}
        signatures = {k[2] for k in kept if k[0] == "thinking"}
        for j, block in sent:
            signature = as_str(block.get("signature")) or ""
            if (_block_type(block) == "thinking" and signature.strip() and _kept(block) not in kept
                    and (block.get("thinking") in texts or signature in signatures)):
                report.error("A22", ["messages", i, "content", j], A22.format(i=i, j=j))


def check(body: dict, report: Report) -> None:
    messages = as_list(body.get("messages"))
    last = len(messages) - 1

    first_role = role_of(messages[0]) if messages else None
    if first_role is not None and first_role != "user":
        report.warning("A5", ["messages", 0, "role"], A5)

    # Consecutive same-role messages are combined by the API (A4: a warning); the pairing
    # rules then apply to the combined turns.
    turns: list[tuple[str, list[tuple[int, int | None, Any]]]] = []
    for i, message in enumerate(messages):
        role = role_of(message)
        if role is None:
            continue
        previous = turns[-1][0] if turns else None
        allowed = ALTERNATION_NEXT_ROLES.get(previous or "")
        if allowed is not None and role in ALTERNATION_NEXT_ROLES and role not in allowed:
            report.warning("A4", ["messages", i, "role"], A4.format(role=role))
            turns[-1][1].extend(_blocks(message, i))
        else:
            turns.append((role, _blocks(message, i)))

    for i, message in enumerate(messages):  # A6, the assistant half (user half: schema)
        if i != last and role_of(message) == "assistant" and message.get("content") in ("", []):
            report.error("A6", ["messages", i, "content"], A6.format(i=i))

    # A8/A9: an assistant turn opens its tool_use ids; the next turn must start with a
    # tool_result for each (results after another block do not count), and may hold no result
    # for an id the previous turn did not open.
    pending = PendingCalls()
    used: set[str] = set()
    for role, blocks in turns:
        if role == "user":
            leading = True
            for i, j, block in blocks:
                if _block_type(block) != "tool_result":
                    leading = False
                    continue
                call_id = as_str(block.get("tool_use_id"))
                if call_id is None:
                    continue
                if call_id not in pending.opened:
                    report.error("A8", ["messages", i, "content", j], A8.format(i=i, j=j, id=call_id))
                elif leading:
                    pending.answer(call_id)
        _report_a9(pending, report)
        pending = PendingCalls()
        if role == "assistant":
            for i, j, block in blocks:
                call_id = as_str(block.get("id")) if _block_type(block) == "tool_use" else None
                if call_id is None:
                    continue
                if call_id in used:  # A15: an id once per request, in any turn
                    report.error("A15", ["messages", i, "content", j], A15.format(i=i, j=j))
                used.add(call_id)
                pending.opened.setdefault(call_id, i)
    _report_a9(pending, report)

    _thinking(messages, body, report)

    model = as_str(body.get("model")) or ""
    if not model.startswith(SYSTEM_ROLE_MODELS):  # A2, the model-gated half (the enum is schema)
        for i, message in enumerate(messages):
            if role_of(message) == "system":
                report.error("A2", ["messages", i, "role"], A2.format(i=i))

    if last >= 0 and role_of(messages[last]) == "assistant":  # A11: its level depends on the model
        report.error("A11", ["messages", last, "role"], A11)

    if last >= 0 and role_of(messages[last]) == "assistant":  # A10
        content = messages[last].get("content")
        if isinstance(content, str) and content[-1:].isspace():
            report.error("A10", ["messages", last, "content"], A10)
        elif isinstance(content, list) and content:
            block = content[-1]
            text = as_str(block.get("text")) if _block_type(block) == "text" else None
            if text and text[-1].isspace():
                report.error("A10", ["messages", last, "content", len(content) - 1, "text"], A10)


_ANTHROPIC_SDK = "https://github.com/anthropics/anthropic-sdk-python/blob/main/src/anthropic/types/"

CATALOG = rules(
    RuleInfo(
        "A0", "request shape (anthropic-sdk MessageCreateParams)", SCHEMA,
        "{loc}: {detail}", _ANTHROPIC_SDK + "message_create_params.py", text="synthesized",
    ),
    RuleInfo(
        "A1", "system is a string or a list of text blocks", SCHEMA,
        "{loc}: {detail}", _ANTHROPIC_SDK + "message_create_params.py", text="synthesized",
    ),
    RuleInfo(
        "A2", "roles are user and assistant (system only for claude-opus-4-8)", BOTH,
        "messages.{i}.role: Input should be 'user' or 'assistant'",
        "https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages",
        text="adapted",
    ),
    RuleInfo(
        "A4", "consecutive same-role messages are combined", SEQUENCE,
        'messages: roles must alternate between "user" and "assistant", but found multiple "{role}" roles in a row',
        "https://github.com/etkecc/baibot/issues/13", severity="warning",
    ),
    RuleInfo(
        "A5", "the first message is a user message", SEQUENCE,
        'messages: first message must use the "user" role',
        "https://github.com/langchain4j/langchain4j/issues/940", severity="warning",
    ),
    RuleInfo(
        "A6", "non-empty content except an optional final assistant message", BOTH,
        "messages.{i}: all messages must have non-empty content except for the optional final assistant message",
        "https://github.com/anthropics/claude-code/issues/3196",
    ),
    RuleInfo(
        "A7", "text blocks contain non-whitespace text", SCHEMA,
        "messages: text content blocks must contain non-whitespace text",
        "https://github.com/anthropics/claude-code/issues/23369",
    ),
    RuleInfo(
        "A8", "a tool_result answers a tool_use of the previous message", SEQUENCE,
        "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
        "https://github.com/anthropics/claude-code/issues/13460",
    ),
    RuleInfo(
        "A9", "every tool_use is answered by tool_result blocks at the start of the next message", SEQUENCE,
        "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        "https://github.com/anthropics/claude-code/issues/1237",
    ),
    RuleInfo(
        "A10", "a final assistant message does not end in whitespace", SEQUENCE,
        "messages: final assistant content cannot end with trailing whitespace",
        "https://github.com/tailcallhq/forgecode/issues/1872",
    ),
    RuleInfo(
        "A11", "Opus 4.6+ and Sonnet 4.6+ reject a final assistant message (prefill); earlier models "
        "continue from it", SEQUENCE,
        "This model does not support assistant message prefill. The conversation must end with a user message.",
        "https://github.com/agenticloops-ai/agentic-ai-engineering/issues/43",
    ),
    RuleInfo(
        "A12", "at most 100,000 messages", SCHEMA,
        "There is a limit of 100,000 messages in a single request.", _ANTHROPIC_SDK + "message_create_params.py",
    ),
    RuleInfo(
        "A13", "content block shapes; tool ids ^[a-zA-Z0-9_-]+$; no block type the API rejects (video)", SCHEMA,
        "{loc}: {detail}", _ANTHROPIC_SDK + "message_param.py", text="synthesized",
        # A video block, in the API's words (2026-08): "Input tag 'video' found using 'type' does
        # not match any of the expected tags: ..."
        more=("https://github.com/ben-vargas/ai-sdk-provider-claude-code/pull/140",),
    ),
    RuleInfo(
        "A14", "a complete request (it names its model) sets max_tokens", SCHEMA,
        "max_tokens: Field required", _ANTHROPIC_SDK + "message_create_params.py", text="synthesized",
    ),
    RuleInfo(
        "A15", "a tool_use id is used once in the request, across every turn", SEQUENCE,
        "messages.{i}.content.{j}: `tool_use` ids must be unique",
        "https://github.com/anthropics/claude-code/issues/20901",
    ),
    RuleInfo(
        "A16", "a content block carries no key of a streaming event (`index`): its fields are fixed", SCHEMA,
        "messages.{i}.content.{j}.{kind}.index: Extra inputs are not permitted",
        "https://github.com/langchain-ai/langchain/issues/31208", text="adapted",
    ),
    RuleInfo(
        "A17", "a block type chatconform's schema of 2026-08 knows (a newer type, or a typo)", SCHEMA,
        "{loc}: block type '{value}' is not known to chatconform's schema of 2026-08 (a newer block type, or a typo)",
        "https://github.com/ben-vargas/ai-sdk-provider-claude-code/pull/140", severity="warning",
        text="synthesized",
    ),
    RuleInfo(
        "A18", "a blank text block beside other blocks of an assistant message", SEQUENCE,
        A18, "https://github.com/simonw/llm-anthropic/blob/3ae428f3b5143cc81da25af0271d8fa55bda3f05/"
             "tests/cassettes/test_anthropic/test_tools.yaml",
        severity="warning", text="adapted",
    ),
    RuleInfo(
        "A20", "with thinking on, the last assistant message holding tool_use starts with its thinking block", SEQUENCE,
        A20, "https://github.com/BerriAI/litellm/issues/15601", text="adapted",
        more=("https://platform.claude.com/docs/build-with-claude/thinking-tool-workflows",),
    ),
    RuleInfo(
        "A21", "a thinking block carries the signature Anthropic gave it (a cut stream left none)", SEQUENCE,
        A21, "https://github.com/pydantic/pydantic-ai/issues/5532", text="adapted",
    ),
    RuleInfo(
        "A22", "with thinking on, a thinking block an earlier answer returned comes back with its text and its "
        "signature unchanged (serve and recorded traffic: the answers before the request)", SEQUENCE,
        A22, "https://github.com/pydantic/pydantic-ai/issues/5532", text="adapted",
        more=("https://github.com/BerriAI/litellm/issues/15601", "https://github.com/kaitranntt/ccs/issues/415"),
    ),
    RuleInfo(
        "A23", "with thinking on, the latest assistant message of a tool round keeps every thinking block its "
        "answer returned, unchanged and in order (serve and recorded traffic)", SEQUENCE,
        A23, "https://github.com/anthropics/claude-code/issues/19539", text="adapted",
        more=("https://github.com/vybestack/llxprt-code/issues/1653",),
    ),
    RuleInfo(
        "A19", "a custom tool's name matches ^[a-zA-Z0-9_-]{1,128}$", SCHEMA,
        "tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
        "https://github.com/home-assistant/core/issues/147760",
    ),
)

LEFT_OUT: dict[str, str] = {
    "A3": "placement of mid-conversation system messages (Opus 4.8 only); error text not captured",
}

#: Claude 3 (the opus, sonnet and haiku of early 2024, retired since) answered a tool_result
#: for a call the previous message did not make: dd-trace-py recorded claude-3-opus-20240229
#: streaming its answer (200) on 2024-06-12. Every Claude since rejects it.
_PAIRING = ModelDependence(
    families=(
        Family("claude-3 (2024)", re.compile(r"(^|[.:/])claude-3-(opus|sonnet|haiku)-2024"), accepts=True,
               evidence="https://github.com/DataDog/dd-trace-py/blob/3bb9ecda22830e3303b18b0ffa5abe7586aef6a7/"
                        "tests/contrib/anthropic/cassettes/anthropic_completion_tools_call_with_tool_result_stream.yaml",
               date="2024-06-12"),
        Family("every later Claude", re.compile(r"(^|[.:/])claude-"), accepts=False,
               evidence="https://github.com/anthropics/claude-code/issues/13460", date="2025-12"),
    ),
    unnamed="error",
    why="every Claude family still served rejects it",
)

MODEL_DEPENDENT: dict[str, ModelDependence] = {
    # Opus 4.6+ and Sonnet 4.6+ reject prefill; earlier Claude models continue from it.
    "A11": ModelDependence(
        families=(
            Family("claude-3 to 4.5, and every haiku", re.compile(r"^claude-(3|(opus|sonnet|haiku)-4-[0-5]\b|haiku)"),
                   accepts=True, evidence="https://github.com/agenticloops-ai/agentic-ai-engineering/issues/43",
                   date="2026-02"),
            Family("claude-opus-4-6 and claude-sonnet-4-6 or later",
                   re.compile(r"^claude-(opus|sonnet)-(4-[6-9]|[5-9])"), accepts=False,
                   evidence="https://github.com/agenticloops-ai/agentic-ai-engineering/issues/43", date="2026-02"),
        ),
        unnamed="warning",
        why="Claude families still served differ: Sonnet 4.5 continues from a prefill, Opus 4.6 rejects it",
    ),
    "A8": _PAIRING,
    "A9": _PAIRING,
}
