"""Every rule id this package reports, per provider: what it checks, where, and whose text.

Ids and texts come from research/providers.md. ``text`` says how far the message can be
trusted: "verbatim" (the provider's error as seen in the wild or in its validator source),
"adapted" (a verbatim text with another location filled in, or a pass-through prefix), or
"synthesized" (no captured text exists; written in the provider's style). ``<letter>0`` is
the provider's generic shape rule: the body does not match the published request shape and
no more specific rule applies.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuleInfo:
    id: str
    summary: str
    check: str  # "schema", "sequence" or both ("schema+sequence")
    severity: str = "error"
    text: str = "verbatim"


def _rules(*infos: RuleInfo) -> dict[str, RuleInfo]:
    return {info.id: info for info in infos}


S, C = "schema", "sequence"

RULES: dict[str, dict[str, RuleInfo]] = {
    "openai-chat": _rules(
        RuleInfo("O0", "request shape (openai-openapi CreateChatCompletionRequest)", S, text="synthesized"),
        RuleInfo("O1", "messages is non-empty", S),
        RuleInfo("O2", "role is known; per-role required members (content, tool_call_id, name)", S, text="adapted"),
        RuleInfo("O3", "content is a string or a non-empty array of the parts that role allows", S, text="synthesized"),
        RuleInfo("O4", "assistant content required unless tool_calls or function_call", S, text="adapted"),
        RuleInfo("O5", "tool_calls, when present, is non-empty", S),
        RuleInfo("O6", "tool_calls[].function.name is non-empty", S),
        RuleInfo("O7", "a tool message follows an assistant message with tool_calls (or its sibling tools)", C),
        RuleInfo("O8", "every tool_call id is answered by the tool messages right after", C),
        RuleInfo("O9", "a tool_call_id is one of the preceding assistant's tool_calls ids", C),
        RuleInfo("O10", "o1-mini / o1-preview models reject the system role", S),
    ),
    "qwen-vllm": _rules(
        RuleInfo("Q0", "OpenAI-compatible request shape vLLM parses", S, text="synthesized"),
        RuleInfo("Q1", "messages is non-empty", S),
        RuleInfo("Q2", "a user message that is not only a <tool_response> wrapper", S),
        RuleInfo("Q3", "a system message only at index 0", S),
        RuleInfo("Q4", "roles are system, user, assistant, tool", S),
        RuleInfo("Q5", "content types; no images or videos in the system message", S),
    ),
    "glm": _rules(
        RuleInfo("Z0", "documented message shape (error 1214)", S),
        RuleInfo("Z1", "at least one user message (error 1214)", S),
        RuleInfo("Z2", "tool messages pair with tool_calls as on OpenAI; no duplicate ids (error 1214)", C),
    ),
    "mistral": _rules(
        RuleInfo("M0", "request shape; function names match ^[a-zA-Z0-9_-]{1,64}$", S, text="synthesized"),
        RuleInfo("M1", "role order (hosted API matrix: tool -> user rejected)", C),
        RuleInfo("M2", "a final assistant message (of two or more) needs prefix: true", C),
        RuleInfo("M3", "prefix: true only on the last message", C),
        RuleInfo("M4", "as many tool messages as tool calls, before the next assistant and at the end", C),
        RuleInfo("M5", "tool result ids expected and unique; call ids unique in a message", C),
        RuleInfo("M6", "tool call ids ^[a-zA-Z0-9]{9}$ and defined", S),
        RuleInfo("M8", "non-empty; a single message is user or system; system has content", S),
    ),
    "anthropic": _rules(
        RuleInfo("A0", "request shape (anthropic-sdk MessageCreateParams)", S, text="synthesized"),
        RuleInfo("A1", "system is a string or a list of text blocks", S, text="synthesized"),
        RuleInfo("A2", "roles are user and assistant (system only for claude-opus-4-8)", "schema+sequence", text="adapted"),
        RuleInfo("A4", "consecutive same-role messages are combined", C, "warning"),
        RuleInfo("A5", "the first message is a user message", C, "warning"),
        RuleInfo("A6", "non-empty content except an optional final assistant message", "schema+sequence"),
        RuleInfo("A7", "text blocks contain non-whitespace text", S),
        RuleInfo("A8", "a tool_result answers a tool_use of the previous message", C),
        RuleInfo("A9", "every tool_use is answered by tool_result blocks at the start of the next message", C),
        RuleInfo("A10", "a final assistant message does not end in whitespace", C),
        RuleInfo("A11", "Opus 4.6-4.8 and Sonnet 4.6 reject a final assistant message (prefill)", C),
        RuleInfo("A12", "at most 100,000 messages", S),
        RuleInfo("A13", "content block types and shapes; tool ids ^[a-zA-Z0-9_-]+$", S, text="synthesized"),
    ),
    "gemini": _rules(
        RuleInfo("G0", "request shape (python-genai Content/Part)", S, text="synthesized"),
        RuleInfo("G1", "systemInstruction is a Content", S, text="synthesized"),
        RuleInfo("G2", "contents present and non-empty", S),
        RuleInfo("G3", "role is user or model", S),
        RuleInfo("G4", "parts present and non-empty", S),
        RuleInfo("G5", "a part sets exactly one data member", S),
        RuleInfo("G6", "a function-call turn follows a user or function-response turn", C),
        RuleInfo("G7", "a function-response turn follows a function-call turn", C),
        RuleInfo("G8", "the turn after a function-call turn answers every call (count, ids)", C),
        RuleInfo("G10", "the request ends with a user turn", C, "warning"),
    ),
    "bedrock-converse": _rules(
        RuleInfo("B0", "request shape (Bedrock Runtime Converse)", S, text="synthesized"),
        RuleInfo("B1", "role is user or assistant; a content block sets exactly one member", S, text="synthesized"),
        RuleInfo("B2", "the conversation starts with a user message", S),
        RuleInfo("B3", "user and assistant alternate", C),
        RuleInfo("B4", "toolResult blocks answer the previous turn's toolUse blocks, all of them", C, text="adapted"),
        RuleInfo("B5", "no text blocks next to toolResult blocks in a turn", S),
        RuleInfo("B6", "toolConfig defined when the history holds toolUse or toolResult", S),
        RuleInfo("B7", "no blank text, no empty content, a text block next to a document", S),
        RuleInfo("B8", "the conversation ends with a user message", C, "warning", "synthesized"),
    ),
}

# Rules of research/providers.md left out, and why.
LEFT_OUT: dict[str, str] = {
    "A3": "placement of mid-conversation system messages (Opus 4.8 only); error text not captured",
    "G9": "Gemini 3 thought signatures: needs to know which turns the current model produced",
    "M7": "content XOR tool_calls applies to tokenizer v1-v3 models only",
    "M9": "legacy 2024 error text; the same bodies are reported by M1 and M5",
    "Z3": "text-only GLM models: depends on the model",
    "Z4": "no evidence of a GLM system-position rule",
    "Z5": "legacy ChatGLM history parameter",
}
