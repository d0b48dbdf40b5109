"""GroqCloud chat completions: the OpenAI dialect, with a closed message schema that
rejects every reasoning field on an assistant message of the history."""

from chatconform.errors import ERROR, WARNING

from .profile import CheckLevel, Provider, ReasoningFamily

PROFILE = Provider(
    id="groq",
    order=37,
    title="GroqCloud chat completions",
    docs="https://console.groq.com/docs/api-reference#chat-create",
    rule_prefix="R",
    dialect="openai_chat",
    messages_key="messages",
    system_slot=None,
    check_levels={
        "payload.system_first": CheckLevel(WARNING, "no known Groq rule on where system messages go"),
        "payload.user_led": CheckLevel(WARNING, "no known Groq rule on the first turn"),
        "payload.tool_pairing": CheckLevel(
            ERROR, "tool messages answer the tool_calls right before them, as on OpenAI", rule="R1"),
    },
    reused_call_id=CheckLevel(WARNING, "pairs each tool message with the calls right before it"),
    api_paths=("/openai/v1/chat/completions",),
    reasoning_families=(
        ReasoningFamily("every Groq model (llama-4, gpt-oss, qwen3)", r".", "rejected", "tool_turns", rule="R2",
                        evidence="https://github.com/janhq/jan/issues/8136", date="2026-05",
                        example="openai/gpt-oss-120b"),
    ),
    # Groq's "parsed" reasoning format (the one tool use takes) returns the thinking in `reasoning`.
    answer_reasoning="reasoning",
)
