"""Anthropic Messages API: system text in its own slot, same-role turns combined."""

from chatconform.errors import ERROR, WARNING

from .profile import CheckLevel, Provider, ReasoningFamily

PROFILE = Provider(
    id="anthropic",
    order=50,
    title="Anthropic Messages API",
    # PDF documents as `document` blocks, as bytes or by URL; no audio or video
    # (https://docs.claude.com/en/docs/build-with-claude/pdf-support).
    inline_files={"document": "document"},
    linked_files={"document": "document"},
    docs="https://platform.claude.com/docs/en/api/messages",
    rule_prefix="A",
    dialect="anthropic_messages",
    messages_key="messages",
    system_slot="system",
    merges_turns=True,
    check_levels={
        "payload.system_first": CheckLevel(
            ERROR, "roles inside messages are user and assistant; system text goes in `system`", rule="A2"),
        "payload.user_led": CheckLevel(
            WARNING, "answers a payload that does not lead with a user turn (A5 is a warning)"),
        "payload.tool_pairing": CheckLevel(
            ERROR, "'`tool_use` ids were found without `tool_result` blocks immediately after'", rule="A9"),
    },
    reused_call_id=CheckLevel(ERROR, "'`tool_use` ids must be unique'", rule="A15"),
    error_flag='`is_error: true` on the tool_result block',
    # Thinking blocks go back complete and unmodified, only those Anthropic signed
    # (https://platform.claude.com/docs/build-with-claude/thinking-tool-workflows).
    reasoning_slot="thinking_blocks",
    reasoning_signers=frozenset({"anthropic"}),
    reasoning_families=(
        ReasoningFamily("every Claude with thinking on", r"claude", "required", "last_tool_turn", rule="A20",
                        evidence="https://github.com/BerriAI/litellm/issues/15601", date="2025-10",
                        example="claude-sonnet-4-5"),
    ),
)
