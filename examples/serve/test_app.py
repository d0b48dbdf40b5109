"""The application's own tests: they know nothing of chatconform. Run against ``chatconform
serve --script replies.json`` (by the workflow, or by ``conftest.py``), the model calls the
weather tool, then answers."""

from app import plan_trip


def test_the_planner_runs_the_tool_and_answers():
    assert plan_trip("Should I pack sunglasses for Paris?") == "Pack sunglasses: it is sunny in Paris."
