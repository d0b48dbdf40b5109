"""An application under test: a trip planner that asks a model, runs the weather tool it
calls, and answers with the model's text. It reads its base URL from ``OPENAI_BASE_URL``, as
the openai SDK does, so its tests run against ``chatconform serve`` unchanged.

``TRIM_HISTORY=1`` plants a bug real applications ship: a history trimmed to its last
messages that starts at a tool result, whose call was cut away. OpenAI rejects such a
request; chatconform serve rejects it with OpenAI's own error, and its report names the rule.
"""

from __future__ import annotations

import json
import os

from openai import OpenAI

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def get_weather(city: str) -> str:
    return f"sunny in {city}"


def plan_trip(question: str, client: OpenAI | None = None) -> str:
    """The model's answer to ``question``, after running every tool call it makes."""
    client = client or OpenAI()
    messages: list = [{"role": "system", "content": "You plan trips."}, {"role": "user", "content": question}]
    while True:
        sent = messages[-1:] if os.environ.get("TRIM_HISTORY") == "1" and len(messages) > 3 else messages
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=sent, tools=TOOLS).choices[0].message
        messages.append(reply.model_dump(exclude_none=True))
        if not reply.tool_calls:
            return reply.content or ""
        for call in reply.tool_calls:
            result = get_weather(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
