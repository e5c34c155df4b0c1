"""Faults the tests inject into the processes they cannot reach (detached probes).

A hook run as a subprocess starts its probe as yet another process, so a test cannot
monkeypatch it. A test that needs a slow probe puts this folder on ``PYTHONPATH`` and sets
``RG_FAULT_PROBE_DELAY_S``: every Python process started with it imports this module at
start-up, and a probe runner among them sleeps first, as one waiting on a slow model would.
Production code has no switch for it.
"""

from __future__ import annotations

import os
import sys

_delay = os.environ.get("RG_FAULT_PROBE_DELAY_S")
if _delay and any(arg.endswith("probe.runner") for arg in getattr(sys, "orig_argv", ())):
    import time

    time.sleep(min(float(_delay), 60.0))
