"""Collected by ``pytest --pyargs chatconform.conformance``: one item per (implementation, check)."""

from chatconform.plugin import assert_verdict


def test_conformance(chatconform_impl, chatconform_check, chatconform_session):
    assert_verdict(chatconform_session.verdict(chatconform_impl, chatconform_check),
                   strict=chatconform_session.config.getoption("chatconform_strict"))
