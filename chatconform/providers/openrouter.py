"""OpenRouter chat completions: the OpenAI dialect; the reasoning of a model behind it comes
back as ``reasoning_details``, which go back unchanged."""

from chatconform.errors import ERROR, WARNING

from .profile import CheckLevel, Provider, ReasoningFamily

PROFILE = Provider(
    id="openrouter",
    order=38,
    title="OpenRouter chat completions",
    docs="https://openrouter.ai/docs/use-cases/reasoning-tokens",
    rule_prefix="P",
    dialect="openai_chat",
    messages_key="messages",
    system_slot=None,
    check_levels={
        "payload.system_first": CheckLevel(WARNING, "passes the messages on; the model behind it decides"),
        "payload.user_led": CheckLevel(WARNING, "passes the messages on; the model behind it decides"),
        "payload.tool_pairing": CheckLevel(
            ERROR, "tool messages answer the tool_calls right before them, as on OpenAI", rule="P1"),
    },
    reused_call_id=CheckLevel(WARNING, "passes the messages on; the model behind it decides"),
    api_paths=("/api/v1/chat/completions",),
    reasoning_slot="reasoning_details",
    reasoning_signers=frozenset({"openrouter"}),
    reasoning_families=(
        ReasoningFamily("Gemini models behind it (google/gemini-*)", r"gemini", "required", "tool_turns", rule="P2",
                        evidence="https://github.com/microsoft/agent-framework/issues/2947", date="2025-12",
                        example="google/gemini-3-pro-preview"),
        ReasoningFamily("every other reasoning model behind it (Claude, OpenAI o-series)", r".", "taken",
                        "tool_turns", rule="P2", evidence="https://openrouter.ai/docs/use-cases/reasoning-tokens",
                        date="2026-05", example="anthropic/claude-sonnet-4.5"),
    ),
)
