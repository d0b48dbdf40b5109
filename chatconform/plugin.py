"""The pytest plugin: one test item per (implementation, check), the ``chatconform_endpoint``
fixture (a ``chatconform serve`` endpoint for one test) and the ``chatconform_cassettes``
fixture (a test suite's recorded traffic judged by the providers' rules).

Loaded in every pytest session of anyone who installed chatconform, so it imports
nothing heavy until a conformance test is collected. Use it with
``pytest --pyargs chatconform.conformance --chatconform-impl=NAME|module:attr``.

Under pytest-xdist (``-n auto``) every worker collects the same items (they depend on the
options and the installed implementations only) and judges them on the same cases. The
items of one (implementation, contract) search form one ``xdist_group``, and a session
that names chatconform options is scheduled by group, so each search runs once, on one
worker, rather than once on every worker that got one of its items.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import pytest

from chatconform.errors import ConformanceWarning

if TYPE_CHECKING:
    from chatconform.engine import Verdict
    from chatconform.runner.loading import Implementation

#: The plugin's first name for :class:`~chatconform.errors.ConformanceWarning`, kept for filters that name it.
ChatconformWarning = ConformanceWarning


def pytest_addoption(parser: pytest.Parser) -> None:
    """The run options ``chatconform run`` offers, as ``--chatconform-NAME`` (chatconform.run_options)."""
    from chatconform.run_options import add_to_pytest

    add_to_pytest(parser.getgroup("chatconform", "chatconform conformance checks"))


def pytest_configure(config: pytest.Config) -> None:
    """A bad implementation, contract or check is a usage error (exit 4), found before collection."""
    config.addinivalue_line("markers", "xdist_group(name): pytest-xdist runs the items of a group on one worker")
    if config.getoption("chatconform_memory_limit", None) is not None:  # before any implementation starts
        from chatconform.run_options import set_memory_limit

        set_memory_limit(config.getoption("chatconform_memory_limit"))
    options = ("chatconform_impl", "chatconform_contract", "chatconform_check")
    if not any(config.getoption(name, None) for name in options):
        return
    _schedule_by_group(config)
    from chatconform import engine
    from chatconform.errors import ConfigError

    try:
        selection = engine.select(config.getoption("chatconform_contract") or None,
                                  config.getoption("chatconform_check") or None)
        impls = {spec: _load(config, spec) for spec in config.getoption("chatconform_impl")}
    except ConfigError as exc:
        raise pytest.UsageError(f"chatconform: {exc}") from None
    config.stash[_LOADED] = (selection, impls)


def _load(config: pytest.Config, spec: str) -> Implementation:
    """The implementation ``spec`` as the options load it: in its own process or this one,
    its providers narrowed to ``--chatconform-provider``."""
    from chatconform.run_options import narrow_providers
    from chatconform.runner import discovery

    impl = discovery.load(spec, in_process=config.getoption("chatconform_in_process"))
    narrow_providers([impl], config.getoption("chatconform_provider"))
    return impl


_LOADED = pytest.StashKey[tuple]()


def _schedule_by_group(config: pytest.Config) -> None:
    """Under ``-n`` with xdist's default distribution, distribute by ``xdist_group`` (one
    worker per search); a ``--dist`` given on the command line is left as it is."""
    explicit = any(arg == "-d" or arg.startswith("--dist") for arg in config.invocation_params.args)
    if getattr(config.option, "dist", None) == "load" and not explicit:
        config.option.dist = "loadgroup"


def pytest_report_header(config: pytest.Config) -> str | None:
    if not config.getoption("chatconform_impl"):
        return None
    from chatconform.version import __version__

    seed = config.getoption("chatconform_seed")
    return (f"chatconform {__version__}, profile {config.getoption('chatconform_profile')}"
            + (f", seed {seed}" if seed is not None else "")
            + f", implementations: {', '.join(config.getoption('chatconform_impl'))}")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "chatconform_check" not in metafunc.fixturenames:
        return
    from chatconform import engine
    from chatconform.errors import ConfigError
    from chatconform.runner import discovery

    config = metafunc.config
    specs = config.getoption("chatconform_impl") or discovery.registered_order()
    if _LOADED in config.stash:
        selection = config.stash[_LOADED][0]
    else:
        try:
            selection = engine.select(None)
        except ConfigError as exc:
            raise pytest.UsageError(f"chatconform: {exc}") from None
    loaded = config.stash[_LOADED][1] if _LOADED in config.stash else {}
    provided = {spec: _provided(loaded.get(spec, spec)) for spec in specs}
    params = [
        pytest.param(spec, check.id, id=f"{spec}::{check.id}",
                     marks=pytest.mark.xdist_group(f"chatconform:{spec}:{contract.name}"))
        for spec in specs
        for contract in selection.contracts
        if (offered := provided[spec]) is None or contract.name in offered
        for check in contract.ordered_checks()
        if selection.checks is None or check.id in selection.checks
    ]
    if not params:
        raise pytest.UsageError("chatconform: nothing selected to run")
    metafunc.parametrize(("chatconform_impl", "chatconform_check"), params)


def _provided(impl: Implementation | str) -> list[str] | None:
    """The contracts an implementation has methods for (a loaded one, or a registered name
    loaded here only to read what it declares: nothing runs or warms up), so that no item
    is collected for a contract it lacks; None, every contract, where it does not load (its
    items then say why)."""
    if not isinstance(impl, str):
        return impl.contracts()
    from chatconform.runner import discovery

    try:
        return discovery.load(impl, in_process=True, warm=False).contracts()
    except Exception:  # a missing extra or a broken entry point: its items skip or fail saying why
        return None


class _Session:
    """Runs each (implementation, contract) search once; items read their verdicts."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.verdicts: dict[tuple[str, str], dict[str, Verdict]] = {}
        self.impls: dict[str, Implementation | Exception] = {}

    def verdict(self, spec: str, check_id: str) -> Verdict:
        from chatconform import engine
        from chatconform.contracts import get_check, get_contract
        from chatconform.errors import MissingDependency
        from chatconform.frame.guard import DEFAULT_TIMEOUT
        from chatconform.frame.profiles import get_profile

        loaded = self.config.stash.get(_LOADED, (None, {}))[1]
        if spec not in self.impls and spec in loaded:
            self.impls[spec] = loaded[spec]
        if spec not in self.impls:
            try:
                self.impls[spec] = _load(self.config, spec)
            except Exception as exc:
                self.impls[spec] = exc
        impl = self.impls[spec]
        if isinstance(impl, MissingDependency) and not self.config.getoption("chatconform_impl"):
            pytest.skip(f"skipped {impl}")  # a registered adapter whose extra is not installed
        if isinstance(impl, Exception):
            pytest.fail(f"cannot load implementation {spec}: {impl}", pytrace=False)
        contract = get_contract(get_check(check_id).contract)
        key = (spec, contract.name)
        if key not in self.verdicts:
            profile = get_profile(self.config.getoption("chatconform_profile"),
                                  examples=self.config.getoption("chatconform_examples"))
            timeout = self.config.getoption("chatconform_timeout") or DEFAULT_TIMEOUT
            checks = self.config.getoption("chatconform_check")
            from chatconform.outputs.repro import save_failures

            selection = engine.Selection([contract], frozenset(get_check(c).id for c in checks) if checks else None)
            found = engine.run([impl], selection, profile, timeout=timeout,
                               seed=self.config.getoption("chatconform_seed"),
                               shrink_expected=self.config.getoption("chatconform_shrink_expected")).verdicts
            save_failures(found)
            self.verdicts[key] = {v.check: v for v in found}
        return self.verdicts[key][check_id]


@pytest.fixture(scope="session")
def chatconform_session(request: pytest.FixtureRequest) -> _Session:
    return _Session(request.config)


def assert_verdict(verdict, *, strict: bool = False) -> None:
    """Turn a verdict into the pytest outcome of its item."""
    from chatconform.frame.status import Status
    from chatconform.outputs.present import describe

    status = Status(verdict.status)
    if status == Status.SKIP:
        pytest.skip(verdict.message)
    if status == Status.XFAIL:
        pytest.xfail(verdict.message)
    if status == Status.WARN and not strict:
        warnings.warn(ConformanceWarning(f"{verdict.check}: {verdict.message}"), stacklevel=1)
        return
    if status in (Status.FAIL, Status.WARN):
        pytest.fail("\n\n".join(describe(verdict, failure).plain() for failure in verdict.failures),
                    pytrace=False)
    if status.fails_run:
        pytest.fail(f"{status.value}: {verdict.message}", pytrace=False)


@pytest.fixture
def chatconform_endpoint():
    """A ``chatconform serve`` endpoint for one test, in a thread on a free port of 127.0.0.1.

    Yields an :class:`~chatconform.serve.Endpoint`: ``base_url(provider)`` is what the
    provider's SDK takes, ``verdicts`` the requests judged so far (each with its problems,
    its turn and the status answered), ``script(entries)`` sets the replies per turn.
    Skipped, with the reason, where the ``serve`` extra is not installed."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"chatconform_endpoint needs the serve extra (pip install 'chatconform[serve]'): {exc}")
    from chatconform.serve import start
    from chatconform.version import __version__

    endpoint = start(version=__version__)
    try:
        yield endpoint
    finally:
        endpoint.stop()


@pytest.fixture
def chatconform_cassettes():
    """A function that judges a test suite's recorded traffic by the providers' rules.

    ``chatconform_cassettes("tests/cassettes")`` reads every VCR cassette, HAR file and JSON
    lines of interactions under the folders or files it is given (as ``chatconform
    validate`` does: the provider from each URL, ``provider=`` for the chat requests of
    that provider's dialect) and fails the test, listing each problem with its file and
    interaction, on an error-level problem in a request the provider was not recorded
    rejecting. It returns every verdict (:class:`~chatconform.provider_schemas.lint.Judged`)."""
    from chatconform.errors import ConfigError
    from chatconform.provider_schemas.lint import judge_paths

    def judge(*paths: str, provider: str | None = None) -> list:
        try:
            judged = list(judge_paths([str(path) for path in paths], provider))
        except ConfigError as exc:
            pytest.fail(f"chatconform: {exc}", pytrace=False)
        failing = [f"{j.file} #{j.index} {p.rule} {p.path}  {p.message}"
                   for j in judged if j.counts_against for p in j.problems if p.severity == "error"]
        if failing:
            pytest.fail("requests the provider would reject:\n" + "\n".join(failing), pytrace=False)
        return judged

    return judge
