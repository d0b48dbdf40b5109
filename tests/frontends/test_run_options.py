"""The run options are defined once (``chatconform.run_options``): ``chatconform run`` and the
pytest plugin offer the same options, with the same defaults and the same choices, read from
where the values are defined; and every parser takes an option only as it is spelt."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from chatconform import cli
from chatconform.frame.profiles import PROFILES
from chatconform.providers import PROVIDER_IDS
from chatconform.run_options import DEFAULT_MEMORY_MIB, RUN_OPTIONS
from chatconform.runner.protocol import host_codes

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "chatconform_"


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = cli._parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {"": parser, **action.choices}


def _command_options() -> dict[str, argparse.Action]:
    return {action.dest: action for action in _subparsers()["run"]._actions if action.dest != "help"}


def test_the_command_line_and_pytest_offer_the_same_run_options_with_the_same_defaults(pytester):
    command = {dest: action.default for dest, action in _command_options().items()}
    plugin = {dest.removeprefix(PREFIX): value for dest, value in vars(pytester.parseconfig().option).items()
              if dest.startswith(PREFIX)}
    only_command = {option.dest for option in RUN_OPTIONS if option.command_line_only}
    assert plugin == {dest: default for dest, default in command.items() if dest not in only_command}
    assert set(command) == {option.dest for option in RUN_OPTIONS}
    assert only_command == {"jobs", "shard", "report", "junit_xml", "verbose"}  # pytest's own options do these


def test_the_choices_are_read_from_where_the_values_are_defined(pytester):
    options = _command_options()
    assert list(options["profile"].choices) == list(PROFILES)
    assert list(options["provider"].choices) == list(PROVIDER_IDS)
    for name, profile in PROFILES.items():
        assert profile.description in options["profile"].help
        assert pytester.parseconfig(f"--chatconform-profile={name}").getoption("chatconform_profile") == name


@pytest.mark.parametrize(("option", "value"), [
    ("profile", "fast"), ("provider", "nope"), ("examples", "0"), ("timeout", "-1"), ("memory-limit", "-1"),
    ("seed", "x"),
])
def test_a_bad_value_is_refused_by_both(option, value, pytester, capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["run", f"--{option}", value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and f"--{option}" in err
    with pytest.raises(pytest.UsageError):
        pytester.parseconfig(f"--chatconform-{option}", value)


def test_the_memory_limit_default_is_the_hosts():
    assert DEFAULT_MEMORY_MIB == host_codes.DEFAULT_MEMORY_MIB
    assert f"default {host_codes.DEFAULT_MEMORY_MIB}" in _command_options()["memory_limit"].help


@pytest.mark.parametrize("argv", [["run", "--imp", "reference"], ["run", "--contr", "thread"],
                                  ["summary", "r.jsonl", "--form", "json"]])
def test_an_option_spelt_short_of_its_name_is_an_error(argv, capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "unrecognized arguments: " + argv[-2] in err


def test_every_parser_of_the_command_takes_options_only_as_spelt():
    assert all(parser.allow_abbrev is False for parser in _subparsers().values())


def test_every_argument_parser_of_the_project_refuses_abbreviations():
    """The scripts too: a prefix that later becomes ambiguous, or names another option, would
    change what a command in a CI file or a doc does."""
    lax = []
    for path in [*ROOT.glob("chatconform/**/*.py"), *ROOT.glob("tools/*.py"), *ROOT.glob("benchmarks/*.py")]:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
                    == "ArgumentParser"):
                spelt = {k.arg: k.value for k in node.keywords}
                if not (isinstance(spelt.get("allow_abbrev"), ast.Constant) and spelt["allow_abbrev"].value is False):
                    lax.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert lax == []
