"""A JUnit XML file of a run (``chatconform run --junit-xml FILE``), for CI systems that
show test results: one ``<testsuite>`` per implementation, one ``<testcase>`` per
(implementation, check).

A status maps to what a JUnit reader knows, after pytest's ``--junit-xml``
(https://docs.pytest.org/en/stable/how-to/output.html#creating-junitxml-format-files):
``fail`` and ``not_evaluated`` (and ``warn`` under ``--strict``) are a ``<failure>``,
``error`` an ``<error>``, ``skip`` and ``xfail`` a ``<skipped>``; ``pass`` and a ``warn``
that does not fail the run pass, the warning in ``<system-out>``. A contract an
implementation does not provide (it has no method for it) has no test cases: its suite's
``<system-out>`` names it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from pathlib import Path

from chatconform.engine import Event, RunFinished, RunStarted, SearchFinished, Verdict
from chatconform.frame.status import Status
from chatconform.outputs import files as outputs
from chatconform.outputs import report
from chatconform.outputs.present import describe

#: Characters XML 1.0 cannot hold, even escaped (a case may contain any of them).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class JunitReporter:
    """Writes the file atomically when the run finishes; ``strict`` as ``run --strict`` (warnings
    fail). ``path`` is made absolute at the start, so a chdir during the run does not move it."""

    def __init__(self, path: str | Path, *, strict: bool = False) -> None:
        self.path, self.strict = Path(path).absolute(), strict
        self.seconds: defaultdict[str, float] = defaultdict(float)  # implementation -> seconds its searches took
        self.provided: dict[str, frozenset[str]] = {}  # implementation -> the contracts it provides

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.provided = report.provided_by(event.implementations)
        elif isinstance(event, SearchFinished):
            self.seconds[event.implementation] += event.seconds
        elif isinstance(event, RunFinished):
            self.write(self.document(event.outcome.verdicts, event.seconds))

    def document(self, verdicts: list[Verdict], seconds: float) -> ET.ElementTree[ET.Element]:
        root = ET.Element("testsuites", name="chatconform", time=f"{seconds:.3f}")
        suites: dict[str, ET.Element] = {}
        tally: Counter[tuple[str, str]] = Counter()

        def suite(name: str) -> ET.Element:
            if name not in suites:
                suites[name] = ET.SubElement(root, "testsuite", name=_xml_text(name),
                                             time=f"{self.seconds[name]:.3f}")
            return suites[name]

        verdicts, absent = report.split_provided(verdicts, self.provided,
                                                 lambda v: (v.implementation, v.contract, v.status))
        for verdict in verdicts:
            name = verdict.implementation
            case = ET.SubElement(suite(name), "testcase", classname=_xml_text(name), name=_xml_text(verdict.check))
            kind = self._outcome(case, verdict)
            for key in ((name, "tests"), ("", "tests")) + (((name, kind), ("", kind)) if kind else ()):
                tally[key] += 1
        for name, contracts in absent.items():  # after the test cases, as the schema orders them
            ET.SubElement(suite(name), "system-out").text = _xml_text(report.not_provided_text(name, contracts))
        for element, name in [(root, ""), *((suite, name) for name, suite in suites.items())]:
            for field in ("tests", "failures", "errors", "skipped"):
                element.set(field, str(tally[(name, field)]))
        return ET.ElementTree(root)

    def _outcome(self, case: ET.Element, verdict: Verdict) -> str | None:
        """Add the element that says how ``verdict`` came out; which count it adds to."""
        status = Status(verdict.status)
        message = _xml_text(verdict.message)
        if status == Status.ERROR:
            ET.SubElement(case, "error", message=message, type=status.value)
            return "errors"
        if status in (Status.SKIP, Status.XFAIL):
            ET.SubElement(case, "skipped", message=message, type=status.value)
            return "skipped"
        if status.fails(strict=self.strict):
            failure = ET.SubElement(case, "failure", message=message, type=status.value)
            failure.text = _xml_text("\n\n".join(describe(verdict, f).plain() for f in verdict.failures))
            return "failures"
        if status == Status.WARN:
            ET.SubElement(case, "system-out").text = _xml_text(f"warning: {verdict.message}")
        return None

    def write(self, document: ET.ElementTree[ET.Element]) -> None:
        ET.indent(document)
        text = ET.tostring(document.getroot(), encoding="utf-8", xml_declaration=True)
        outputs.write_atomic(self.path, text, "the JUnit XML")
