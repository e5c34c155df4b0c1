"""``rolling_graph.worker`` whose merge holds its transaction open, writes done.

Run as ``python tests/faults/slow_merge_worker.py SECONDS WORKER-ARGS...``: the crash tests
kill it while the merge sleeps. The fault is injected here, from the tests (a wrapper
around the merge's last write), never by a switch in production code.
"""

from __future__ import annotations

import sys
import time
from typing import Any


def main(argv: list[str]) -> int:
    delay = float(argv[0])
    from rolling_graph import worker
    from rolling_graph.warm import upsert

    real = upsert.upsert_edges

    def slow_upsert_edges(*args: Any, **kwargs: Any) -> int:
        written = real(*args, **kwargs)
        time.sleep(delay)  # the merge's transaction stays open with its writes done
        return written

    upsert.upsert_edges = slow_upsert_edges  # type: ignore[assignment]
    return worker.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
