"""When a session's Table row leaves: idle past its TTL, a forget marker only after its own lifetime."""

from turnstream.schemas.control import forget_marker
from turnstream.session.expiry import expiry_of, idle_sessions, is_idle, sweep_interval

ROW = b'{"v": 2}'


def test_idle_means_strictly_older_than_the_ttl() -> None:
    touched = {"a": 100.0, "b": 140.0, "c": 141.0}
    assert idle_sessions(touched, now=200.0, ttl_seconds=60) == ["a"]
    assert idle_sessions(touched, now=201.5, ttl_seconds=60) == ["a", "b", "c"]
    assert not is_idle(140.0, 200.0, 60) and is_idle(139.9, 200.0, 60)


def test_sweep_interval_is_a_tenth_of_the_ttl_within_bounds() -> None:
    assert sweep_interval(4) == 0.5
    assert sweep_interval(100) == 10
    assert sweep_interval(7 * 24 * 3600) == 60


def test_an_idle_row_expires_a_gone_row_is_untracked() -> None:
    assert expiry_of(ROW, touched_at=0.0, now=1_000.0, marker_seconds=30) == "expire"
    assert expiry_of(None, touched_at=0.0, now=1_000.0, marker_seconds=30) == "untrack"


def test_a_forget_marker_stays_for_its_own_lifetime_then_expires() -> None:
    marker = forget_marker(5.0)
    assert expiry_of(marker, touched_at=0.0, now=30.0, marker_seconds=30) == "keep"
    assert expiry_of(marker, touched_at=0.0, now=30.5, marker_seconds=30) == "expire"
