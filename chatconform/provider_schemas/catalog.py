"""Every rule id this package reports, per provider: what it checks, where, and on whose word.

Each rule carries the error text the package reports for it (one representative text; words
in braces are filled in from the failing body) and a public source: the provider's
documentation, its validator or SDK source, or an issue where the error was seen. ``text``
says how far that error text can be trusted: "verbatim" (the provider's error as seen in the
wild or in its validator source), "adapted" (a verbatim text with another location filled
in, or a pass-through prefix), or "synthesized" (no captured text exists; written in the
provider's style). ``<letter>0`` is the provider's generic shape rule: the body does not
match the published request shape and no more specific rule applies.

The same facts, as a page: docs/provider-rules.md, generated from this module with

    python -m chatconform.provider_schemas.catalog > docs/provider-rules.md
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from chatconform.providers import PROVIDERS as PROVIDER_TABLE

from .models import MODEL_DEPENDENT
from .problems import GLM_1214

REGENERATE = "python -m chatconform.provider_schemas.catalog > docs/provider-rules.md"


@dataclass(frozen=True)
class RuleInfo:
    id: str
    summary: str
    check: str  # "schema", "sequence" or both ("schema+sequence")
    error: str  # the error text reported for the rule (a template: "{i}" = a message index, ...)
    source: str  # public evidence: provider docs, validator or SDK source, an issue or PR
    severity: str = "error"
    text: str = "verbatim"


def _rules(*infos: RuleInfo) -> dict[str, RuleInfo]:
    return {info.id: info for info in infos}


S, C, SC = "schema", "sequence", "schema+sequence"


_OPENAPI = "https://github.com/openai/openai-openapi"
_OAI_EMPTY_ARRAY = (
    "Invalid '{oai}': empty array. Expected an array with minimum length 1, but got an empty array instead."
)
_QWEN_TEMPLATE = "https://huggingface.co/Qwen/Qwen3.5-27B/blob/main/chat_template.jinja"
_MISTRAL_VALIDATOR = (
    "https://github.com/mistralai/mistral-common/blob/main/src/mistral_common/protocol/instruct/validator.py"
)
_ANTHROPIC_SDK = "https://github.com/anthropics/anthropic-sdk-python/blob/main/src/anthropic/types/"
_GENAI_TYPES = "https://github.com/googleapis/python-genai/blob/main/google/genai/types.py"
_BEDROCK_API = "https://docs.aws.amazon.com/bedrock/latest/APIReference/"

RULES: dict[str, dict[str, RuleInfo]] = {
    "openai-chat": _rules(
        RuleInfo(
            "O0", "request shape (openai-openapi CreateChatCompletionRequest)", S,
            "Invalid '{oai}': {detail}", _OPENAPI, text="synthesized",
        ),
        RuleInfo(
            "O1", "messages is non-empty", S,
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
            "https://github.com/CopilotKit/CopilotKit/issues/529",
        ),
        RuleInfo(
            "O2", "role is known; per-role required members (content, tool_call_id, name)", S,
            "Missing required parameter: '{oai}'.", "https://github.com/docker/docker-agent/issues/63", text="adapted",
        ),
        RuleInfo(
            "O3", "content is a string or a non-empty array of the parts that role allows", S,
            _OAI_EMPTY_ARRAY, _OPENAPI, text="synthesized",
        ),
        RuleInfo(
            "O4", "assistant content required unless tool_calls or function_call", S,
            "Missing required parameter: '{oai}'.", _OPENAPI, text="adapted",
        ),
        RuleInfo(
            "O5", "tool_calls, when present, is non-empty", S,
            _OAI_EMPTY_ARRAY, "https://github.com/openai/openai-python/issues/2061",
        ),
        RuleInfo(
            "O6", "tool_calls[].function.name is non-empty", S,
            "Invalid '{oai}': empty string. Expected a string with minimum length 1, but got an empty string instead.",
            "https://github.com/continuedev/continue/issues/11645",
        ),
        RuleInfo(
            "O7", "a tool message follows an assistant message with tool_calls (or its sibling tools)", C,
            "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
            "https://github.com/camel-ai/camel/issues/3339",
        ),
        RuleInfo(
            "O8", "every tool_call id is answered by the tool messages right after", C,
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
            "https://github.com/BerriAI/litellm/issues/10083",
        ),
        RuleInfo(
            "O9", "a tool_call_id is one of the preceding assistant's tool_calls ids", C,
            "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message.",
            "https://github.com/dapr/dapr-agents/issues/145",
        ),
        RuleInfo(
            "O10", "o1-mini / o1-preview models reject the system role", S,
            "Unsupported value: 'messages[{i}].role' does not support 'system' with this model.",
            "https://github.com/BerriAI/litellm/issues/5671",
        ),
    ),
    "qwen-vllm": _rules(
        RuleInfo(
            "Q0", "OpenAI-compatible request shape vLLM parses", S,
            "Invalid request at '{oai}': {detail}",
            "https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html", text="synthesized",
        ),
        RuleInfo("Q1", "messages is non-empty", S, "No messages provided.", _QWEN_TEMPLATE),
        RuleInfo(
            "Q2", "a user message that is not only a <tool_response> wrapper", S,
            "No user query found in messages.", _QWEN_TEMPLATE,
        ),
        RuleInfo(
            "Q3", "a system message only at index 0", S,
            "System message must be at the beginning.", "https://github.com/vllm-project/vllm/issues/41114",
        ),
        RuleInfo("Q4", "roles are system, user, assistant, tool", S, "Unexpected message role.", _QWEN_TEMPLATE),
        RuleInfo(
            "Q5", "content types; no images or videos in the system message", S,
            "System message cannot contain images.", _QWEN_TEMPLATE,
        ),
    ),
    "glm": _rules(
        RuleInfo(
            "Z0", "documented message shape (error 1214)", S,
            GLM_1214, "https://docs.z.ai/api-reference/llm/chat-completion",
        ),
        RuleInfo(
            "Z1", "at least one user message (error 1214)", S,
            GLM_1214, "https://github.com/HKUDS/nanobot/pull/3086",
        ),
        RuleInfo(
            "Z2", "tool messages pair with tool_calls as on OpenAI; no duplicate ids (error 1214)", C,
            GLM_1214, "https://github.com/lobehub/lobehub/issues/11408",
        ),
    ),
    "mistral": _rules(
        RuleInfo(
            "M0", "request shape; function names match ^[a-zA-Z0-9_-]{1,64}$", S,
            "Function name was {value} but must be a-z, A-Z, 0-9, or contain underscores and dashes, "
            "with a maximum length of 64.",
            _MISTRAL_VALIDATOR, text="synthesized",
        ),
        RuleInfo(
            "M1", "role order (hosted API matrix: tool -> user rejected)", C,
            "Unexpected role '{role}' after role '{previous}'",
            "https://github.com/datapizza-labs/datapizza-ai/issues/98",
        ),
        RuleInfo(
            "M2", "a final assistant message (of two or more) needs prefix: true", C,
            "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant",
            "https://github.com/huggingface/smolagents/issues/757",
        ),
        RuleInfo(
            "M3", "prefix: true only on the last message", C,
            "Assistant message with prefix True must be last message", _MISTRAL_VALIDATOR,
        ),
        RuleInfo(
            "M4", "as many tool messages as tool calls, before the next assistant and at the end", C,
            "Not the same number of function calls and responses", _MISTRAL_VALIDATOR,
        ),
        RuleInfo(
            "M5", "tool result ids expected and unique; call ids unique in a message", C,
            "Duplicate tool call id {call_id} in assistant message", _MISTRAL_VALIDATOR,
        ),
        RuleInfo(
            "M6", "tool call ids ^[a-zA-Z0-9]{9}$ and defined", S,
            "Tool call id was {value} but must be a-z, A-Z, 0-9, with a length of 9.", _MISTRAL_VALIDATOR,
        ),
        RuleInfo(
            "M8", "non-empty; a single message is user or system; system has content", S,
            "Conversation must have at least one message", _MISTRAL_VALIDATOR,
        ),
    ),
    "anthropic": _rules(
        RuleInfo(
            "A0", "request shape (anthropic-sdk MessageCreateParams)", S,
            "{loc}: {detail}", _ANTHROPIC_SDK + "message_create_params.py", text="synthesized",
        ),
        RuleInfo(
            "A1", "system is a string or a list of text blocks", S,
            "{loc}: {detail}", _ANTHROPIC_SDK + "message_create_params.py", text="synthesized",
        ),
        RuleInfo(
            "A2", "roles are user and assistant (system only for claude-opus-4-8)", SC,
            "messages.{i}.role: Input should be 'user' or 'assistant'",
            "https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages",
            text="adapted",
        ),
        RuleInfo(
            "A4", "consecutive same-role messages are combined", C,
            'messages: roles must alternate between "user" and "assistant", but found multiple "{role}" roles in a row',
            "https://github.com/etkecc/baibot/issues/13", severity="warning",
        ),
        RuleInfo(
            "A5", "the first message is a user message", C,
            'messages: first message must use the "user" role',
            "https://github.com/langchain4j/langchain4j/issues/940", severity="warning",
        ),
        RuleInfo(
            "A6", "non-empty content except an optional final assistant message", SC,
            "messages.{i}: all messages must have non-empty content except for the optional final assistant message",
            "https://github.com/anthropics/claude-code/issues/3196",
        ),
        RuleInfo(
            "A7", "text blocks contain non-whitespace text", S,
            "messages: text content blocks must contain non-whitespace text",
            "https://github.com/anthropics/claude-code/issues/23369",
        ),
        RuleInfo(
            "A8", "a tool_result answers a tool_use of the previous message", C,
            "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
            "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
            "https://github.com/anthropics/claude-code/issues/13460",
        ),
        RuleInfo(
            "A9", "every tool_use is answered by tool_result blocks at the start of the next message", C,
            "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
            "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
            "https://github.com/anthropics/claude-code/issues/1237",
        ),
        RuleInfo(
            "A10", "a final assistant message does not end in whitespace", C,
            "messages: final assistant content cannot end with trailing whitespace",
            "https://github.com/tailcallhq/forgecode/issues/1872",
        ),
        RuleInfo(
            "A11", "Opus 4.6+ and Sonnet 4.6+ reject a final assistant message (prefill); earlier models "
            "continue from it", C,
            "This model does not support assistant message prefill. The conversation must end with a user message.",
            "https://github.com/agenticloops-ai/agentic-ai-engineering/issues/43",
        ),
        RuleInfo(
            "A12", "at most 100,000 messages", S,
            "There is a limit of 100,000 messages in a single request.", _ANTHROPIC_SDK + "message_create_params.py",
        ),
        RuleInfo(
            "A13", "content block types and shapes; tool ids ^[a-zA-Z0-9_-]+$", S,
            "{loc}: {detail}", _ANTHROPIC_SDK + "message_param.py", text="synthesized",
        ),
        RuleInfo(
            "A14", "a complete request (it names its model) sets max_tokens", S,
            "max_tokens: Field required", _ANTHROPIC_SDK + "message_create_params.py", text="synthesized",
        ),
    ),
    "gemini": _rules(
        RuleInfo(
            "G0", "request shape (python-genai Content/Part)", S,
            "* GenerateContentRequest.{gloc}: {detail}", _GENAI_TYPES, text="synthesized",
        ),
        RuleInfo(
            "G1", "systemInstruction is a Content", S,
            "* GenerateContentRequest.{gloc}: {detail}", _GENAI_TYPES, text="synthesized",
        ),
        RuleInfo(
            "G2", "contents present and non-empty", S,
            "* GenerateContentRequest.contents: contents is not specified",
            "https://github.com/googleapis/js-genai/issues/912",
        ),
        RuleInfo(
            "G3", "role is user or model", S,
            "Please use a valid role: user, model.", "https://github.com/BerriAI/litellm/pull/22046",
        ),
        RuleInfo(
            "G4", "parts present and non-empty", S,
            "* GenerateContentRequest.{gloc}: contents.parts must not be empty.",
            "https://github.com/egoist/chatwise-releases/issues/250",
        ),
        RuleInfo(
            "G5", "a part sets exactly one data member", S,
            "* GenerateContentRequest.{gloc}.data: required oneof field 'data' must have one initialized field",
            "https://github.com/boldsoftware/sketch/issues/68",
        ),
        RuleInfo(
            "G6", "a function-call turn follows a user or function-response turn", C,
            "Please ensure that function call turn comes immediately after a user turn or after a function "
            "response turn.",
            "https://github.com/google-gemini/gemini-cli/issues/11814",
        ),
        RuleInfo(
            "G7", "a function-response turn follows a function-call turn", C,
            "Please ensure that function response turn comes immediately after a function call turn.",
            "https://github.com/langchain-ai/langchain/issues/27799",
        ),
        RuleInfo(
            "G8", "the turn after a function-call turn answers every call (count, ids)", C,
            "Please ensure that the number of function response parts is equal to the number of function call "
            "parts of the function call turn.",
            "https://github.com/google-gemini/gemini-cli/issues/4217",
        ),
        RuleInfo(
            "G10", "the request ends with a user turn", C,
            "Please ensure that multiturn requests ends with a user role or a function response.",
            "https://github.com/songquanpeng/one-api/issues/836", severity="warning",
        ),
        RuleInfo(
            "G11", "a content holding function responses holds nothing else (no text, no inline data)", C,
            "Requests ending with a model turn are not supported.",
            "https://github.com/Prism-Shadow/agenthub/pull/189",
        ),
    ),
    "bedrock-converse": _rules(
        RuleInfo(
            "B0", "request shape (Bedrock Runtime Converse)", S,
            "1 validation error detected: Value at '{loc}' failed to satisfy constraint: {detail}",
            _BEDROCK_API + "API_runtime_Converse.html", text="synthesized",
        ),
        RuleInfo(
            "B1", "role is user or assistant; a content block sets exactly one member", S,
            "The ContentBlock object at {loc} must set exactly one member.",
            _BEDROCK_API + "API_runtime_ContentBlock.html", text="synthesized",
        ),
        RuleInfo(
            "B2", "the conversation starts with a user message", S,
            "A conversation must start with a user message. Try again with a conversation that starts with a "
            "user message.",
            "https://github.com/langgenius/dify/issues/12340",
        ),
        RuleInfo(
            "B3", "user and assistant alternate", C,
            "A conversation must alternate between user and assistant roles. Make sure the conversation "
            "alternates between user and assistant roles and try again.",
            "https://github.com/langchain-ai/langchain-aws/issues/130",
        ),
        RuleInfo(
            "B4", "toolResult blocks answer the previous turn's toolUse blocks, all of them", C,
            "The number of toolResult blocks at messages.{i}.content exceeds the number of toolUse blocks of "
            "previous turn.",
            "https://github.com/langgenius/dify-official-plugins/issues/765", text="adapted",
        ),
        RuleInfo(
            "B5", "no text blocks next to toolResult blocks in a turn", S,
            "messages.{i}.content: Conversation blocks and tool result blocks cannot be provided in the same turn.",
            "https://github.com/langchain-ai/langchain-aws/issues/141",
        ),
        RuleInfo(
            "B6", "toolConfig defined when the history holds toolUse or toolResult", S,
            "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
            "https://github.com/vxcontrol/pentagi/pull/196",
        ),
        RuleInfo(
            "B7", "no blank text, no empty content, a text block next to a document", S,
            "The text field in the ContentBlock object at messages.{i}.content.{j} is blank. Add text to the "
            "text field, and try again.",
            "https://github.com/OpenHands/OpenHands/issues/5339",
        ),
        RuleInfo(
            "B8", "the conversation ends with a user message", C,
            "A conversation must end with a user message.",
            "https://github.com/microsoft/semantic-kernel/issues/10281", severity="warning", text="synthesized",
        ),
    ),
}

# Rules known from the providers' documentation or errors that are left out, and why.
LEFT_OUT: dict[str, str] = {
    "A3": "placement of mid-conversation system messages (Opus 4.8 only); error text not captured",
    "G9": "Gemini 3 thought signatures: needs to know which turns the current model produced",
    "M7": "content XOR tool_calls applies to tokenizer v1-v3 models only",
    "M9": "legacy 2024 error text; the same bodies are reported by M1 and M5",
    "Z3": "text-only GLM models: depends on the model",
    "Z4": "no evidence of a GLM system-position rule",
    "Z5": "legacy ChatGLM history parameter",
}


# --- the generated page ------------------------------------------------------------------

_CHECK_WORDS = {S: "schema", C: "sequence", SC: "schema and sequence"}


def _letter(rule_id: str) -> str:
    return rule_id.rstrip("0123456789")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _prose(text: str) -> str:
    """A table cell of plain text (``<`` escaped, so ``<tool_response>`` is not read as HTML)."""
    return _cell(text).replace("<", "&lt;")


def _code(text: str) -> str:
    """``text`` as an inline code span (longer fences when it holds backticks)."""
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{_cell(text)}{pad}{fence}"


def markdown() -> str:
    """docs/provider-rules.md: the catalog as one section per provider."""
    lines = [
        "# Provider rules",
        "",
        f"<!-- Generated from chatconform/provider_schemas/catalog.py; do not edit. Regenerate with: {REGENERATE} -->",
        "",
        f"This page is generated from `chatconform/provider_schemas/catalog.py`. To regenerate it, run `{REGENERATE}`.",
        "",
        "`chatconform.provider_schemas.validate(body, provider)` reports each rule below that a request body",
        "breaks, with the rule id, the JSON path of the failing part and the error text shown here.",
        "",
        "* **Level**: an *error* is a body the provider rejects; a *warning* is a body the provider may",
        "  accept or silently rewrite (the evidence is old or indirect). *by model*: some of the provider's",
        "  models reject it and others accept it; it is an error for a model known to reject, nothing for",
        "  one known to accept, and a warning when the model is not known (`validate(..., model=...)`, the",
        "  body's `model`, or an implementation's `models` setting).",
        "* **Checked in**: *schema* rules are JSON Schema (draft 2020-12) constraints in",
        "  `chatconform/provider_schemas/schemas/<provider>.json`, tagged with `x-rule` and `x-error`;",
        "  *sequence* rules relate two messages, need the last message or match ids across messages, which",
        "  JSON Schema cannot express, and are checked in `chatconform/provider_schemas/rules.py`.",
        "* **Error text**: one representative text per rule. Words in braces are filled in from the failing",
        "  body: `{i}` and `{j}` are message and block indexes; `{loc}`, `{oai}` and `{gloc}` the failing",
        "  path in the provider's own notation; `{detail}` a short description of what failed; any other",
        "  word in braces (`{value}`, `{id}`, `{ids}`, `{role}`, ...) a value taken from the body.",
        "* **Text**: how far the error text can be trusted. *verbatim*: the provider's own text, seen in",
        "  the wild or in its validator source; *adapted*: a verbatim text with another location filled in,",
        "  or passed through with a prefix; *synthesized*: no captured text exists, so it is written in the",
        "  provider's style.",
        "* **Source**: public evidence for the rule: the provider's documentation, its validator or SDK",
        "  source, or an issue or pull request where the error was reported.",
        "* `<letter>0` is each provider's generic shape rule: the body does not match the provider's",
        "  published request shape and no more specific rule applies.",
    ]
    for provider, rules in RULES.items():
        info = PROVIDER_TABLE[provider]
        lines += [
            "",
            f"## {info.title} (`{provider}`)",
            "",
            f"Documentation: <{info.docs}>",
            "",
            "| Rule | What it checks | Level | Checked in | Error text | Text | Source |",
            "|---|---|---|---|---|---|---|",
        ]
        for rule in rules.values():
            level = rule.severity
            if (provider, rule.id) in MODEL_DEPENDENT:
                level += f" by model ([evidence]({MODEL_DEPENDENT[(provider, rule.id)].evidence}))"
            lines.append(
                f"| {rule.id} | {_prose(rule.summary)} | {level} | {_CHECK_WORDS[rule.check]} "
                f"| {_code(rule.error)} | {rule.text} | <{rule.source}> |"
            )
        letter = _letter(next(iter(rules)))
        left_out = {rule_id: why for rule_id, why in LEFT_OUT.items() if _letter(rule_id) == letter}
        lines += ["", "Rules left out:" if left_out else "Rules left out: none."]
        if left_out:
            lines.append("")
            lines += [f"* {rule_id}: {_prose(why)}." for rule_id, why in left_out.items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown())
