"""Where an implementation failed: its own files by their full path, installed libraries and
the standard library from the package down, so a report reads the same on every machine."""

from __future__ import annotations

import json

import pytest
from pydantic_ai.messages import ImageUrl

from chatconform.frame.guard import implementation_frames


def _raised(fn) -> BaseException:
    with pytest.raises(Exception) as info:
        fn()
    return info.value


def test_a_library_frame_is_shown_from_its_package_with_its_line():
    frames = implementation_frames(_raised(lambda: ImageUrl(url="no-extension").media_type))
    assert 'File "pydantic_ai/messages.py", line ' in frames
    assert "site-packages" not in frames
    assert "raise ValueError(" in frames  # the source line is still read


def test_a_standard_library_frame_is_shown_from_its_module():
    frames = implementation_frames(_raised(lambda: json.loads("{bad")))
    assert 'File "json/decoder.py", line ' in frames


def test_the_users_own_file_keeps_its_full_path():
    def mine():
        raise ValueError("mine")

    frames = implementation_frames(_raised(mine))
    assert f'File "{__file__}", line ' in frames and "in mine" in frames


def test_a_call_that_raised_lets_go_of_its_locals_without_a_collection():
    """An exception that ended a call held its frames, and through them the outcome that held
    it: a cycle that kept the implementation's every local alive until a full collection."""
    import gc
    import weakref

    from chatconform.frame.guard import guarded_call

    class Big:
        pass

    refs = []

    def implementation():
        working = Big()
        refs.append(weakref.ref(working))
        raise ValueError("refused") from KeyError("inner")

    gc.disable()
    try:
        outcome = guarded_call(implementation, timeout=5)
        assert refs[0]() is None
    finally:
        gc.enable()
    assert isinstance(outcome.error, ValueError) and str(outcome.error) == "refused"
    assert "in implementation" in outcome.error_trace  # written out before the frames went
