"""What the SDK tests of ``chatconform serve`` share."""

from __future__ import annotations


def conversation(server, first_user_text: str) -> list:
    """The verdicts of the conversation that opens with ``first_user_text``, in order."""
    from chatconform.serve.app import text_key

    return [v for v in server.verdicts if v.conversation == text_key(first_user_text)]


#: A tool every SDK test declares, and the two-turn script that calls it, then answers.
WEATHER_SCRIPT = [
    {"thinking": "The user wants the weather; call the tool.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    {"text": "It is sunny in Paris."},
]
