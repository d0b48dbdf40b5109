"""Shared settings of the project's own property tests.

Every ``@settings(...)`` in these tests names only what differs (usually ``max_examples``);
the rest comes from this profile: the same cases on every run, no example database, no
deadline (CI machines are slow and shared). The engine's own run profiles are pinned
apart from Hypothesis' loaded profile, so this one cannot change what they mean.
"""

from hypothesis import settings

settings.register_profile("chatconform-tests", derandomize=True, database=None, deadline=None)
settings.load_profile("chatconform-tests")
