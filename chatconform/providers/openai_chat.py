"""OpenAI Chat Completions: the OpenAI dialect as OpenAI itself serves it."""

from chatconform.errors import ERROR, WARNING

from .profile import CheckLevel, Provider

PROFILE = Provider(
    id="openai-chat",
    order=10,
    title="OpenAI Chat Completions",
    # PDF files as `file` parts (file_data), WAV/MP3 audio as `input_audio`; no video, and no
    # file by URL (https://platform.openai.com/docs/guides/pdf-files, .../guides/audio).
    inline_files={"document": "file", "audio": "input_audio"},
    docs="https://platform.openai.com/docs/api-reference/chat/create",
    rule_prefix="O",
    dialect="openai_chat",
    messages_key="messages",
    system_slot=None,
    check_levels={
        "payload.system_first": CheckLevel(WARNING, "accepts several system messages anywhere"),
        "payload.user_led": CheckLevel(WARNING, "answers a payload that does not lead with a user turn"),
        "payload.tool_pairing": CheckLevel(
            ERROR, "'An assistant message with 'tool_calls' must be followed by tool messages responding "
                   "to each 'tool_call_id'.'", rule="O8"),
    },
    reused_call_id=CheckLevel(WARNING, "pairs each round's tool messages with that round's calls"),
)
