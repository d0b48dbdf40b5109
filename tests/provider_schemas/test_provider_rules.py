"""Every rule id: one body that breaks it (rule id + the provider's exact text) and a close body
that does not (and is clean of every error)."""

from __future__ import annotations

import pytest

from chatconform.provider_schemas import Problem, validate
from chatconform.provider_schemas.catalog import RULES
from chatconform.provider_schemas.rules.anthropic import A20, A21
from chatconform.provider_schemas.rules.deepseek import D1, D2, D3
from chatconform.provider_schemas.rules.groq import R1, R2
from chatconform.provider_schemas.rules.kimi import K1, K2
from chatconform.provider_schemas.rules.openrouter import P1, P2
from chatconform.providers.glm import GLM_TEXT_ONLY

GLM = "The messages parameter is illegal. Please check the documentation."
#: A body with the provider's thinking on (Anthropic, DeepSeek and Kimi spell it alike).
THINKING = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
_NARRATOR = "messages.0.role: 'narrator' is not one of 'system', 'user', 'assistant', 'tool'"
D0_TEXT = f"Failed to deserialize the JSON body into the target type: {_NARRATOR}"
KIMI_K0 = f"Invalid request: {_NARRATOR}"
GROQ_R0 = "'messages.0.role' : 'narrator' is not one of 'system', 'user', 'assistant', 'tool'"
OPENROUTER_P0 = _NARRATOR


# --- small builders ----------------------------------------------------------------------


def u(text="hi"):
    return {"role": "user", "content": text}


def s(text="be brief"):
    return {"role": "system", "content": text}


def a(text="ok", **extra):
    return {"role": "assistant", "content": text, **extra}


def call(call_id, name="get_weather"):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def calls(*ids, content=None):
    return {"role": "assistant", "content": content, "tool_calls": [call(i) for i in ids]}


def tool(call_id, text="21C"):
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def au(*blocks):
    return {"role": "user", "content": list(blocks)}


def aa(*blocks):
    return {"role": "assistant", "content": list(blocks)}


def text(value="hi"):
    return {"type": "text", "text": value}


def use(call_id, name="get_weather"):
    return {"type": "tool_use", "id": call_id, "name": name, "input": {"city": "Paris"}}


def result(call_id, value="21C"):
    return {"type": "tool_result", "tool_use_id": call_id, "content": value}


def gu(*parts):
    return {"role": "user", "parts": list(parts) or [{"text": "hi"}]}


def gm(*parts):
    return {"role": "model", "parts": list(parts) or [{"text": "ok"}]}


def fcall(name="get_weather", call_id=None):
    body = {"name": name, "args": {"city": "Paris"}}
    return {"functionCall": body | ({"id": call_id} if call_id else {})}


def fresp(name="get_weather", call_id=None):
    body = {"name": name, "response": {"result": "21C"}}
    return {"functionResponse": body | ({"id": call_id} if call_id else {})}


def bu(*blocks):
    return {"role": "user", "content": list(blocks) or [{"text": "hi"}]}


def ba(*blocks):
    return {"role": "assistant", "content": list(blocks) or [{"text": "ok"}]}


def buse(call_id):
    return {"toolUse": {"toolUseId": call_id, "name": "get_weather", "input": {"city": "Paris"}}}


def bres(call_id):
    return {"toolResult": {"toolUseId": call_id, "content": [{"text": "21C"}]}}


TOOLS = {"toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}]}}

# Mistral tool-call ids: 9 letters or digits.
M1ID, M2ID = "abcDEF123", "xyz987QRS"


def mcalls(*ids):
    return {"role": "assistant", "tool_calls": [call(i) for i in ids]}


# OpenAI Responses input items.
def ru(text="hi"):
    return {"role": "user", "content": [{"type": "input_text", "text": text}]}


def rfc(call_id="call_1", name="get_weather"):
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}


def rout(call_id="call_1", output="21C"):
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def rrs(item_id="rs_1", encrypted="gAAA"):
    return {"type": "reasoning", "id": item_id, "summary": [], "encrypted_content": encrypted}


def ra(text="ok"):
    return {"role": "assistant", "content": text}


# --- the table: (provider, rule, breaking body, exact text, close body) ---------------------

CASES = [
    # OpenAI Chat Completions
    ("openai-chat", "O0", {"messages": "hi"}, "Invalid 'messages': expected array, got string", [u()]),
    (
        "openai-chat",
        "O1",
        {"messages": []},
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        [u()],
    ),
    ("openai-chat", "O2", [u(None)], "Invalid value for 'content': expected a string, got null.", [u()]),
    (
        "openai-chat",
        "O2",
        [{"role": "bot", "content": "hi"}],
        "Invalid value: 'bot'. "
        "Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
        [{"role": "developer", "content": "hi"}, u()],
    ),
    (
        "openai-chat",
        "O3",
        [{"role": "system", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}, u()],
        "Invalid value: 'image_url'. Supported values are: 'text'.",
        [{"role": "system", "content": [text("be brief")]}, u()],
    ),
    (
        "openai-chat",
        "O3",
        [{"role": "user", "content": []}],
        "Invalid 'messages[0].content': empty array. "
        "Expected an array with minimum length 1, but got an empty array instead.",
        [{"role": "user", "content": [text(), {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}],
    ),
    (
        "openai-chat",
        "O4",
        [u(), {"role": "assistant"}],
        "Missing required parameter: 'messages[1].content'.",
        [u(), calls("c1"), tool("c1")],
    ),
    (
        "openai-chat",
        "O5",
        [u(), {"role": "assistant", "content": "x", "tool_calls": []}],
        "Invalid 'messages[1].tool_calls': empty array. "
        "Expected an array with minimum length 1, but got an empty array instead.",
        [u(), {"role": "assistant", "content": "x"}],
    ),
    (
        "openai-chat",
        "O6",
        [u(), {"role": "assistant", "tool_calls": [call("c1", name="")]}, tool("c1")],
        "Invalid 'messages[1].tool_calls[0].function.name': empty string. "
        "Expected a string with minimum length 1, but got an empty string instead.",
        [u(), {"role": "assistant", "tool_calls": [call("c1", name="f")]}, tool("c1")],
    ),
    (
        "openai-chat",
        "O7",
        [u(), tool("c1")],
        "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
        [u(), calls("c1"), tool("c1")],
    ),
    (
        "openai-chat",
        "O8",
        [u(), calls("c1", "c2"), tool("c1"), u("and?")],
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
        "The following tool_call_ids did not have response messages: c2",
        [u(), calls("c1", "c2"), tool("c2"), tool("c1"), u("and?")],
    ),
    (
        "openai-chat",
        "O9",
        [u(), calls("c1"), tool("c9")],
        "Invalid parameter: 'tool_call_id' of 'c9' not found in 'tool_calls' of previous message.",
        [u(), calls("c1"), tool("c1")],
    ),
    (
        "openai-chat",
        "O10",
        {"model": "o1-mini-2024-09-12", "messages": [s(), u()]},
        "Unsupported value: 'messages[0].role' does not support 'system' with this model.",
        {"model": "o1-mini-2024-09-12", "messages": [u("be brief. hi")]},
    ),
    (
        "openai-chat",
        "O10",
        {"model": "o1-mini", "messages": [{"role": "developer", "content": "be brief"}, u()]},
        "Unsupported value: 'messages[0].role' does not support 'developer' with this model.",
        {"model": "o1", "messages": [{"role": "developer", "content": "be brief"}, u()]},
    ),
    (
        "openai-chat",
        "O3",
        [u(), {"role": "assistant", "content": [{"type": "reasoning", "reasoning": "sum"}, text("4")]}, u("and?")],
        "Invalid value: 'reasoning'. Supported values are: 'text' and 'refusal'.",
        [u(), {"role": "assistant", "content": [text("4")]}, u("and?")],
    ),
    (
        "openai-chat",
        "O11",
        {"model": "gpt-4o", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": "https://x/y.png"}]}]},
        "Invalid type for 'messages[0].content[0].image_url': expected an object, but got a string instead.",
        {"model": "gpt-4o", "messages": [{"role": "user", "content": [{"type": "image_url",
                                                                       "image_url": {"url": "https://x/y.png"}}]}]},
    ),
    (
        "openai-chat",
        "O12",
        [{"role": "user", "content": [{"type": "input_video", "video": "AAAA"}]}],
        "Invalid value: 'input_video' at 'messages[0].content[0].type': a content part type not known to "
        "chatconform's schema of 2026-08-21 (openai-openapi)",
        [{"role": "user", "content": [text("look")]}],
    ),
    (
        "openai-chat",
        "O13",
        {"model": "gpt-4o", "messages": [u()], "top_k": 5},
        "Unrecognized request argument supplied: top_k",
        {"model": "gpt-4o", "messages": [u()], "top_p": 0.5},
    ),
    (
        "openai-chat",
        "O14",
        {"messages": [u()], "tools": [{"type": "function", "function": {"name": "get weather", "parameters": {}}}]},
        "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern "
        "'^[a-zA-Z0-9_-]+$'.",
        {"messages": [u()], "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]},
    ),
    (
        "openai-chat",
        "O15",
        {"messages": [u()], "tools": [{"type": "function", "function": {
            "name": "get_weather", "strict": True,
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]},
        "Invalid schema for function 'get_weather': In context=(), 'additionalProperties' is required to be supplied "
        "and to be false.",
        {"messages": [u()], "tools": [{"type": "function", "function": {
            "name": "get_weather", "strict": True,
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                           "additionalProperties": False}}}]},
    ),
    (
        "openai-chat",
        "O16",
        {"model": "gpt-3.5-turbo", "messages": [{"role": "user", "content": [
            text("what is it?"), {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}]},
        "Invalid content type. image_url is only supported by certain models.",
        {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": [
            text("what is it?"), {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}]},
    ),
    # OpenAI Responses API
    ("openai-responses", "X0", {"input": 5}, "Invalid 'input': expected string or array, got number",
     {"input": "hi"}),
    ("openai-responses", "X1", {"input": [ru(), {"type": "function_call", "name": "f", "arguments": "{}"}]},
     "Missing required parameter: 'input[1].call_id'.", {"input": [ru(), rfc(), rout()]}),
    ("openai-responses", "X2", {"input": [ru(), rfc(), {"role": "tool", "content": "21C"}]},
     "Invalid value: 'tool'. Supported values are: 'assistant', 'system', 'developer', and 'user'.",
     {"input": [ru(), rfc(), rout()]}),
    ("openai-responses", "X3", {"input": [ru(), rfc("call_7"), ru("and?")]},
     "No tool output found for function call call_7.", {"input": [ru(), rfc("call_7"), rout("call_7"), ru("and?")]}),
    ("openai-responses", "X4", {"input": [ru(), rout("call_8")]},
     "No tool call found for function call output with call_id call_8.",
     {"input": [ru(), rout("call_8")], "previous_response_id": "resp_1"}),
    ("openai-responses", "X5", {"input": [ru(), rrs("rs_9"), ru("and?")], "store": False},
     "Item 'rs_9' of type 'reasoning' was provided without its required following item.",
     {"input": [ru(), rrs("rs_9"), ra(), ru("and?")], "store": False}),
    ("openai-responses", "X6", {"input": [ru(), rrs("rs_5", None), ra()], "store": False},
     "Item with id 'rs_5' not found. Items are not persisted when `store` is set to false. Try again with `store` "
     "set to true, or remove this item from your input.", {"input": [ru(), rrs("rs_5", None), ra()]}),
    # Qwen3.5+ on vLLM
    (
        "qwen-vllm",
        "Q0",
        [u(), {"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}, tool("c1")],
        "Invalid request at 'messages[1].tool_calls[0].function.name': missing required property 'name'",
        [u(), {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}, tool("c1")],
    ),
    ("qwen-vllm", "Q1", [], "No messages provided.", [u()]),
    (
        "qwen-vllm",
        "Q2",
        [s(), calls("c1"), {"role": "user", "content": "  <tool_response>\n21C\n</tool_response>\n"}],
        "No user query found in messages.",
        [s(), calls("c1"), {"role": "user", "content": "<tool_response>21C</tool_response> thanks"}],
    ),
    ("qwen-vllm", "Q2", [s()], "No user query found in messages.", [s(), u()]),
    (
        "qwen-vllm",
        "Q2",
        [s(), calls("c1"), {"role": "user", "content": [text("<tool_response>21C</tool_response>")]}],
        "No user query found in messages.",
        [s(), calls("c1"), {"role": "user", "content": [text("<tool_response>21C</tool_response>"), text("thanks")]}],
    ),
    (
        "qwen-vllm",
        "Q3",
        [u(), s("late")],
        "System message must be at the beginning.",
        [s("early"), u()],
    ),
    ("qwen-vllm", "Q3", [s(), s("second"), u()], "System message must be at the beginning.", [s(), u(), a()]),
    ("qwen-vllm", "Q4", [{"role": "developer", "content": "d"}, u()], "Unexpected message role.", [s("d"), u()]),
    (
        "qwen-vllm",
        "Q5",
        [{"role": "system", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}, u()],
        "System message cannot contain images.",
        [s(), {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}, text()]}],
    ),
    (
        "qwen-vllm",
        "Q5",
        [{"role": "system", "content": [{"type": "video_url", "video_url": {"url": "https://x/y.mp4"}}]}, u()],
        "System message cannot contain videos.",
        [s(), {"role": "user", "content": [{"type": "video_url", "video_url": {"url": "https://x/y.mp4"}}]}],
    ),
    (
        "qwen-vllm",
        "Q5",
        [{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}]}],
        "Unexpected item type in content.",
        [{"role": "user", "content": [text("transcribe this")]}],
    ),
    ("qwen-vllm", "Q5", [{"role": "user", "content": {"text": "hi"}}], "Unexpected content type.", [u()]),
    # Reasoning sent back: DeepSeek, Kimi, Groq, OpenRouter, Anthropic with thinking on
    ("deepseek", "D0", [{"role": "narrator", "content": "x"}, u()], D0_TEXT, [u()]),
    ("deepseek", "D1", [u(), calls("call_1"), u()], D1, [u(), calls("call_1"), tool("call_1"), u()]),
    ("deepseek", "D2", [u(), a(reasoning_content="r"), u()], D2.format(i=1), [u(), a(), u()]),
    ("deepseek", "D3", THINKING | {"messages": [u(), calls("call_1"), tool("call_1")]}, D3.format(i=1),
     THINKING | {"messages": [u(), calls("call_1") | {"reasoning_content": "r"}, tool("call_1")]}),
    ("kimi", "K0", [{"role": "narrator", "content": "x"}, u()], KIMI_K0, [u()]),
    ("kimi", "K1", [u(), tool("call_1")], K1, [u(), calls("call_1"), tool("call_1")]),
    ("kimi", "K2", THINKING | {"messages": [u(), calls("call_1"), tool("call_1")]}, K2.format(i=1),
     THINKING | {"messages": [u(), calls("call_1") | {"reasoning_content": ""}, tool("call_1")]}),
    ("groq", "R0", [{"role": "narrator", "content": "x"}, u()], GROQ_R0, [u()]),
    ("groq", "R1", [u(), tool("call_1")], R1, [u(), calls("call_1"), tool("call_1")]),
    ("groq", "R2", [u(), a(reasoning_content="r"), u()], R2.format(i=1), [u(), a(), u()]),
    ("openrouter", "P0", [{"role": "narrator", "content": "x"}, u()], OPENROUTER_P0, [u()]),
    ("openrouter", "P1", [u(), tool("call_1")], P1, [u(), calls("call_1"), tool("call_1")]),
    ("openrouter", "P2", {"reasoning": {"enabled": True}, "messages": [u(), calls("call_1"), tool("call_1")]},
     P2.format(i=1), {"reasoning": {"enabled": True}, "messages": [
         u(), calls("call_1") | {"reasoning_details": [{"type": "reasoning.encrypted", "data": "x"}]},
         tool("call_1")]}),
    ("anthropic", "A20",
     THINKING | {"messages": [au(text()), aa(text("checking"), use("toolu_1")), au(result("toolu_1"))]},
     A20.format(i=1, found="text"),
     THINKING | {"messages": [au(text()), aa({"type": "thinking", "thinking": "t", "signature": "s"}, text("checking"),
                                             use("toolu_1")), au(result("toolu_1"))]}),
    ("anthropic", "A21",
     [au(text()), aa({"type": "thinking", "thinking": "t", "signature": ""}, text("ok")), au(text())],
     A21.format(i=1, j=0), [au(text()), aa({"type": "thinking", "thinking": "t", "signature": "s"}, text("ok")),
                            au(text())]),
    # Z.ai GLM
    ("glm", "Z0", [{"role": "developer", "content": "d"}, u()], GLM, [s("d"), u()]),
    ("glm", "Z1", [s()], GLM, [s(), u()]),
    ("glm", "Z1", [s(), a()], GLM, [s(), u(), a()]),
    ("glm", "Z2", [u(), tool("call_1")], GLM, [u(), calls("call_1"), tool("call_1")]),
    (
        "glm",
        "Z3",
        {"model": "glm-4.6", "messages": [{"role": "user", "content": [
            text("what is it?"), {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}]},
        GLM_TEXT_ONLY,
        {"model": "glm-4.5v", "messages": [{"role": "user", "content": [
            text("what is it?"), {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}]},
    ),
    (
        "glm",
        "Z2",
        [u(), calls("call_1", "call_1"), tool("call_1"), tool("call_1")],
        GLM,
        [u(), calls("call_1", "call_2"), tool("call_1"), tool("call_2")],
    ),
    # Mistral (hosted API)
    (
        "mistral",
        "M0",
        [u(), {"role": "assistant", "tool_calls": [call(M1ID, name="get weather")]}, tool(M1ID)],
        "Function name was get weather but must be a-z, A-Z, 0-9, or contain underscores and dashes, "
        "with a maximum length of 64.",
        [u(), {"role": "assistant", "tool_calls": [call(M1ID, name="get_weather")]}, tool(M1ID)],
    ),
    (
        "mistral",
        "M1",
        [u(), mcalls(M1ID), tool(M1ID), u("and?")],
        "Unexpected role 'user' after role 'tool'",
        [u(), mcalls(M1ID), tool(M1ID), a(), u("and?")],
    ),
    ("mistral", "M1", [u(), tool(M1ID)], "Unexpected role 'tool' after role 'user'", [u(), mcalls(M1ID), tool(M1ID)]),
    (
        "mistral",
        "M2",
        [u(), a("Once upon")],
        "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant",
        [u(), a("Once upon", prefix=True)],
    ),
    (
        "mistral",
        "M3",
        [u(), a("x", prefix=True), u("go on")],
        "Assistant message with prefix True must be last message",
        [u(), a("x"), u("go on")],
    ),
    (
        "mistral",
        "M4",
        [u(), mcalls(M1ID, M2ID), tool(M1ID), a(), u("and?")],
        "Not the same number of function calls and responses",
        [u(), mcalls(M1ID, M2ID), tool(M1ID), tool(M2ID), a(), u("and?")],
    ),
    (
        "mistral",
        "M4",
        [u(), mcalls(M1ID, M2ID), tool(M1ID)],
        "Not the same number of function calls and responses",
        [u(), mcalls(M1ID, M2ID), tool(M2ID), tool(M1ID)],
    ),
    (
        "mistral",
        "M5",
        [u(), mcalls(M1ID), tool(M1ID), tool(M1ID)],
        f"Duplicate tool call id {M1ID} in tool results",
        [u(), mcalls(M1ID, M2ID), tool(M1ID), tool(M2ID)],
    ),
    (
        "mistral",
        "M5",
        [u(), mcalls(M1ID), tool(M2ID)],
        f"Unexpected tool call id {M2ID} in tool results",
        [u(), mcalls(M2ID), tool(M2ID)],
    ),
    (
        "mistral",
        "M5",
        [u(), mcalls(M1ID, M1ID), tool(M1ID)],
        f"Duplicate tool call id {M1ID} in assistant message",
        [u(), mcalls(M1ID), tool(M1ID)],
    ),
    (
        "mistral",
        "M6",
        [u(), mcalls("call_1"), tool("call_1")],
        "Tool call id was call_1 but must be a-z, A-Z, 0-9, with a length of 9.",
        [u(), mcalls("call00001"), tool("call00001")],
    ),
    (
        "mistral",
        "M6",
        [u(), mcalls(M1ID), {"role": "tool", "content": "21C"}],
        "Tool call id has to be defined.",
        [u(), mcalls(M1ID), tool(M1ID)],
    ),
    ("mistral", "M8", [], "Conversation must have at least one message", [u()]),
    ("mistral", "M8", [a()], "Conversation must start with a user message or system message", [s()]),
    ("mistral", "M8", [{"role": "system", "content": None}, u()], "System prompt must have content", [s(), u()]),
    # Anthropic Messages
    ("anthropic", "A0", {"messages": []}, "messages: at least one message is required", {"messages": [u()]}),
    (
        "anthropic",
        "A1",
        {"system": 5, "messages": [u()]},
        "system: expected string or array, got number",
        {"system": "be brief", "messages": [u()]},
    ),
    (
        "anthropic",
        "A2",
        {"model": "claude-sonnet-4-5", "max_tokens": 1024,
         "messages": [u(), {"role": "system", "content": "x"}, u("b")]},
        "messages.1.role: Input should be 'user' or 'assistant'",
        {"model": "claude-opus-4-8", "max_tokens": 1024, "messages": [u(), {"role": "system", "content": "x"}, u("b")]},
    ),
    (
        "anthropic",
        "A2",
        [u(), {"role": "tool", "content": "x"}],
        "messages.1.role: Input should be 'user' or 'assistant'",
        [u(), a()],
    ),
    (
        "anthropic",
        "A4",
        [u(), u("again")],
        'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row',
        [u(), a(), u("again")],
    ),
    ("anthropic", "A5", [a(), u()], 'messages: first message must use the "user" role', [u(), a(), u()]),
    (
        "anthropic",
        "A6",
        [u("")],
        "messages.0: all messages must have non-empty content except for the optional final assistant message",
        [u(), a("")],
    ),
    (
        "anthropic",
        "A6",
        [u(), aa(), u("and?")],
        "messages.1: all messages must have non-empty content except for the optional final assistant message",
        [u(), aa(text("ok")), u("and?")],
    ),
    (
        "anthropic",
        "A7",
        [au(text("  \n"))],
        "messages: text content blocks must contain non-whitespace text",
        [au(text("x"))],
    ),
    (
        "anthropic",
        "A8",
        [u(), aa(text("checking")), au(result("toolu_1"))],
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
        [u(), aa(text("checking"), use("toolu_1")), au(result("toolu_1"))],
    ),
    (
        "anthropic",
        "A9",
        [u(), aa(use("toolu_1")), au(text("and?"), result("toolu_1"))],
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        [u(), aa(use("toolu_1")), au(result("toolu_1"), text("and?"))],
    ),
    (
        "anthropic",
        "A9",
        [u(), aa(use("toolu_1"), use("toolu_2")), au(result("toolu_2")), aa(text("ok"))],
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        [u(), aa(use("toolu_1"), use("toolu_2")), au(result("toolu_2"), result("toolu_1")), aa(text("ok"))],
    ),
    (
        "anthropic",
        "A15",
        [u(), aa(use("toolu_1")), au(result("toolu_1")), aa(use("toolu_1")), au(result("toolu_1"))],
        "messages.3.content.0: `tool_use` ids must be unique",
        [u(), aa(use("toolu_1")), au(result("toolu_1")), aa(use("toolu_2")), au(result("toolu_2"))],
    ),
    (
        "anthropic",
        "A10",
        [u(), a("The answer is ")],
        "messages: final assistant content cannot end with trailing whitespace",
        [u(), a("The answer is")],
    ),
    (
        "anthropic",
        "A11",
        {"model": "claude-opus-4-6", "max_tokens": 1024, "messages": [u(), a("The answer is")]},
        "This model does not support assistant message prefill. The conversation must end with a user message.",
        {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": [u(), a("The answer is")]},
    ),
    (
        "anthropic",
        "A13",
        [u(), aa(use("call 1")), au(result("call_1"))],
        "messages.1.content.0.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
        [u(), aa(use("call_1")), au(result("call_1"))],
    ),
    ("anthropic", "A14", {"model": "claude-sonnet-4-5", "messages": [u()]}, "max_tokens: Field required",
     {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": [u()]}),
    (
        "anthropic",
        "A13",
        [au(text("what happens?"), {"type": "video", "source": {"type": "base64", "data": "AAAA"}})],
        "messages.0.content.1: Input tag 'video' found using 'type' does not match any of the expected tags: "
        "'advisor_tool_result', 'bash_code_execution_tool_result', 'code_execution_tool_result', 'connector_text', "
        "'container_upload', 'document', 'image', 'mid_conv_system', 'redacted_thinking', 'search_result', "
        "'server_tool_use', 'text', 'text_editor_code_execution_tool_result', 'thinking', 'tool_result', "
        "'tool_search_tool_result', 'tool_use', 'web_fetch_tool_result', 'web_search_tool_result'",
        [au(text("what happens?"), {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                               "data": "AAAA"}})],
    ),
    (
        "anthropic",
        "A16",
        [u(), aa(text("checking"), use("toolu_1") | {"index": 1}), au(result("toolu_1"))],
        "messages.1.content.1.tool_use.index: Extra inputs are not permitted",
        [u(), aa(text("checking"), use("toolu_1")), au(result("toolu_1"))],
    ),
    (
        "anthropic",
        "A17",
        [au({"type": "bogus"})],
        "messages.0.content.0.type: block type 'bogus' is not known to chatconform's schema of 2026-08 "
        "(a newer block type, or a typo)",
        [au(text())],
    ),
    (
        "anthropic",
        "A18",
        [u(), aa(text(" "), use("toolu_1")), au(result("toolu_1"))],
        "messages: text content blocks must contain non-whitespace text (a blank text block beside other blocks of "
        "an assistant message: claude-haiku-4-5 accepted one in 2026-04, other models are not known)",
        [u(), aa(use("toolu_1")), au(result("toolu_1"))],
    ),
    (
        "anthropic",
        "A7",
        [u(), aa(text(" ")), u("and?")],
        "messages: text content blocks must contain non-whitespace text",
        [u(), aa(text("ok")), u("and?")],
    ),
    (
        "anthropic",
        "A19",
        {"messages": [u()], "tools": [{"name": "calendar.create-event", "input_schema": {"type": "object"}}]},
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
        {"messages": [u()], "tools": [{"name": "calendar_create-event", "input_schema": {"type": "object"}},
                                      {"type": "web_search_20250305", "name": "web_search"}]},
    ),
    # Gemini
    (
        "gemini",
        "G0",
        [{"role": "user", "parts": [{"text": 5}]}],
        "* GenerateContentRequest.contents[0].parts[0].text: expected string, got number",
        [gu()],
    ),
    (
        "gemini",
        "G1",
        {"systemInstruction": "be brief", "contents": [gu()]},
        "* GenerateContentRequest.system_instruction: expected object, got string",
        {"systemInstruction": {"parts": [{"text": "be brief"}]}, "contents": [gu()]},
    ),
    (
        "gemini",
        "G2",
        {"systemInstruction": {"parts": [{"text": "be brief"}]}},
        "* GenerateContentRequest.contents: contents is not specified",
        {"systemInstruction": {"parts": [{"text": "be brief"}]}, "contents": [gu()]},
    ),
    (
        "gemini",
        "G2",
        {"contents": []},
        "* GenerateContentRequest.contents: contents is not specified",
        {"contents": [gu()]},
    ),
    (
        "gemini",
        "G3",
        [gu(), {"role": "assistant", "parts": [{"text": "ok"}]}, gu()],
        "Please use a valid role: user, model.",
        [gu(), gm(), gu()],
    ),
    (
        "gemini",
        "G4",
        [gu(), {"role": "model", "parts": []}, gu()],
        "* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.",
        [gu(), gm(), gu()],
    ),
    (
        "gemini",
        "G4",
        [{"role": "user"}],
        "* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.",
        [gu()],
    ),
    (
        "gemini",
        "G5",
        [gu({"text": "look", "inlineData": {"mimeType": "image/png", "data": "AAAA"}})],
        "* GenerateContentRequest.contents[0].parts[0].data: "
        "required oneof field 'data' must have one initialized field",
        [gu({"text": "look"}, {"inlineData": {"mimeType": "image/png", "data": "AAAA"}})],
    ),
    (
        "gemini",
        "G12",
        [gu(), gm({"text": ""}), gu()],
        "Unable to submit request because it has an empty text parameter. Add a value to the parameter and try "
        "again.",
        [gu(), gm({"text": "ok"}), gu()],
    ),
    (
        "gemini",
        "G12",
        [gu({"text": ""}, {"text": "hi"})],
        "Unable to submit request because it has an empty text parameter. Add a value to the parameter and try "
        "again.",
        [gu({"text": "hi"})],
    ),
    (
        "gemini",
        "G5",
        [gu({"thought": True})],
        "* GenerateContentRequest.contents[0].parts[0].data: "
        "required oneof field 'data' must have one initialized field",
        [gu({"text": "x", "thought": True})],
    ),
    (
        "gemini",
        "G13",
        [gu({"text": "hi", "index": 0})],
        "* GenerateContentRequest.contents[0].parts[0]: a Part field not known to chatconform's schema of 2026-08-21 "
        "(python-genai): index",
        [gu({"text": "hi", "thoughtSignature": "c2ln"})],
    ),
    (
        "gemini",
        "G14",
        {"contents": [gu()], "tools": [{"functionDeclarations": [{"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}, "additionalProperties": False}}]}]},
        "Invalid JSON payload received. Unknown name \"additionalProperties\" at "
        "'tools[0].function_declarations[0].parameters': Cannot find field.",
        {"contents": [gu()], "tools": [{"functionDeclarations": [{"name": "get_weather", "parametersJsonSchema": {
            "type": "object", "properties": {"city": {"type": "string"}}, "additionalProperties": False}}]}]},
    ),
    (
        "gemini",
        "G14",
        {"contents": [gu()], "tools": [{"functionDeclarations": [{"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": ["string", "null"]}}}}]}]},
        "Invalid JSON payload received. Unknown name \"type\" at "
        "'tools[0].function_declarations[0].parameters.properties[0].value': Proto field is not repeating, cannot "
        "start list.",
        {"contents": [gu()], "tools": [{"functionDeclarations": [{"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string", "nullable": True}}}}]}]},
    ),
    (
        "gemini",
        "G15",
        {"contents": [gu()], "tools": [{"functionDeclarations": [{"name": "2fa-code", "parameters": {}}]}]},
        "* GenerateContentRequest.tools[0].function_declarations[0].name: Invalid function name. Must start with a "
        "letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.) or dashes (-), with a "
        "maximum length of 64.",
        {"contents": [gu()], "tools": [{"functionDeclarations": [{"name": "_2fa-code.v1", "parameters": {}}]}]},
    ),
    (
        "gemini",
        "G8",
        [gu(), gm(fcall("a"), fcall("b")), gu(fresp("a")), gu({"text": "and b?"})],
        "Please ensure that the number of function response parts is equal to the number of function call parts "
        "of the function call turn.",
        [gu(), gm(fcall("a"), fcall("b")), gu(fresp("a")), gu(fresp("b")), gu({"text": "thanks"})],
    ),
    (
        "gemini",
        "G6",
        [gm(fcall()), gu(fresp())],
        "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
        [gu(), gm(fcall()), gu(fresp())],
    ),
    (
        "gemini",
        "G6",
        [gu(), gm(), gm(fcall()), gu(fresp())],
        "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
        [gu(), gm({"text": "let me check"}, fcall()), gu(fresp())],
    ),
    (
        "gemini",
        "G7",
        [gu(), gu(fresp())],
        "Please ensure that function response turn comes immediately after a function call turn.",
        [gu(), gm(fcall()), gu(fresp())],
    ),
    (
        "gemini",
        "G8",
        [gu(), gm(fcall("a"), fcall("b")), gu(fresp("a"))],
        "Please ensure that the number of function response parts is equal to the number of function call parts "
        "of the function call turn.",
        [gu(), gm(fcall("a"), fcall("b")), gu(fresp("b"), fresp("a"))],
    ),
    (
        "gemini",
        "G8",
        [gu(), gm(fcall(call_id="c1")), gu(fresp(call_id="c2"))],
        "Please ensure that the number of function response parts is equal to the number of function call parts "
        "of the function call turn.",
        [gu(), gm(fcall(call_id="c1")), gu(fresp(call_id="c1"))],
    ),
    (
        "gemini",
        "G8",
        [gu(), gm(fcall()), gu({"text": "never mind"})],
        "Please ensure that the number of function response parts is equal to the number of function call parts "
        "of the function call turn.",
        [gu(), gm(fcall()), gu(fresp()), gu({"text": "thanks"})],
    ),
    (
        "gemini",
        "G10",
        [gu(), gm()],
        "Please ensure that multiturn requests ends with a user role or a function response.",
        [gu(), gm(), gu()],
    ),
    (
        "gemini",
        "G11",
        [gu(), gm(fcall()), gu(fresp(), {"text": "and the next one?"})],
        "Requests ending with a model turn are not supported.",
        [gu(), gm(fcall()), gu(fresp()), gu({"text": "and the next one?"})],
    ),
    # Bedrock Converse
    (
        "bedrock-converse",
        "B0",
        [bu({"image": {"format": "bmp", "source": {"bytes": "AAAA"}}}, {"text": "what is it?"})],
        "1 validation error detected: Value at 'messages.0.content.0.image.format' failed to satisfy constraint: "
        "'bmp' is not one of 'png', 'jpeg', 'gif', 'webp'",
        [bu({"image": {"format": "png", "source": {"bytes": "AAAA"}}}, {"text": "what is it?"})],
    ),
    (
        "bedrock-converse",
        "B1",
        [bu(), {"role": "system", "content": [{"text": "x"}]}],
        "1 validation error detected: Value 'system' at 'messages.1.member.role' failed to satisfy constraint: "
        "Member must satisfy enum value set: [user, assistant]",
        [bu(), ba()],
    ),
    (
        "bedrock-converse",
        "B1",
        [bu({"text": "what is it?", "image": {"format": "png", "source": {"bytes": "AAAA"}}})],
        "The ContentBlock object at messages.0.content.0 must set exactly one member.",
        [bu({"text": "what is it?"}, {"image": {"format": "png", "source": {"bytes": "AAAA"}}})],
    ),
    (
        "bedrock-converse",
        "B2",
        [ba(), bu()],
        "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
        [bu(), ba(), bu()],
    ),
    (
        "bedrock-converse",
        "B2",
        {"system": [{"text": "be brief"}], "messages": []},
        "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
        {"system": [{"text": "be brief"}], "messages": [bu()]},
    ),
    (
        "bedrock-converse",
        "B3",
        [bu(), bu({"text": "again"})],
        "A conversation must alternate between user and assistant roles. Make sure the conversation alternates "
        "between user and assistant roles and try again.",
        [bu({"text": "hi"}, {"text": "again"})],
    ),
    (
        "bedrock-converse",
        "B4",
        TOOLS | {"messages": [bu(), ba(buse("t1")), bu(bres("t1"), bres("t2"))]},
        "The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks of previous turn.",
        TOOLS | {"messages": [bu(), ba(buse("t1"), buse("t2")), bu(bres("t1"), bres("t2"))]},
    ),
    (
        "bedrock-converse",
        "B4",
        TOOLS | {"messages": [bu(), ba(buse("t1")), bu(bres("t9"))]},
        "The model returned the following errors: messages.2.content.0: "
        "unexpected `tool_use_id` found in `tool_result` blocks: t9. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
        TOOLS | {"messages": [bu(), ba(buse("t1")), bu(bres("t1"))]},
    ),
    (
        "bedrock-converse",
        "B4",
        TOOLS | {"messages": [bu(), ba(buse("t1")), bu({"text": "never mind"})]},
        "The model returned the following errors: messages.1: "
        "`tool_use` ids were found without `tool_result` blocks immediately after: t1. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        TOOLS | {"messages": [bu(), ba(buse("t1")), bu(bres("t1")), ba(), bu({"text": "never mind"})]},
    ),
    (
        "bedrock-converse",
        "B5",
        TOOLS | {"messages": [bu(), ba(buse("t1")), bu(bres("t1"), {"text": "and?"})]},
        "messages.2.content: Conversation blocks and tool result blocks cannot be provided in the same turn.",
        TOOLS | {"messages": [bu(), ba(buse("t1")), bu(bres("t1"), {"cachePoint": {"type": "default"}})]},
    ),
    (
        "bedrock-converse",
        "B6",
        {"messages": [bu(), ba(buse("t1")), bu(bres("t1"))]},
        "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
        TOOLS | {"messages": [bu(), ba(buse("t1")), bu(bres("t1"))]},
    ),
    (
        "bedrock-converse",
        "B7",
        [bu({"text": "hi"}, {"text": " "})],
        "The text field in the ContentBlock object at messages.0.content.1 is blank. "
        "Add text to the text field, and try again.",
        [bu({"text": "hi"}, {"text": "there"})],
    ),
    (
        "bedrock-converse",
        "B7",
        [bu(), {"role": "assistant", "content": []}, bu()],
        "The content field in the Message object at messages.1 is empty.",
        [bu(), ba(), bu()],
    ),
    (
        "bedrock-converse",
        "B7",
        [bu({"document": {"format": "pdf", "name": "report", "source": {"bytes": "AAAA"}}})],
        "A text block must be included when using documents.",
        [bu({"document": {"format": "pdf", "name": "report", "source": {"bytes": "AAAA"}}}, {"text": "summarize"})],
    ),
    ("bedrock-converse", "B8", [bu(), ba()], "A conversation must end with a user message.", [bu(), ba(), bu()]),
    (
        "bedrock-converse",
        "B9",
        {"messages": [bu()], "toolConfig": {"tools": [{"toolSpec": {"name": "Complete Session",
                                                                     "inputSchema": {"json": {"type": "object"}}}}]}},
        "1 validation error detected: Value 'Complete Session' at 'toolConfig.tools.0.member.toolSpec.name' failed to "
        "satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
        {"messages": [bu()], "toolConfig": {"tools": [{"toolSpec": {"name": "completeSession",
                                                                     "inputSchema": {"json": {"type": "object"}}}}]}},
    ),
    (
        "bedrock-converse",
        "B9",
        {"messages": [bu(), ba({"toolUse": {"toolUseId": "t1", "name": "fs.read", "input": {}}}), bu(bres("t1"))]}
        | {"toolConfig": {"tools": [{"toolSpec": {"name": "fs_read", "inputSchema": {"json": {}}}}]}},
        "1 validation error detected: Value at 'messages.1.member.content.0.member.toolUse.name' failed to satisfy "
        "constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
        {"messages": [bu(), ba({"toolUse": {"toolUseId": "t1", "name": "fs_read", "input": {}}}), bu(bres("t1"))]}
        | {"toolConfig": {"tools": [{"toolSpec": {"name": "fs_read", "inputSchema": {"json": {}}}}]}},
    ),
]


REJECTING_MODEL = {("bedrock-converse", "B5"): "meta.llama4-maverick-17b-instruct-v1:0",
                   ("gemini", "G12"): "gemini-2.0-flash", ("deepseek", "D2"): "deepseek-r1",
                   ("deepseek", "D3"): "deepseek-v4-pro", ("openrouter", "P2"): "google/gemini-3-pro-preview"}


def _case_id(case) -> str:
    return f"{case[0]}-{case[1]}"


@pytest.mark.parametrize("provider, rule, broken, message, close", CASES, ids=[_case_id(c) for c in CASES])
def test_breaking_body_reports_rule_with_provider_text(provider, rule, broken, message, close):
    # A model-dependent rule is judged for a model known to reject it.
    problems = validate(broken, provider, model=REJECTING_MODEL.get((provider, rule)))
    found = [(p.rule, p.message) for p in problems]
    assert (rule, message) in found, found
    expected_severity = RULES[provider][rule].severity
    assert all(p.severity == expected_severity for p in problems if p.rule == rule)


@pytest.mark.parametrize("provider, rule, broken, message, close", CASES, ids=[_case_id(c) for c in CASES])
def test_close_body_is_clean(provider, rule, broken, message, close):
    problems = validate(close, provider, model=REJECTING_MODEL.get((provider, rule)))
    assert [p for p in problems if p.rule == rule] == []
    assert [p for p in problems if p.severity == "error"] == []


def test_every_catalogued_rule_has_a_case():
    covered = {(provider, rule) for provider, rule, *_ in CASES}
    catalogued = {(provider, rule) for provider, rules in RULES.items() for rule in rules}
    # A12 has its own test (a large body); G9, X7, A22, A23, P3 and P4 need the answers before the
    # request, so their cases are recorded traffic (test_validate_traffic.py, test_replayed.py,
    # tests/dialects/test_openai_responses.py), and X8 a server that answered before
    # (tests/serve/test_openai_responses_sdk.py).
    assert catalogued - covered == {("anthropic", "A12"), ("gemini", "G9"), ("openai-responses", "X7"),
                                    ("openai-responses", "X8"), ("anthropic", "A22"), ("anthropic", "A23"),
                                    ("openrouter", "P3"), ("openrouter", "P4")}


def test_a12_message_limit():
    messages = [u(), a()] * 50_000 + [u()]
    problems = validate({"messages": messages}, "anthropic")
    assert [(p.rule, p.path, p.message) for p in problems] == [
        ("A12", "$.messages", "There is a limit of 100,000 messages in a single request.")
    ]
    exactly = validate({"messages": messages[:-1]}, "anthropic")  # 100,000, ending in a prefill
    assert [p.rule for p in exactly] == ["A11"] and exactly[0].severity == "warning"


def test_glm_every_problem_carries_1214():
    bodies = [[s()], [u(), tool("x")], [{"role": "user"}], {"messages": 5}, "not a body",
              [{"role": "user", "content": [{"type": 3}]}]]
    for body in bodies:
        problems = validate(body, "glm")
        assert problems and all(p.message == GLM for p in problems)


def test_paths_and_sources():
    problems = validate([u(), s("late")], "qwen-vllm")
    assert problems == [Problem("Q3", "$.messages[1].role", "System message must be at the beginning.", "qwen-vllm",
                                source="schema")]
    (o7,) = validate([u(), tool("c1")], "openai-chat")
    assert (o7.path, o7.source) == ("$.messages[1].role", "sequence")


def test_problems_sorted_in_body_order():
    body = {
        "system": [text(" ")],
        "messages": [u(), aa(use("t1")), au(text("x"), result("t1")), u("")] + [u()] * 9 + [a("end ")],
    }
    paths = [p.path for p in validate(body, "anthropic")]
    assert paths[0] == "$.system[0].text"
    indexes = [int(p.split("[")[1].split("]")[0]) for p in paths[1:]]
    assert indexes == sorted(indexes) and indexes[-1] == 13


def test_interrupted_tool_round_reports_o8_then_o7():
    body = [u(), calls("c1"), u("interrupt"), tool("c1")]
    rules = [p.rule for p in validate(body, "openai-chat")]
    assert rules == ["O8", "O7"]


@pytest.mark.parametrize("model, level", [
    (None, "warning"),  # the model is not known: a portability hazard
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", None),  # Claude takes text beside a result
    ("amazon.nova-pro-v1:0", None),
    ("meta.llama4-maverick-17b-instruct-v1:0", "error"),
    ("mistral.pixtral-large-2502-v1:0", "error"),
    ("cohere.command-r-v1:0", "warning"),  # not in either list
])
def test_b5_level_follows_the_model(model, level):
    body = TOOLS | {"messages": [bu(), ba(buse("t1")), bu(bres("t1"), {"text": "and?"})]}
    found = [p.severity for p in validate(body, "bedrock-converse", model=model) if p.rule == "B5"]
    assert found == ([level] if level else [])


@pytest.mark.parametrize("model, level", [
    (None, "warning"), ("claude-opus-4-8", "error"), ("claude-sonnet-4-6", "error"),
    ("claude-sonnet-4-5", None), ("claude-3-5-haiku-latest", None),
])
def test_a11_level_follows_the_model(model, level):
    body = {"messages": [u(), a("The answer is")]} | ({"model": model} if model else {})
    assert [p.severity for p in validate(body, "anthropic") if p.rule == "A11"] == ([level] if level else [])


# A mismatched tool_result (A8, A9), two user turns on Bedrock (B3), an empty Gemini text (G12), an
# image_url as a bare string (O11): each judged by the family of the model it goes to.
MISMATCHED = [u(), aa(text("checking"), use("toolu_1")), au(result("toolu_2"))]
CONSECUTIVE = {"messages": [bu(), bu({"text": "and again"})]}
EMPTY_TEXT = [gu(), gm({"text": ""}), gu()]
IMAGE_STRING = [{"role": "user", "content": [{"type": "image_url", "image_url": "https://x/y.png"}]}]


@pytest.mark.parametrize("provider, body, rule, model, level", [
    ("anthropic", MISMATCHED, "A8", "claude-3-opus-20240229", None),  # answered in 2024
    ("anthropic", MISMATCHED, "A8", "claude-sonnet-4-5", "error"),
    ("anthropic", MISMATCHED, "A9", None, "error"),  # every Claude still served rejects it
    ("bedrock-converse", CONSECUTIVE, "B3", "amazon.titan-text-express-v1", None),
    ("bedrock-converse", CONSECUTIVE, "B3", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "error"),
    ("bedrock-converse", CONSECUTIVE, "B3", None, "error"),
    ("bedrock-converse", CONSECUTIVE, "B3", "cohere.command-r-v1:0", "warning"),  # not in the table
    ("gemini", EMPTY_TEXT, "G12", "gemini-2.0-flash", "error"),
    ("gemini", EMPTY_TEXT, "G12", "gemini-3-flash-preview", None),
    ("gemini", EMPTY_TEXT, "G12", None, None),  # every family still served takes it
    ("openai-chat", IMAGE_STRING, "O11", "gpt-4-vision-preview", None),
    ("openai-chat", IMAGE_STRING, "O11", "gpt-4o", "error"),
])
def test_model_dependent_rules_follow_the_family(provider, body, rule, model, level):
    found = [p.severity for p in validate(body, provider, model=model) if p.rule == rule]
    assert found == ([level] if level else [])


def test_a_model_the_table_does_not_know_is_judged_as_the_newest_family_with_a_warning():
    (problem,) = [p for p in validate(MISMATCHED, "anthropic", model="gpt-4o") if p.rule == "A8"]
    assert problem.severity == "warning"
    assert problem.message.endswith("(model gpt-4o is not in chatconform's model table of 2026-08: judged as "
                                    "every later Claude, the newest family, which rejects it)")
    (prefill,) = [p for p in validate([u(), a("The answer is")], "anthropic") if p.rule == "A11"]
    assert prefill.severity == "warning" and "(model not named: Claude families still served differ" in prefill.message
