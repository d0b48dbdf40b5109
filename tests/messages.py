"""Message builders shared by the project's own tests: a standing system prompt, a user
turn and a text answer, each a one-part message."""

from pydantic_ai.messages import ModelRequest, ModelResponse, SystemPromptPart, TextPart, UserPromptPart

#: A standing system prompt (tagged ``s1``); tests put it in a request of their own making.
SYSTEM = SystemPromptPart("You are a helpful assistant. (s1)")


def user(text: str) -> ModelRequest:
    """A request holding one user prompt."""
    return ModelRequest([UserPromptPart(text)])


def answer(text: str) -> ModelResponse:
    """A response holding one text part."""
    return ModelResponse([TextPart(text)])
