"""Argument checks of the public strategies, in one place: each raises Hypothesis'
``InvalidArgument`` naming the bad parameter, before anything is drawn."""

from __future__ import annotations

from hypothesis.errors import InvalidArgument


def check_bool(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise InvalidArgument(f"{name}={value!r} must be a bool")


def check_int(name: str, value: object, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise InvalidArgument(f"{name}={value!r} must be an int >= {minimum}")

