"""Moonshot's Kimi chat completions: the OpenAI dialect; with thinking on, a tool-call turn
carries its ``reasoning_content``."""

from chatconform.errors import ERROR, WARNING

from .profile import CheckLevel, Provider, ReasoningFamily

PROFILE = Provider(
    id="kimi",
    order=36,
    title="Moonshot Kimi chat completions",
    docs="https://platform.moonshot.ai/docs/api/chat",
    rule_prefix="K",
    dialect="openai_chat",
    messages_key="messages",
    system_slot=None,
    check_levels={
        "payload.system_first": CheckLevel(WARNING, "no known Kimi rule on where system messages go"),
        "payload.user_led": CheckLevel(WARNING, "no known Kimi rule on the first turn"),
        "payload.tool_pairing": CheckLevel(
            ERROR, "tool messages answer the tool_calls right before them, as on OpenAI", rule="K1"),
    },
    reused_call_id=CheckLevel(WARNING, "Kimi itself restarts `<name>:0` ids every round"),
    reuses_call_ids="Kimi's models restart `<name>:0` call ids every round",
    api_paths=("/v1/chat/completions",),
    reasoning_slot="reasoning_content",
    reasoning_signers=frozenset({"moonshotai", "kimi"}),
    reasoning_families=(
        ReasoningFamily("kimi-k2 thinking models (kimi-k2-thinking, kimi-k2.5 and later)", r"kimi", "required",
                        "tool_turns", rule="K2", evidence="https://github.com/bytedance/deer-flow/issues/3043",
                        date="2026-03", example="kimi-k2-thinking"),
    ),
    answer_reasoning="reasoning_content",
)
