"""How hard the fuzz, stress and property tests push: one table, each count overridable by its variable.

`make test` on a laptop uses the quick defaults below (the whole suite near a minute); CI (.ci/run) sets the
counts it has always run (fuzz 250 per format, 4 kill rounds, 2 concurrent rounds, 300 property examples, and
50 kills of a flooded judging queue), and a long soak sets more (RAGDIFF_FUZZ_EXAMPLES=1000 is issue 8's
12,000-example run).
"""

from __future__ import annotations

import os

QUICK = {
    "RAGDIFF_FUZZ_EXAMPLES": 60,  # generated files per format in tests/test_fuzz_parsers.py
    "RAGDIFF_KILL_ITERATIONS": 2,  # SIGKILL rounds in tests/test_labels_stress.py
    "RAGDIFF_CONCURRENT_ITERATIONS": 1,
    "RAGDIFF_JUDGE_KILLS": 3,  # SIGKILLs during a flood of decisions in tests/test_judge_kill.py  # rounds of three concurrent reviewers in tests/test_labels_stress.py
    "RAGDIFF_PROPERTY_EXAMPLES": 100,  # random collections checked against pytrec_eval
}


def count(name: str) -> int:
    """The count for `name`: its environment variable when set, else the quick default."""
    return int(os.environ.get(name, QUICK[name]))
