"""Sanitize fakes: the reference ``sanitize`` with one step changed to a bug that shipped.

Each keeps everything else of :mod:`chatconform.reference.sanitize`, so it fails the checks
its bug explains (and ``sanitize.matches_reference``, the catch-all).
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlparse

from chatconform.fakes.base import Fake
from chatconform.lazy import pai
from chatconform.reference.sanitize import ALLOWED_SCHEMES, DROP, Sanitizer, sanitize


class _Changed(Fake):
    """The reference with the rules its ``Rules`` override changed."""

    Rules: type[Sanitizer] = Sanitizer

    def sanitize(self, history):
        return self.Rules().sanitize(history)


class _NoTailRule(Sanitizer):
    def strip_trailing_calls(self, history) -> None:
        pass


_PER_MESSAGE = _NoTailRule()


class LastResponseOnly(Fake):
    """Strips the unresolved calls of the last response only, not of the responses before it."""

    name = "fake-last-response-only"
    reproduces = ("pydantic-ai's UI sanitizer stripped dangling calls from one tail response; the fix walks "
                  "back over every trailing response 'so a run of dropped messages can't hide a dangling "
                  "call' (https://github.com/pydantic/pydantic-ai/pull/6407); a call one response back "
                  "survives, and a run merges adjacent responses without a model name")
    violates = ("sanitize.no_trailing_unresolved_calls", "sanitize.matches_reference")

    def sanitize(self, history):
        out = _PER_MESSAGE.sanitize(history)
        if out and isinstance(out[-1], pai.ModelResponse):
            parts = [p for p in out[-1].parts if not isinstance(p, pai.ToolCallPart)]
            if parts:
                out[-1] = replace(out[-1], parts=parts)
            else:
                out.pop()
        return out


class TailBeforeDrop(Fake):
    """Decides which response is the tail before empty messages are dropped."""

    name = "fake-tail-before-drop"
    reproduces = ("pydantic-ai UIAdapter.sanitize_messages anchored the tail on the pre-sanitization last "
                  "index, so when a trailing client system prompt sanitized to nothing the response before "
                  "it kept its unresolved calls, and a second pass strips them "
                  "(https://github.com/pydantic/pydantic-ai/pull/6407)")
    violates = ("sanitize.no_trailing_unresolved_calls", "sanitize.idempotent", "sanitize.matches_reference")

    def sanitize(self, history):
        history = list(history)
        Sanitizer().strip_trailing_calls(history)  # on the tail as sent, before any message is dropped
        return _PER_MESSAGE.sanitize(history)


class _CaseSensitive(Sanitizer):
    def allowed_url(self, url: str) -> bool:
        return url.startswith(("http://", "https://"))


class CaseSensitiveSchemes(_Changed):
    """Allows a file URL only when it starts with ``http://`` or ``https://`` exactly."""

    name = "fake-case-sensitive-schemes"
    reproduces = ("a case-sensitive scheme allow-list rejects valid HTTPS:// URLs, though schemes are "
                  "case-insensitive (RFC 3986 3.1): Bitwarden 'Vault URLs with uppercase URI schemes cannot be "
                  "launched' (https://github.com/bitwarden/clients/issues/22476); here the user's HTTPS:// and "
                  "padded images are dropped")
    violates = ("sanitize.keeps_the_rest", "sanitize.matches_reference")
    Rules = _CaseSensitive


class KeepsForceDownload(_Changed):
    """Drops bad schemes but leaves ``force_download`` as the client set it."""

    name = "fake-keeps-force-download"
    reproduces = ("pydantic-ai sanitize_messages kept FileUrl.force_download='allow-local' from the client, "
                  "which lifts the SSRF private-address block "
                  "(https://github.com/pydantic/pydantic-ai/issues/5535, fixed in PR #5571)")
    violates = ("sanitize.force_download_reset", "sanitize.matches_reference")

    class Rules(Sanitizer):
        def file(self, item):
            if isinstance(item, pai.FileUrl):
                return item if self.allowed_url(item.url) else DROP
            return super().file(item)



class UserContentOnly(_Changed):
    """Applies the file rules to user prompts only; tool results keep their files."""

    name = "fake-user-content-only"
    reproduces = ("pydantic-ai's UI sanitizer checked file URLs in user content only; reaching FileUrls in "
                  "tool return parts, nested dicts and lists included, came later "
                  "(https://github.com/pydantic/pydantic-ai/pull/5571), so a tool result a client wrote could "
                  "carry an s3:// URL or an uploaded file through")
    violates = ("sanitize.file_url_schemes", "sanitize.force_download_reset", "sanitize.no_uploaded_files",
                "sanitize.matches_reference")

    class Rules(Sanitizer):
        def result(self, part):
            return part



class KeepsNoOutputFeedback(_Changed):
    """Strips system prompts but keeps retry feedback, rendered in the system voice."""

    name = "fake-keeps-no-output-feedback"
    reproduces = ("pydantic-ai renders 'no_output' retry feedback as a system prompt, so a client-forged "
                  "RetryFeedbackPart spoke in the system voice until the sanitizer took it with the system "
                  "prompts (https://github.com/pydantic/pydantic-ai/pull/7353)")
    violates = ("sanitize.no_system_voice", "sanitize.matches_reference")

    class Rules(Sanitizer):
        def request_part(self, part):
            return part if isinstance(part, pai.RetryFeedbackPart) else super().request_part(part)



class SanitizesInPlace(Fake):
    """Strips the parts out of the caller's own message objects."""

    name = "fake-sanitizes-in-place"
    reproduces = ("a sanitize_messages that aliases the caller's messages ('msg_copy = msg') and strips "
                  "them in place corrupts the original history "
                  "(https://github.com/browser-use/browser-use/pull/5316 review)")
    violates = ("sanitize.input_untouched",)

    def sanitize(self, history):
        out = sanitize(history)
        for message, clean in zip(history, out, strict=False):
            if isinstance(message, pai.ModelRequest) and isinstance(clean, pai.ModelRequest):
                parts = message.parts
                assert isinstance(parts, list), "pydantic-ai keeps a message's parts in a list"
                parts[:] = clean.parts
        return out


class _Urlparse(Sanitizer):
    def allowed_url(self, url: str) -> bool:
        scheme = urlparse(url).scheme.lower()
        return not scheme or scheme in ALLOWED_SCHEMES


class ParsesUrls(_Changed):
    """Reads the scheme with ``urllib.parse.urlparse``, which raises on a malformed host."""

    name = "fake-parses-urls"
    reproduces = ("pydantic-ai 2.62 sanitize_messages reads each client file URL's scheme with urlparse, "
                  "which raises ValueError('Invalid IPv6 URL') on 'https://[::1/x.png' "
                  "(https://docs.python.org/3/library/urllib.parse.html#urllib.parse.urlsplit), so one "
                  "malformed URL fails the whole request")
    violates = ("sanitize.no_crash",)
    Rules = _Urlparse

