"""OpenAI Responses API: every ``function_call`` has its ``function_call_output`` and every
output its call (X3, X4), a reasoning item comes with the item that followed it (X5), nothing
is looked up by id when ``store`` is false (X6); across requests, an item the API returned
after a reasoning item comes back with that reasoning item (X7, ``replayed``)."""

from __future__ import annotations

from typing import Any

from chatconform.dialects.openai_responses import NO_PREVIOUS, input_items

from .common import SCHEMA, SEQUENCE, Report, RuleInfo, answer_values, as_dict, as_list, as_str, rules

X3 = "No tool output found for function call {id}."
X4 = "No tool call found for function call output with call_id {id}."
X5 = "Item '{id}' of type 'reasoning' was provided without its required following item."
X6 = ("Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` "
      "set to true, or remove this item from your input.")
X7 = "Item '{id}' of type '{type}' was provided without its required 'reasoning' item: '{reasoning}'."

#: Item types a response's output holds besides reasoning: what may follow a reasoning item.
_INPUT_SIDE = frozenset({"function_call_output", "item_reference", "reasoning"})


def _follows_reasoning(item: Any) -> bool:
    """Whether ``item`` is one a reasoning item can have produced: an assistant message, a
    call (``function_call``, a hosted tool's ``*_call``)."""
    item = as_dict(item)
    kind = item.get("type")
    if kind in (None, "message"):
        return item.get("role") == "assistant"
    return isinstance(kind, str) and kind not in _INPUT_SIDE and not kind.endswith("_output")


def _pairing(items: list, continued: bool, report: Report) -> None:
    """X3 and X4: outputs and calls by ``call_id``. An output whose call is in the response a
    ``previous_response_id`` continues is not judged (the body does not hold that response)."""
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for i, item in enumerate(items):
        item = as_dict(item)
        call_id = as_str(item.get("call_id"))
        if call_id is None:
            continue
        if item.get("type") == "function_call":
            calls.setdefault(call_id, i)
        elif item.get("type") == "function_call_output":
            if call_id not in calls and not continued:
                report.error("X4", ["input", i, "call_id"], X4.format(id=call_id))
            answered.add(call_id)
    for call_id, i in calls.items():
        if call_id not in answered:
            report.error("X3", ["input", i], X3.format(id=call_id))


def _reasoning(items: list, store: bool, report: Report) -> None:
    """X5: a reasoning item is followed by the item it produced; X6: with ``store: false`` no
    item is given by its id alone (an ``item_reference``, a reasoning item without its
    encrypted content)."""
    for i, item in enumerate(items):
        item = as_dict(item)
        kind, ident = item.get("type"), as_str(item.get("id")) or ""
        if kind == "reasoning":
            if i + 1 == len(items) or not _follows_reasoning(items[i + 1]):
                report.error("X5", ["input", i], X5.format(id=ident))
            if not store and not item.get("encrypted_content"):
                report.error("X6", ["input", i], X6.format(id=ident))
        elif kind == "item_reference" and not store:
            report.error("X6", ["input", i], X6.format(id=ident))


def check(body: dict, report: Report) -> None:
    items = input_items(body)
    _pairing(items, isinstance(body.get("previous_response_id"), str), report)
    _reasoning(items, body.get("store") is not False, report)


def _answered_items(text: str) -> list[dict]:
    """The output items of one recorded answer: a response object, or the SSE stream of one
    (its ``response.completed`` event; else each ``response.output_item.done``)."""
    done: list[dict] = []
    for value in answer_values(text):
        event = as_dict(value)
        kind = event.get("type")
        if kind is None or kind == "response.completed":  # a response object, or the last event's
            response = event if kind is None else as_dict(event.get("response"))
            return [item for item in as_list(response.get("output")) if isinstance(item, dict)]
        if kind == "response.output_item.done" and isinstance(event.get("item"), dict):
            done.append(event["item"])
    return done


def replayed(body: dict, model: str | None, earlier: list[str], report: Report) -> None:
    """X7: an item the API returned after a reasoning item, sent back with its id, needs that
    reasoning item before it (the API holds the pair; an item sent without its id is new)."""
    needs: dict[str, str] = {}  # item id -> the reasoning item it followed
    for text in earlier:
        reasoning = None
        for item in _answered_items(text):
            ident = as_str(item.get("id"))
            if item.get("type") == "reasoning":
                reasoning = ident
            elif ident and reasoning:
                needs[ident] = reasoning
    if not needs:
        return
    sent: set[str] = set()
    for i, item in enumerate(input_items(body)):
        item = as_dict(item)
        ident = as_str(item.get("id"))
        if ident is None:
            continue
        if ident in needs and needs[ident] not in sent:
            kind = as_str(item.get("type")) or "message"
            report.error("X7", ["input", i], X7.format(id=ident, type=kind, reasoning=needs[ident]))
        sent.add(ident)


_API = "https://platform.openai.com/docs/api-reference/responses/create"

CATALOG = rules(
    RuleInfo("X0", "request shape (the openai SDK's ResponseCreateParams)", SCHEMA, "Invalid '{oai}': {detail}", _API,
             text="synthesized"),
    RuleInfo(
        "X1", "each input item has the members of its type (a message role and content, a function_call call_id, "
              "name and arguments, an output call_id and output, a reasoning item id and summary)", SCHEMA,
        "Missing required parameter: '{oai}'.", "https://github.com/openclaw/openclaw/issues/52024", text="adapted",
    ),
    RuleInfo(
        "X2", "a message's role is user, assistant, system or developer (no tool role: outputs are items)", SCHEMA,
        "Invalid value: '{value}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.",
        "https://github.com/Chevey339/kelivo/pull/281",
    ),
    RuleInfo("X3", "every function_call has a function_call_output with its call_id", SEQUENCE,
             "No tool output found for function call {id}.", "https://github.com/massgen/MassGen/issues/590"),
    RuleInfo("X4", "every function_call_output has a function_call with its call_id before it", SEQUENCE,
             "No tool call found for function call output with call_id {id}.",
             "https://github.com/langchain-ai/langchain/issues/34282"),
    RuleInfo("X5", "a reasoning item is followed by the item it produced (an assistant message or a call)", SEQUENCE,
             X5, "https://github.com/continuedev/continue/issues/8933",
             more=("https://github.com/vercel/ai/issues/7099",)),
    RuleInfo("X6", "with store=false, no item is given by its id alone (an item_reference, a reasoning item "
                   "without encrypted_content)", SEQUENCE, X6, "https://github.com/anomalyco/opencode/issues/8987",
             more=("https://github.com/anomalyco/opencode/issues/7724",)),
    RuleInfo("X7", "an item an earlier answer returned after a reasoning item, sent back with its id, has that "
                   "reasoning item before it (recorded traffic and serve)", SEQUENCE, X7,
             "https://github.com/cline/cline/issues/12242", more=("https://github.com/mastra-ai/mastra/issues/8738",)),
    RuleInfo("X8", "previous_response_id names a response the API stored (serve: one it answered without "
                   "store=false)", SEQUENCE, NO_PREVIOUS, "https://github.com/maximhq/bifrost/issues/2441"),
)

LEFT_OUT: dict[str, str] = {
    "X9": "'Item ... of type 'message' was provided without its required 'reasoning' item' for an item the body "
          "alone cannot tie to a reasoning item: judged across requests only (X7)",
}
