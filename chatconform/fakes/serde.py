"""Serde fakes: ways of storing and reading a history back that shipped with a bug.

Each keeps pydantic-ai's own JSON where its bug does not touch it, so it fails the
checks its bug explains.
"""

from __future__ import annotations

import json
from typing import Generic, TypeVar

from pydantic import BaseModel

from chatconform.fakes.base import Fake
from chatconform.lazy import pai
from chatconform.reference.serde import dump, load

#: What a dehydrated image's bytes are replaced with.
_PLACEHOLDER = b"<image stored separately>"


class DropsUnknownParts(Fake):
    """Reads message by message and part by part, skipping every part whose ``part_kind``
    it does not know (and a message left with no parts), with a warning at most."""

    name = "fake-drops-unknown-parts"
    reproduces = ("loaders that skip stored chat messages they cannot read instead of failing: gitbutler "
                  "skips Claude messages that fail to deserialize (https://github.com/gitbutlerapp/gitbutler"
                  "/pull/10831); OpenWA dropped every message of a type newer than its bundled schema, with "
                  "nothing logged (https://github.com/rmyndharis/OpenWA/pull/1586)")
    violates = ("serde.rejects_malformed",)
    _KNOWN_PARTS = frozenset({
        "system-prompt", "user-prompt", "tool-return", "retry-prompt", "retry-feedback", "compaction", "text",
        "thinking", "tool-call", "builtin-tool-call", "builtin-tool-return", "file", "speech"})

    def dump(self, history):
        return dump(history)

    def load(self, data):
        messages = json.loads(data)
        kept = []
        for message in messages:
            parts = [p for p in message.get("parts", []) if p.get("part_kind") in self._KNOWN_PARTS]
            if parts or not message.get("parts"):
                kept.append({**message, "parts": parts})
        return pai.ModelMessagesTypeAdapter.validate_python(kept)


_Message = TypeVar("_Message")


class _Thread(BaseModel, Generic[_Message]):
    """The container a run's messages are stored in, as in pydantic-ai's storage docs
    (generic, so pydantic-ai is imported when it is first filled: :mod:`chatconform.lazy`)."""

    messages: list[_Message]


class StoresContainerModel(Fake):
    """Stores the history inside a container model (``{"messages": [...]}``) and reads it
    back with the same model."""

    name = "fake-stores-container-model"
    reproduces = ("storing a run's messages in a container model, the pattern pydantic-ai's storage docs "
                  "show (https://github.com/pydantic/pydantic-ai/issues/8367), writes an object that "
                  "ModelMessagesTypeAdapter.validate_json, what every other pydantic-ai process loads "
                  "with, rejects")
    violates = ("serde.schema_valid", "serde.matches_reference")

    def dump(self, history):
        return _Thread[pai.ModelMessage](messages=list(history)).model_dump_json()

    def load(self, data):
        return _Thread[pai.ModelMessage].model_validate_json(data).messages


class JsonDumpsFields(Fake):
    """``json.dumps`` over pydantic's python-mode dump: datetimes are not JSON."""

    name = "fake-json-dumps-fields"
    reproduces = ("json.dumps over agent messages that carry datetimes raises 'Object of type datetime is not "
                  "JSON serializable' (https://github.com/microsoft/autogen/issues/6635); a pydantic-ai "
                  "history's python-mode dump holds a timestamp in every message")
    violates = ("serde.no_crash",)

    def dump(self, history):
        return json.dumps(pai.ModelMessagesTypeAdapter.dump_python(list(history)))

    def load(self, data):
        return load(data)


class DehydratesImagesInPlace(Fake):
    """Replaces each inline image's bytes in the live messages with a placeholder before
    dumping, to keep the stored rows small."""

    name = "fake-dehydrates-images-in-place"
    reproduces = ("griptape-nodes 'de/rehydrates images in the thread so raw bytes are not saved to the "
                  "conversation history'; review flagged the in-place mutation "
                  "(https://github.com/griptape-ai/griptape-nodes-engine/pull/5092): the live history loses "
                  "its images, and what is stored loads back without them")
    violates = ("serde.input_untouched", "serde.round_trip", "serde.matches_reference")

    def dump(self, history):
        for message in history:
            for part in message.parts:
                if isinstance(part, pai.UserPromptPart) and not isinstance(part.content, str):
                    for item in part.content:
                        if isinstance(item, pai.BinaryContent):
                            item.data = _PLACEHOLDER
        return dump(history)

    def load(self, data):
        return load(data)


class DropsMessageState(Fake):
    """Stores each message without its ``state``, as a store whose columns predate the field
    does: a run cut off reads back ``complete``."""

    name = "fake-drops-message-state"
    reproduces = ("the interrupted marker on a cut-off run is what lets the next run close it (dify-agent "
                  "stores it: https://github.com/langgenius/dify/pull/41846); a store that writes only the "
                  "fields it had columns for reads the run back complete, and the next prompt fails with "
                  "'unprocessed tool calls' (https://github.com/langgenius/dify/issues/41616)")
    violates = ("serde.round_trip", "lifecycle.restart_unchanged")

    def dump(self, history):
        messages = json.loads(dump(history))
        for message in messages:
            message.pop("state", None)
        return json.dumps(messages).encode()

    def load(self, data):
        return load(data)
