"""Named run profiles with every Hypothesis setting pinned.

Hypothesis loads its own ``ci`` profile when ``CI`` is set; a profile built on the
current defaults would silently inherit it. Ours start from the built-in ``default``
and name every field, so a profile means the same thing everywhere.

Hypothesis is imported when a profile's settings are built, not with this module: the
command line and the pytest plugin read the profiles' names and descriptions to build their
options (``chatconform.run_options``), and every pytest session loads the plugin.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from chatconform.errors import ConfigError

if TYPE_CHECKING:
    from hypothesis import settings

DATABASE_DIR = Path(".chatconform") / "examples"


@dataclass(frozen=True)
class Profile:
    name: str
    max_examples: int
    derandomize: bool
    use_database: bool
    steer_to_large: bool  # call hypothesis.target() on the case size
    description: str
    exact_examples: bool = False  # max_examples as given, not scaled per contract

    def examples_for(self, scale: float = 1.0) -> int:
        """The example budget of one search of a contract with this ``examples_scale``."""
        return self.max_examples if self.exact_examples else max(1, round(self.max_examples * scale))

    def cut_short(self, scale: float = 1.0) -> int | None:
        """The named profile's own budget when ``--examples`` asked for fewer (a quick look,
        which cannot decide a check that needs the full search), else None."""
        full = PROFILES[self.name].examples_for(scale) if self.name in PROFILES else None
        return full if full is not None and self.examples_for(scale) < full else None

    def settings(self, *, seed: int | None = None, scale: float = 1.0) -> settings:
        from hypothesis import HealthCheck, Phase, Verbosity, settings
        from hypothesis.database import DirectoryBasedExampleDatabase

        derandomize = self.derandomize and seed is None
        return settings(
            parent=settings.get_profile("default"),
            max_examples=self.examples_for(scale),
            derandomize=derandomize,
            database=DirectoryBasedExampleDatabase(DATABASE_DIR) if self.use_database else None,
            verbosity=Verbosity.quiet,
            phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink),
            stateful_step_count=50,
            report_multiple_bugs=True,
            suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
                                   HealthCheck.filter_too_much),
            deadline=None,
            print_blob=False,
            backend="hypothesis",
        )


PROFILES = {
    "ci": Profile("ci", 200, True, False, False,
                  "derandomized, no example database: the same verdicts on every run"),
    "dev": Profile("dev", 100, False, True, False,
                   "random, with an example database under .chatconform/ that replays failures"),
    "deep": Profile("deep", 2000, False, True, True,
                    "many examples, steered toward large inputs"),
}


def get_profile(name: str, *, examples: int | None = None) -> Profile:
    """A named profile, optionally with its example budget replaced."""
    try:
        profile = PROFILES[name]
    except KeyError:
        raise ConfigError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}") from None
    if examples is not None:
        if examples < 1:
            raise ConfigError(f"--examples must be at least 1, got {examples}")
        profile = replace(profile, max_examples=examples, exact_examples=True)
    return profile
