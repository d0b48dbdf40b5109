"""Loading an implementation: it has a name and a version, and its methods take the calls of
their contracts."""

import functools
from pathlib import Path

import pytest

from chatconform.cli import main
from chatconform.contracts import all_contracts
from chatconform.errors import ConfigError, MissingDependency
from chatconform.fakes import all_fakes
from chatconform.reference.thread import extract_thread
from chatconform.reference.trim import trim
from chatconform.runner import discovery

ROOT = Path(__file__).resolve().parents[2]


# -- a method that cannot take its contract's calls is refused when it loads ---------------------

class PositionalBudget:
    name, version = "positional-budget", "1"

    def trim(self, history, n):
        return history[-n:]


class NoInstructions:
    name, version = "no-instructions", "1"

    def to_payload(self, history, *, provider):
        return {}


class LoadTakesNothing:
    name, version = "load-takes-nothing", "1"

    def dump(self, history):
        return b"[]"

    def load(self):
        return []


def test_a_method_that_cannot_take_the_call_is_refused_naming_both_signatures():
    with pytest.raises(ConfigError) as refused:
        discovery.wrap(PositionalBudget, "my_trim.py:PositionalBudget")
    assert str(refused.value) == (
        "my_trim.py:PositionalBudget: trim(history, n) does not match the trim contract's "
        "trim(history, *, max_messages) -> history: missing a required argument: 'n'")
    with pytest.raises(ConfigError, match=r"to_payload\(history, \*, provider\) does not match the payload "
                                          r"contract's to_payload\(history, \*, provider, instructions=None\) "
                                          r"-> dict: got an unexpected keyword argument 'instructions'"):
        discovery.wrap(NoInstructions)
    with pytest.raises(ConfigError, match=r"load\(\) does not match the serde contract's load\(data\) -> history"):
        discovery.wrap(LoadTakesNothing)  # a further method a contract calls is held to it too


class _Callable:
    def __call__(self, history, *, max_messages):
        return trim(history, max_messages=max_messages)


class Compatible:
    """Every shape that takes the calls: extra optional parameters, keyword-only parameters
    given as ordinary ones, ``*args``/``**kwargs``, ``async def``, a callable object, a
    partial, a static method."""

    name, version = "compatible", "1"
    trim = _Callable()

    def extract_thread(self, rows, limit=None):
        return extract_thread(rows)

    def compact(self, *args, **kwargs):
        return args[0]

    async def to_payload(self, history, provider, instructions=None, **extra):
        return {}

    repair = staticmethod(functools.partial(lambda history, flag: history, flag=True))

    @staticmethod
    def sanitize(history, /):
        return history


def test_any_method_that_takes_the_calls_is_accepted():
    impl = discovery.wrap(Compatible)
    assert set(impl.contracts()) == {"thread", "trim", "compaction", "payload", "repair", "sanitize", "lifecycle"}


def test_a_method_without_a_readable_signature_is_left_to_its_calls():
    class Builtin:
        name, version = "builtin", "1"
        extract_thread = staticmethod(max)  # a builtin whose signature inspect cannot read

    assert discovery.wrap(Builtin).contracts() == ["thread", "lifecycle"]


class _AnyCase:
    #: A model of the provider the payload call names: a payload case passes its model only to
    #: a provider whose families hold it.
    model = "deepseek-r1"

    def __getattr__(self, name):
        return name


@pytest.mark.parametrize("name", sorted(all_contracts()))
def test_each_contract_signature_describes_the_call_its_engine_makes(name):
    """The signatures implementations are held to are the calls :meth:`Contract.call` makes,
    with the optional keywords a method may take (all of them, to one that takes ``**kwargs``)."""
    contract, made = all_contracts()[name], []
    if contract.composes:
        pytest.skip("a composition's call plays a program on the methods it composes")
    variant = "deepseek" if name == "payload" else "variant"
    contract.call(lambda *args, **kwargs: made.append((len(args), sorted(kwargs))), _AnyCase(), variant)
    own = contract.calls()[0]
    expected = sorted({*own.keywords, *contract.optional_keywords})
    assert own.method == contract.method and made == [(own.positional, expected)]


@pytest.mark.parametrize("declared, said", [
    ('name, version = "positional-budget", "1"\n    def trim(self, history, n):',
     "my_trim.py:Impl: trim(history, n) does not match the trim contract's trim(history, *, max_messages) -> "
     "history: missing a required argument: 'n'"),
    ('version = "1"\n    def trim(self, history, *, max_messages):',
     "my_trim.py:Impl (Impl) has no name: an implementation declares both"),
    ("def trim(self, history, *, max_messages):",
     "my_trim.py:Impl (Impl) has no name and no version: an implementation declares both"),
], ids=["signature", "no name", "neither"])
def test_the_command_line_exits_2_with_one_line(declared, said, tmp_path, monkeypatch, capsys):
    (tmp_path / "my_trim.py").write_text(f"class Impl:\n    {declared}\n        return history\n")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--impl", "my_trim.py:Impl", "--in-process"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert said in err, err


def test_in_a_process_of_its_own_the_load_error_is_the_same():
    with pytest.raises(ConfigError, match=r"trim\(history, n\) does not match the trim contract's"):
        discovery.load(f"{Path(__file__)}:PositionalBudget")


# -- warm_up: called when loaded to run, not when listed --------------------------------------------

class WarmsUp:
    name, version = "warms-up", "1"
    warmed = 0

    def warm_up(self):
        self.warmed += 1

    def trim(self, history, *, max_messages):
        return trim(history, max_messages=max_messages)


class WarmsUpAsync(WarmsUp):
    async def warm_up(self):
        self.warmed += 1


class BrokenLibrary(WarmsUp):
    name = "broken-library"

    def warm_up(self):
        raise ConfigError("the my-lib adapter could not import my_lib (ImportError: no)")


class WarmUpRaises(WarmsUp):
    name = "warm-up-raises"

    def warm_up(self):
        raise RuntimeError("no client")


def test_warm_up_is_called_once_when_loaded_to_run_and_not_when_listed():
    spec = f"{Path(__file__)}:WarmsUp"
    listed = discovery.load(spec, in_process=True, warm=False)
    assert (listed.contracts(), listed.obj.warmed) == (["trim", "lifecycle"], 0)
    assert discovery.load(spec, in_process=True).obj.warmed == 1
    assert discovery.load_object(WarmsUp, in_process=True).obj.warmed == 1
    assert discovery.load_object(WarmsUp()).obj.warmed == 1  # an instance runs here
    assert discovery.load_object(WarmsUpAsync, in_process=True).obj.warmed == 1  # awaited


@pytest.mark.parametrize("in_process", [True, False], ids=["in process", "in a process of its own"])
def test_an_error_of_warm_up_is_the_load_error_in_one_line(in_process):
    spec = f"{Path(__file__)}:BrokenLibrary"
    with pytest.raises(ConfigError) as caught:
        discovery.load(spec, in_process=in_process)
    assert str(caught.value) == f"{spec}: the my-lib adapter could not import my_lib (ImportError: no)"
    spec = f"{Path(__file__)}:WarmUpRaises"
    with pytest.raises(ConfigError) as caught:
        discovery.load(spec, in_process=in_process)
    assert str(caught.value) == f"{spec}: warm_up() raised RuntimeError: no client"


class SlowToWarm(WarmsUp):
    name = "slow-to-warm"

    def warm_up(self):
        import time

        time.sleep(0.5)


def test_programs_load_side_by_side_in_order_and_the_first_error_in_that_order_is_raised():
    here = Path(__file__)
    specs = [f"{here}:SlowToWarm", "reference", f"{here}:WarmsUp"]
    loaded = discovery.load_all(specs)
    assert [impl.name for impl in loaded] == ["slow-to-warm", "reference", "warms-up"]
    with pytest.raises(ConfigError, match="could not import my_lib"):
        discovery.load_all([f"{here}:BrokenLibrary", f"{here}:WarmUpRaises"])
    # whichever fails first in time, the error of the first spec that fails is the one raised
    with pytest.raises(ConfigError, match="no client"):
        discovery.load_all([f"{here}:SlowToWarm", f"{here}:WarmUpRaises", f"{here}:BrokenLibrary"])


def test_a_missing_library_is_noted_in_order_and_the_rest_load(monkeypatch):
    def load(spec, *, in_process=False):
        if spec.startswith("missing"):
            raise MissingDependency(f"{spec} needs its extra")
        return spec

    monkeypatch.setattr(discovery, "load", load)
    notes: list[str] = []
    for in_process in (True, False):
        notes.clear()
        assert discovery.load_all(["missing-a", "b", "missing-c"], in_process=in_process, missing=notes.append) == ["b"]
        assert notes == ["skipped missing-a needs its extra", "skipped missing-c needs its extra"]
        with pytest.raises(MissingDependency, match="missing-a"):
            discovery.load_all(["b", "missing-a"], in_process=in_process)


# -- a name and a version ---------------------------------------------------------------------------

def test_a_name_and_a_version_are_required_and_reported_as_declared():
    class Unnamed:
        version = 2

        def extract_thread(self, rows):
            return extract_thread(rows)

    with pytest.raises(ConfigError, match=r"^threads.py:Unnamed \(Unnamed\) has no name: "):
        discovery.wrap(Unnamed, "threads.py:Unnamed")
    Unnamed.name = ""
    with pytest.raises(ConfigError, match="has no name"):
        discovery.wrap(Unnamed)
    Unnamed.name = "unnamed-no-more"
    impl = discovery.wrap(Unnamed)
    assert (impl.name, impl.version) == ("unnamed-no-more", "2")


# -- everything bundled loads -----------------------------------------------------------------------

@pytest.mark.parametrize("name", discovery.registered_order())
def test_every_registered_implementation_loads(name):
    try:
        impl = discovery.load(name, in_process=True)
    except MissingDependency as exc:
        pytest.skip(str(exc))  # an adapter whose extra is not installed
    assert impl.contracts() and impl.name and impl.version


def test_every_fake_and_the_python_examples_load():
    for spec, fake in all_fakes().items():
        assert discovery.wrap(fake, spec).contracts(), spec
    example = ROOT / "examples" / "python" / "impl.py"
    assert discovery.load(f"{example}:InProcessThreads", in_process=True).contracts() == ["thread", "lifecycle"]
    program = discovery.load(f"exec:python {example}")  # a program's methods take *args, **kwargs
    assert "thread" in program.contracts()
