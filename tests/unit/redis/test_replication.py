"""What a re-sync's mark says against the primary's replication id now, and the id read from INFO's reply."""

from __future__ import annotations

import pytest

from turnstream.redis.replication import Lineage, is_replication_id, lineage, replication_id_of

pytestmark = pytest.mark.unit

OLD, NEW = "8ed41e72365ecb37219a9fc08994c7630b675607", "f858395b945faa75dfd7ee0b5a2128db91751e59"


def test_no_mark_is_a_redis_that_lost_everything_whatever_its_id() -> None:
    assert lineage(None, NEW) is Lineage.UNMARKED
    assert lineage(None, None) is Lineage.UNMARKED


def test_a_mark_of_the_current_id_is_the_same_history() -> None:
    assert lineage(NEW, NEW) is Lineage.SAME


def test_a_mark_of_another_id_is_a_changed_primary() -> None:
    assert lineage(OLD, NEW) is Lineage.CHANGED
    assert lineage(f"{OLD},{NEW}", f"{NEW},{NEW}") is Lineage.CHANGED  # one primary of a cluster changed


def test_a_mark_without_an_id_or_an_id_that_cannot_be_read_is_a_first_sight() -> None:
    """A mark written before ids were kept (a replay's time) is taken as whole: nothing to compare it with."""
    assert lineage("1733502000.25", NEW) is Lineage.FIRST_SIGHT
    assert lineage(OLD, None) is Lineage.FIRST_SIGHT


def test_a_replication_id_is_forty_hex_digits_or_several_joined() -> None:
    assert is_replication_id(OLD) and is_replication_id(f"{OLD},{NEW}")
    assert not is_replication_id("1733502000.25")
    assert not is_replication_id(OLD.upper())
    assert not is_replication_id(OLD + ",")


def test_the_id_of_one_server_and_of_every_primary_of_a_cluster() -> None:
    assert replication_id_of({"role": "master", "master_replid": NEW, "master_replid2": OLD}) == NEW
    cluster = {"127.0.0.1:7001": {"role": "master", "master_replid": NEW}, "127.0.0.1:7000": {"master_replid": OLD}}
    assert replication_id_of(cluster) == f"{OLD},{NEW}"  # sorted: the nodes' order does not matter


def test_no_id_when_a_server_does_not_report_one() -> None:
    assert replication_id_of({"role": "master"}) is None
    assert replication_id_of({"a:1": {"master_replid": NEW}, "a:2": {"role": "master"}}) is None
