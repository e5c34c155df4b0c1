"""The timestamp helpers every module stamps with."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone

from freezegun import freeze_time
from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.core.clock import Clock, iso, parse_iso, seconds, utcnow

ZONES = st.one_of(st.just(UTC), st.builds(lambda m: timezone(timedelta(minutes=m)), st.integers(-14 * 60, 14 * 60)))


@given(st.datetimes(min_value=datetime(1000, 1, 2), max_value=datetime(9999, 12, 30), timezones=ZONES))
def test_a_stamp_is_the_instant_in_utc_to_the_second(dt: datetime) -> None:
    assert iso(dt) == dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert parse_iso(iso(dt)) == dt.astimezone(UTC).replace(microsecond=0)


def test_a_stamp_of_a_naive_time_reads_it_as_local_time() -> None:
    naive = datetime(2026, 11, 29, 12, 0, 5, 900)
    assert iso(naive) == naive.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_without_the_datetime_module_the_helpers_use_its_c_classes_and_never_load_it() -> None:
    code = (
        "import sys\n"
        "from rolling_graph.core.clock import Clock, iso, parse_iso, seconds, utcnow\n"
        "now = utcnow()\n"
        "assert now.tzinfo is not None and abs((now - parse_iso(Clock().now_iso())).total_seconds()) < 5\n"
        "assert iso(parse_iso('2026-11-30T02:30:00Z') - seconds(90)) == '2026-11-30T02:28:30Z'\n"
        "assert iso(Clock.at('2026-11-30T03:30:00+01:00').now()) == '2026-11-30T02:30:00Z'\n"
        "assert 'datetime' not in sys.modules, 'the pure-Python datetime module was loaded'\n"
        "import datetime\n"
        "assert type(now) is datetime.datetime and now.tzinfo is datetime.UTC\n"
    )
    proc = subprocess.run([sys.executable, "-S", "-c", f"import sys; sys.path[:0] = {sys.path!r}\n{code}"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_a_frozen_clock_is_what_the_helpers_read_when_the_datetime_module_is_loaded() -> None:
    with freeze_time("2026-02-03T04:05:06Z"):
        assert iso(utcnow()) == "2026-02-03T04:05:06Z"
        assert iso(Clock().now() - seconds(6)) == "2026-02-03T04:05:00Z"
