"""Implementations in any language, over a JSON-lines protocol on stdio (``exec:``).

``--impl exec:'COMMAND ARGS'`` starts the program, which says what it is and which
contracts it implements, then answers one JSON request per line. ``docs/protocol.md``
describes the lifecycle and every message; ``schemas/`` holds a JSON Schema per message.
"""

from chatconform.errors import MalformedResult, ProgramError, ProtocolError, RejectedInput
from chatconform.runner.protocol.program import PREFIX, PROTOCOL_VERSION, Program, hello, start, start_host

__all__ = ["PREFIX", "PROTOCOL_VERSION", "MalformedResult", "Program", "ProgramError", "ProtocolError",
           "RejectedInput", "hello", "start", "start_host"]
