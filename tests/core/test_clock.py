"""The timestamp helpers every module stamps with."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.core.clock import iso, parse_iso

ZONES = st.one_of(st.just(UTC), st.builds(lambda m: timezone(timedelta(minutes=m)), st.integers(-14 * 60, 14 * 60)))


@given(st.datetimes(min_value=datetime(1000, 1, 2), max_value=datetime(9999, 12, 30), timezones=ZONES))
def test_a_stamp_is_the_instant_in_utc_to_the_second(dt: datetime) -> None:
    assert iso(dt) == dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert parse_iso(iso(dt)) == dt.astimezone(UTC).replace(microsecond=0)


def test_a_stamp_of_a_naive_time_reads_it_as_local_time() -> None:
    naive = datetime(2026, 11, 29, 12, 0, 5, 900)
    assert iso(naive) == naive.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
