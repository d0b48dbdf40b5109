"""Message builders shared by the project's own tests: a standing system prompt, a user
turn and a text answer, each a one-part message; a small weather history for the adapters."""

from pydantic_ai.messages import (
    BinaryImage,
    ImageUrl,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

#: A standing system prompt (tagged ``s1``); tests put it in a request of their own making.
SYSTEM = SystemPromptPart("You are a helpful assistant. (s1)")


def user(text: str) -> ModelRequest:
    """A request holding one user prompt."""
    return ModelRequest([UserPromptPart(text)])


def answer(text: str) -> ModelResponse:
    """A response holding one text part."""
    return ModelResponse([TextPart(text)])


#: The bytes of a (truncated) PNG image.
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


def weather_history(result=None):
    """A system prompt, a user prompt with an image by URL and one as bytes, a text and a
    call of ``get_weather`` (``call_1``), its result (``result``, by default a success) and
    the answer."""
    return [
        ModelRequest(parts=[SystemPromptPart("You are a weather bot."),
                            UserPromptPart(["Weather here?", ImageUrl("https://example.com/sky.png"),
                                            BinaryImage(data=PNG, media_type="image/png")])]),
        ModelResponse(parts=[TextPart("Let me check."), ToolCallPart("get_weather", '{"city": "Paris"}', "call_1")]),
        ModelRequest(parts=[result or ToolReturnPart("get_weather", {"temp_c": 21}, "call_1")]),
        ModelResponse(parts=[TextPart("It is 21 degrees.")]),
    ]
