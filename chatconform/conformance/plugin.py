"""The pytest plugin: one test item per (implementation, check).

Loaded in every pytest session of anyone who installed chatconform, so it imports
nothing heavy until a conformance test is collected. Use it with
``pytest --pyargs chatconform.conformance --chatconform-impl=NAME|module:attr``.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("chatconform", "chatconform conformance checks")
    group.addoption("--chatconform-impl", action="append", default=[], metavar="NAME|module:attr",
                    help="implementation to check (repeatable; default: every registered one)")
    group.addoption("--chatconform-contract", action="append", default=[], metavar="NAME",
                    help="contract to check (repeatable; default: all)")
    group.addoption("--chatconform-profile", default="ci", choices=["ci", "dev", "deep"],
                    help="run profile (default: ci)")
    group.addoption("--chatconform-timeout", type=float, default=None, metavar="SECONDS",
                    help="per-call timeout for the implementation (default: 10)")


def pytest_report_header(config: pytest.Config) -> str | None:
    if not config.getoption("chatconform_impl"):
        return None
    from chatconform.version import __version__

    return (f"chatconform {__version__}, profile {config.getoption('chatconform_profile')}, "
            f"implementations: {', '.join(config.getoption('chatconform_impl'))}")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "chatconform_check" not in metafunc.fixturenames:
        return
    from chatconform.conformance import discovery, engine
    from chatconform.conformance.registry import ConfigError

    config = metafunc.config
    specs = config.getoption("chatconform_impl") or discovery.registered_order()
    try:
        selection = engine.select(config.getoption("chatconform_contract") or None)
    except ConfigError as exc:
        raise pytest.UsageError(f"chatconform: {exc}") from None
    params = [
        pytest.param(spec, check.id, id=f"{spec}::{check.id}")
        for spec in specs
        for contract in selection.contracts
        for check in contract.ordered_checks()
    ]
    if not params:
        raise pytest.UsageError("chatconform: nothing selected to run")
    metafunc.parametrize(("chatconform_impl", "chatconform_check"), params)


class _Session:
    """Runs each (implementation, contract) search once; items read their verdicts."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.verdicts: dict[tuple[str, str], object] = {}
        self.impls: dict[str, object] = {}

    def verdict(self, spec: str, check_id: str):
        from chatconform.conformance import discovery, engine
        from chatconform.conformance.contracts import get_contract
        from chatconform.conformance.guard import DEFAULT_TIMEOUT
        from chatconform.conformance.profiles import get_profile
        from chatconform.conformance.registry import MissingDependency, get_check

        if spec not in self.impls:
            try:
                self.impls[spec] = discovery.load(spec)
            except Exception as exc:  # noqa: BLE001 - reported on this implementation's items
                self.impls[spec] = exc
        impl = self.impls[spec]
        if isinstance(impl, MissingDependency) and not self.config.getoption("chatconform_impl"):
            pytest.skip(f"skipped {impl}")  # a registered adapter whose extra is not installed
        if isinstance(impl, Exception):
            pytest.fail(f"cannot load implementation {spec}: {impl}", pytrace=False)
        contract = get_contract(get_check(check_id).contract)
        key = (spec, contract.name)
        if key not in self.verdicts:
            profile = get_profile(self.config.getoption("chatconform_profile"))
            timeout = self.config.getoption("chatconform_timeout") or DEFAULT_TIMEOUT
            from chatconform.conformance.repro import save_failures

            found = engine.contract_verdicts(impl, contract, profile, timeout=timeout)
            save_failures(found)
            self.verdicts[key] = {v.check: v for v in found}
        return self.verdicts[key][check_id]


@pytest.fixture(scope="session")
def chatconform_session(request: pytest.FixtureRequest) -> _Session:
    return _Session(request.config)


def assert_verdict(verdict) -> None:
    """Turn a verdict into the pytest outcome of its item."""
    from chatconform.conformance.present import describe
    from chatconform.conformance.status import Status

    status = Status(verdict.status)
    if status == Status.SKIP:
        pytest.skip(verdict.message)
    if status == Status.XFAIL:
        pytest.xfail(verdict.message)
    if status == Status.FAIL:
        pytest.fail("\n\n".join(describe(verdict, failure).plain() for failure in verdict.failures),
                    pytrace=False)
    if status.fails_run:
        pytest.fail(f"{status.value}: {verdict.message}", pytrace=False)
