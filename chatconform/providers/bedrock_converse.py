"""AWS Bedrock Converse: strict user/assistant alternation, tool results in user turns."""

from chatconform.errors import ERROR, WARNING

from .profile import CheckLevel, Provider

PROFILE = Provider(
    id="bedrock-converse",
    order=70,
    title="AWS Bedrock Converse",
    # PDF `document` and MP4 `video` blocks as bytes (or an S3 location), no URL
    # (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ContentBlock.html).
    inline_files={"document": "document", "video": "video"},
    docs="https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html",
    rule_prefix="B",
    dialect="bedrock_converse",
    messages_key="messages",
    system_slot="system",
    merges_turns=True,
    requires_alternation=True,
    bridges_tool_to_user=True,
    check_levels={
        "payload.system_first": CheckLevel(
            ERROR, "roles are user and assistant; system text goes in `system`", rule="B1"),
        "payload.user_led": CheckLevel(ERROR, "'A conversation must start with a user message.'", rule="B2"),
        "payload.tool_pairing": CheckLevel(
            ERROR, "'The number of toolResult blocks ... exceeds the number of toolUse blocks of previous turn.'",
            rule="B4"),
    },
    reused_call_id=CheckLevel(
        WARNING, "no Bedrock rule cited: Claude models through Bedrock answer Anthropic's '`tool_use` ids must "
                 "be unique', other models are not known to reject it"),
    error_flag='`status: "error"` on the toolResult block',
)
