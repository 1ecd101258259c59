"""Test-suite set-up shared by every test folder.

Where it sits: the root of ``tests/``. Test folders have no ``__init__.py`` (rootdir-relative
imports), so shared helpers such as :mod:`rosbags_oracle` are imported by module name; this file
puts ``tests/`` on ``sys.path`` explicitly rather than relying on pytest's import mode.

Hypothesis profiles: ``default`` (no per-example deadline: rosbags' first call compiles code for
several milliseconds, and timing belongs in ``bench/`` anyway) and ``fuzz`` (many more examples,
for ``make fuzz``), chosen with ``HYPOTHESIS_PROFILE``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

settings.register_profile(
    "default",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "fuzz",
    deadline=None,
    max_examples=5000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
