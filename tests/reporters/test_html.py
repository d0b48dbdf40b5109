"""``chatconform summary --format html``: one self-contained page, every value of the report
escaped, and (in headless Chromium) the page as a reader sees it once its script ran: every
check there, each failing cell's details holding its case, the filter hiding passing rows,
and a hostile implementation name shown as text."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path

import pytest

from chatconform.cli import main
from chatconform.outputs import report as reports
from chatconform.outputs.pretty import render
from chatconform.outputs.reporters.html import highlight, html, linkify

HOSTILE = "<script>alert(1)</script>"
# Were a message not escaped, this would run once the page loads and mark the body.
PLANTED = "<img src=x onerror=\"document.body.setAttribute('data-pwned', '')\">"
ROWS = [{"id": "00000002", "parent_message_id": "00000001", "created_at": "2026-01-01T00:00:02"},
        {"id": "00000001", "created_at": "2026-01-01T00:00:01"}]
BODY = [{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "</pre><script>alert(2)</script>"}]}]


def result(impl, check, status, *, example=None, level=None, message="", variant=None, evaluated=10):
    return {"type": "result", "implementation": impl, "contract": check.split(".")[0], "check": check,
            "status": status, "level": level, "message": message, "example": example, "variant": variant,
            "examples": 10, "evaluated": evaluated}


def search(impl, provider, failures, evaluated):
    return {"type": "search", "implementation": impl, "contract": "payload", "variant": provider,
            "result": {"failures": failures, "examples": 10, "unjudged": 0, "evaluated": evaluated}}


def failure(check, case, message, level="error", variant=None):
    return {"check": check, "message": message, "case": case, "variant": variant, "level": level, "shrunk": True}


def write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def header(**more) -> dict:
    return {"type": "header", "suite": "chatconform", "version": "0.1.0", "profile": "ci", "seed": "derandomized",
            "started": "2026-01-01T00:00:00+00:00",
            "implementations": {
                "my-threads": {"version": "1.2", "spec": "my_threads.py:MyThreads", "contracts": ["thread"],
                               "expected_failures": {"thread.legacy_linear": "https://github.com/me/app/issues/7"}},
                HOSTILE: {"version": "6.6.6", "spec": "evil:Evil", "contracts": ["payload"],
                          "expected_failures": {"payload.user_led": "javascript:alert(3)"}},
            }} | more


def mixed_report(path: Path) -> Path:
    """Passes, failures, expected failures, warnings and skips, with the payload checks of two
    providers in search lines (a shard's report)."""
    lines = [header(shard={"index": 1, "count": 1, "run": "r", "units": [], "planned": []}),
             result("my-threads", "thread.no_crash", "pass"),
             result("my-threads", "thread.reaches_root", "fail", example=ROWS, level="error",
                    message=f"the thread stops early {PLANTED}"),
             result("my-threads", "thread.legacy_linear", "xfail", example=ROWS[:1], level="error",
                    message="legacy row not followed", evaluated=4),
             result("my-threads", "payload.no_crash", "skip", message="no method"),
             result(HOSTILE, "thread.no_crash", "skip", message="no method"),
             result(HOSTILE, "payload.no_crash", "pass"),
             result(HOSTILE, "payload.system_first", "warn", example=BODY, level="warning", variant="openai-chat",
                    message="a system message after the first"),
             result(HOSTILE, "payload.user_led", "xfail", example=BODY, level="error", variant="glm",
                    message="no user message"),
             result(HOSTILE, "payload.tool_pairing", "fail", example=BODY, level="error", variant="glm",
                    message="a tool result without its call"),
             result(HOSTILE, "payload.slow", "pass"),
             result(HOSTILE, "payload.schema_valid", "skip", message="no providers declared"),
             search(HOSTILE, "openai-chat", [failure("payload.system_first", BODY, "late system", "warning",
                                                     "openai-chat")],
                    {"payload.no_crash": 10, "payload.system_first": 10, "payload.slow": 10}),
             search(HOSTILE, "glm", [failure("payload.user_led", BODY, "no user", variant="glm"),
                                     failure("payload.tool_pairing", BODY[:1] * 2, "unpaired", variant="glm")],
                    {"payload.no_crash": 10, "payload.user_led": 10, "payload.tool_pairing": 10,
                     "payload.slow": 10}),
             {"type": "footer", "counts": {}, "seconds": 1.0}]
    return write(path, lines)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """The mixed report, read, and its page written beside it."""
    folder = tmp_path_factory.mktemp("page")
    read = reports.read(mixed_report(folder / "mixed.jsonl"))
    page = folder / "mixed.html"
    page.write_text(html(read), encoding="utf-8")
    return read, page


# -- the page as written ----------------------------------------------------------------------

def test_a_hostile_name_message_case_and_link_are_text(mixed):
    _, page = mixed
    text = page.read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert HOSTILE not in text and "<script>alert(2)" not in text and "<img src=x" not in text
    assert text.count("<script>") == 1  # the page's own filter script
    assert 'href="javascript:' not in text and "javascript:alert(3)" in text  # named, never a link
    assert '<a href="https://github.com/me/app/issues/7"' in text


def test_every_check_id_of_the_report_is_in_the_page(mixed):
    read, page = mixed
    text = page.read_text()
    ids = {r["check"] for r in read.results}
    assert len(ids) == 9 and all(f'data-check="{check}"' in text for check in ids)


def test_the_page_is_self_contained(mixed):
    text = mixed[1].read_text()
    assert "<link" not in text and "src=" not in text.replace("&lt;img src=x", "")
    assert "<style>" in text and "@import" not in text


def test_a_run_of_20_checks_with_10_failures_is_under_a_megabyte(tmp_path):
    # a big minimal case for each failure, and one that never shrank (1,200 messages)
    big = [{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "x" * 250 + str(i)}]}
           for i in range(60)]
    huge = big * 20
    lines = [header()] + [
        result("my-threads", f"thread.check_{i}", "fail" if i % 2 else "pass", level="error",
               example=(huge if i == 1 else big) if i % 2 else None, message="wrong " * 20)
        for i in range(20)] + [{"type": "footer", "counts": {}, "seconds": 1.0}]
    page = html(reports.read(write(tmp_path / "r.jsonl", lines)))
    assert len(page.encode()) < 1_000_000
    assert page.count('class="finding') == 10
    assert "more lines: the whole case is in the report" in page  # the unshrunk case is cut, not dropped


def test_highlight_and_linkify_escape_before_marking_up():
    marked = highlight('{"a<b": "</pre>", "n": -1.5e3, "t": true}')
    assert '<span class="j-key">&#34;a&lt;b&#34;</span>' in marked
    assert '<span class="j-str">&#34;&lt;/pre&gt;&#34;</span>' in marked
    assert '<span class="j-num">-1.5e3</span>' in marked and '<span class="j-lit">true</span>' in marked
    linked = linkify('see owner/repo#12 and https://x.test/a?b=1&c=<2>. Or "javascript:alert(1)"')
    assert '<a href="https://github.com/owner/repo/issues/12"' in linked
    assert '<a href="https://x.test/a?b=1&amp;c=" rel="noopener noreferrer">' in linked
    assert "&lt;2&gt;." in linked and "javascript" not in linked.split("<a")[-1].split("</a>")[0]


# -- the command line ---------------------------------------------------------------------------

def test_summary_writes_the_page_to_stdout_or_a_file(tmp_path, capsys):
    mixed_report(tmp_path / "r.jsonl")
    assert main(["summary", str(tmp_path / "r.jsonl"), "--format", "html"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<!DOCTYPE html>") and "thread.reaches_root" in out
    assert main(["summary", str(tmp_path / "r.jsonl"), "--format", "html", "-o", str(tmp_path / "r.html")]) == 0
    assert capsys.readouterr().out == "" and (tmp_path / "r.html").read_text() == out
    assert main(["summary", str(tmp_path / "r.jsonl"), "--format", "html", "--fail-on-failure",
                 "--output", str(tmp_path / "r.html")]) == 1


@pytest.mark.parametrize("args, names", [
    (["missing.jsonl", "--format", "html"], ["missing.jsonl"]),
    (["r.jsonl", "--format", "html", "-o", "no/such/folder/r.html"], ["cannot write the summary", "no folder"]),
    (["r.jsonl", "-o", "r.txt"], ["add --format"]),
    (["bad.jsonl", "--format", "html"], ["bad.jsonl:1"]),
])
def test_bad_input_is_one_line_exit_2(args, names, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mixed_report(tmp_path / "r.jsonl")
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    assert main(["summary", *args]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert all(name in err for name in names), err
    assert not (tmp_path / "no").exists()


def shard(path: Path, index: int, provider: str, failures: list[dict]) -> Path:
    units = [["fake", "payload", "openai-chat"], ["fake", "payload", "glm"]]
    head = {"type": "header", "suite": "chatconform", "version": "0.1.0", "profile": "ci", "seed": "derandomized",
            "implementations": {"fake": {"version": "0", "spec": "fake:Fake", "contracts": ["payload"],
                                         "expected_failures": {}}},
            "contracts": ["payload"], "checks": None,
            "shard": {"index": index, "count": 2, "run": "r", "units": [units[index - 1]], "planned": units}}
    evaluated = {"payload.no_crash": 10, "payload.input_untouched": 10, "payload.user_led": 10}
    return write(path, [head, search("fake", provider, failures, evaluated),
                        {"type": "footer", "counts": {}, "seconds": 1.0}])


def test_merged_shard_reports_give_the_page_with_the_providers_split(tmp_path, capsys):
    (tmp_path / "shards").mkdir()
    shard(tmp_path / "shards" / "1.jsonl", 1, "openai-chat", [])
    shard(tmp_path / "shards" / "2.jsonl", 2, "glm", [failure("payload.user_led", BODY, "no user", variant="glm")])
    assert main(["summary", str(tmp_path / "shards"), "--format", "html", "-o", str(tmp_path / "m.html")]) == 0
    page = (tmp_path / "m.html").read_text()
    assert 'data-provider="glm"' in page and 'data-provider="openai-chat"' in page
    assert page.count('class="finding') >= 1 and "no user" in page
    # the markdown summary reads the same merged search lines
    assert main(["summary", str(tmp_path / "shards"), "--format", "markdown"]) == 0
    assert "#### `glm`" in capsys.readouterr().out


# -- in a browser -------------------------------------------------------------------------------

def find_browser() -> str | None:
    """``CHATCONFORM_BROWSER``, else a Chromium or Chrome on the PATH."""
    given = os.environ.get("CHATCONFORM_BROWSER")
    if given:
        return given
    names = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
    return next((path for name in names if (path := shutil.which(name))), None)


#: A page this small loads in a second or two; a dialog (alert) would block it for good.
LOAD_SECONDS = 30


def chromium(browser: str, profile: Path, url: str, *args: str) -> str:
    """Run headless Chromium on ``url`` until its script ran (a virtual-time budget); its stdout."""
    command = [browser, "--headless", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
               "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
               f"--user-data-dir={profile}", "--virtual-time-budget=2000", *args, url]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.insert(1, "--no-sandbox")  # Chromium refuses to start its sandbox as root
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=LOAD_SECONDS)
    except OSError as exc:
        pytest.skip(f"cannot start {browser} to render the page: {exc.strerror or exc}")
    except subprocess.TimeoutExpired:
        pytest.fail(f"{browser} did not finish the page within {LOAD_SECONDS} s: a JavaScript dialog (an "
                    "alert() a report planted) blocks headless Chromium so, unless the machine is that loaded")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"{browser} could not render the page (exit {done.returncode}): {last}")
    return done.stdout


class Node:
    def __init__(self, tag: str, attrs: dict, parent: Node | None):
        self.tag, self.attrs, self.parent, self.children = tag, attrs, parent, []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def all(self, tag: str | None = None, **attrs) -> list[Node]:
        """Every element below this one with ``tag`` and these attributes (None: present)."""
        found = []
        for child in self.children:
            if isinstance(child, Node):
                if (tag is None or child.tag == tag) and all(
                        (k.replace("_", "-") in child.attrs) if v is None else child.attrs.get(k.replace("_", "-")) == v
                        for k, v in attrs.items()):
                    found.append(child)
                found += child.all(tag, **attrs)
        return found


class Dom(HTMLParser):
    """The element tree of a dumped DOM (Chromium serialises it well formed)."""

    VOID = {"meta", "input", "br", "img", "link", "hr", "col", "source", "wbr", "area", "base"}

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.root = self.at = Node("#document", {}, None)
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: v if v is not None else "" for k, v in attrs}, self.at)
        self.at.children.append(node)
        if tag not in self.VOID:
            self.at = node

    def handle_endtag(self, tag):
        node = self.at
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.at = node.parent

    def handle_data(self, data):
        self.at.children.append(data)


@pytest.fixture(scope="module")
def rendered(mixed, tmp_path_factory):
    """The mixed page rendered by headless Chromium, once for every browser test: its DOM as
    opened, and with ``#only=failures``; a screenshot is kept (CHATCONFORM_SCREENSHOTS names a
    folder for it, else the test's temporary one)."""
    browser = find_browser()
    if browser is None:
        pytest.skip("no headless Chromium to render the page in: install Debian's chromium "
                    "(apt-get install chromium) or set CHATCONFORM_BROWSER to a Chromium or Chrome")
    read, page = mixed
    url = page.resolve().as_uri()
    shots = Path(os.environ.get("CHATCONFORM_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    runs = [(url + "#only=failures&open=f-1", "--hide-scrollbars", "--window-size=1280,1400",
             f"--screenshot={shots / 'summary-page.png'}"), (url, "--dump-dom"), (url + "#only=failures", "--dump-dom")]
    with ThreadPoolExecutor(len(runs)) as pool:  # side by side, each with a profile of its own
        _, plain, failures = pool.map(lambda run: chromium(browser, tmp_path_factory.mktemp("profile"), *run), runs)
    return {"report": read, "plain": Dom(plain).root, "failures": Dom(failures).root,
            "screenshot": shots / "summary-page.png"}


@pytest.mark.browser
def test_the_browser_shows_every_check_id_of_the_report(rendered):
    dom = rendered["plain"]
    [matrix] = dom.all("table", id="matrix")
    rows = {row.attrs["data-check"] for row in matrix.all("tr", data_check=None)}
    assert rows == {r["check"] for r in rendered["report"].results}
    assert all(check in matrix.text() for check in rows)
    assert rendered["screenshot"].stat().st_size > 10_000  # a page was drawn, not a blank


@pytest.mark.browser
def test_each_failing_cell_opens_details_holding_its_minimal_case(rendered):
    dom = rendered["plain"]
    results = {(r["implementation"], r["check"]): r for r in rendered["report"].results}
    [matrix] = dom.all("table", id="matrix")
    columns = [th.text() for th in matrix.all("th", **{"class": "impl"})]
    linked = 0
    for row in matrix.all("tr", data_check=None):
        for column, cell in zip(columns, row.all("td"), strict=True):
            if cell.attrs.get("data-status") not in ("fail", "xfail", "warn"):
                continue
            [link] = cell.all("a", data_finding=None)
            [details] = dom.all("details", id=link.attrs["data-finding"])
            [case] = details.all("pre", **{"class": "case json"})
            assert case.text() == render(results[(column, row.attrs["data-check"])]["example"])
            linked += 1
    assert linked == 5


@pytest.mark.browser
def test_the_filter_hides_passing_rows(rendered):
    plain, failures = rendered["plain"], rendered["failures"]
    assert not plain.all("tr", data_check=None, hidden=None)  # nothing hidden as opened
    rows = failures.all("table", id="matrix")[0].all("tr", data_check=None)
    hidden = {row.attrs["data-check"] for row in rows if "hidden" in row.attrs}
    shown = {row.attrs["data-check"] for row in rows if "hidden" not in row.attrs}
    assert hidden == {"thread.no_crash", "payload.no_crash", "payload.slow", "payload.schema_valid"}
    assert shown == {"thread.reaches_root", "thread.legacy_linear", "payload.system_first", "payload.user_led",
                     "payload.tool_pairing"}
    [count] = failures.all("output", id="shown")
    assert count.text() == "5 of 9 checks shown"


@pytest.mark.browser
def test_the_script_name_renders_as_text_and_runs_nothing(rendered):
    dom = rendered["plain"]
    assert len(dom.all("script")) == 1  # the page's own: no element was made of a report's text
    [body] = dom.all("body")
    assert "data-pwned" not in body.attrs  # the planted onerror did not run
    assert HOSTILE in [th.text() for th in dom.all("th", **{"class": "impl"})]
    assert not dom.all("form", id="filters", hidden=None)  # the page's script did run


def test_a_plain_run_report_splits_the_payload_checks_by_provider(tmp_path, capsys):
    """Every run keeps each payload search's line: the page's per-provider sections and its
    provider filter work for a plain `run --report`, not only for shards."""
    assert main(["run", "--impl", "reference", "--contract", "payload", "--provider", "glm", "--provider",
                 "anthropic", "--examples", "5", "--in-process", "--report", str(tmp_path / "r.jsonl")]) == 0
    tables = reports.provider_matrix(reports.read(tmp_path / "r.jsonl"))
    assert [t.provider for t in tables] == ["anthropic", "glm"]
    assert all(t.checks and t.implementations == ["reference"] for t in tables)
    assert main(["summary", str(tmp_path / "r.jsonl"), "--format", "html", "-o", str(tmp_path / "p.html")]) == 0
    page = (tmp_path / "p.html").read_text()
    assert 'data-provider="glm"' in page and 'data-provider="anthropic"' in page
    assert "search lines" not in page and "--shard" not in page
