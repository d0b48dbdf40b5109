"""Content a named model cannot take: the dialect allows an image part, the model refuses it.

Each provider's profile holds a table of model families and the content kinds each takes
(``Provider.model_content``), and the provider's own refusal of each kind it has been seen to
refuse (``content_refusals``). A body (or a run) that names its model is judged against the
family the model falls in; a model in no family, or a body that names none, is not judged.
Only the OpenAI dialect is read here: it is the one whose providers' families differ.
"""

from __future__ import annotations

import re
from typing import Any

from chatconform.providers import ContentKind, get_provider

from .problems import Problem, json_path
from .rules.common import as_dict, as_list, as_str

__all__ = ["content_problems"]

#: The content kind of each OpenAI-dialect part type that is not text.
_OPENAI_KINDS: dict[str, ContentKind] = {"image_url": "image", "input_audio": "audio", "file": "document",
                                         "video_url": "video"}


def _openai_parts(body: dict) -> list[tuple[list[Any], ContentKind]]:
    """(path, kind) of every part of a message that is not text."""
    found = []
    for i, message in enumerate(as_list(body.get("messages"))):
        for j, part in enumerate(as_list(as_dict(message).get("content"))):
            kind = _OPENAI_KINDS.get(as_str(as_dict(part).get("type")) or "")
            if kind is not None:
                found.append((["messages", i, "content", j, "type"], kind))
    return found


def content_problems(body: dict, provider: str, model: str | None) -> list[Problem]:
    """A problem for each part the named model's family does not take (and its provider has
    been seen refusing); nothing when no model is named or the family is not known."""
    profile = get_provider(provider)
    if not model or not profile.model_content or profile.content_rule is None or profile.dialect != "openai_chat":
        return []
    family = next((f for f in profile.model_content if re.search(f.models, model)), None)
    if family is None:
        return []
    return [Problem(profile.content_rule, json_path(path), profile.content_refusals[kind], provider, source="schema")
            for path, kind in _openai_parts(body)
            if kind not in family.takes and kind in profile.content_refusals]
