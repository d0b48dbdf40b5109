"""Thread extraction on large conversations: time per row, and a floor to compare with.

Run: pytest benchmarks/bench_thread.py --benchmark-only
(not part of the test run; timings are reported, never asserted)
"""

import pytest

from chatconform.reference.thread import extract_thread
from chatconform.strategies import expand_conversation

SIZES = [1_000, 10_000, 100_000]


@pytest.mark.parametrize("size", SIZES)
def test_reference_extract_thread(benchmark, size):
    rows = expand_conversation(seed=size, size=size)
    benchmark.extra_info["rows"] = size
    thread = benchmark(extract_thread, rows)
    assert thread[0] is rows[0]


@pytest.mark.parametrize("size", SIZES)
def test_floor_one_bare_pass(benchmark, size):
    rows = expand_conversation(seed=size, size=size)
    benchmark.extra_info["rows"] = size
    benchmark(lambda: [row.parent_message_id for row in rows])
