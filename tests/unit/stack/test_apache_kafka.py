"""The Apache Kafka node's configuration: listeners, sizing and security, with no JVM started."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path

import pytest

from turnstream.stack.apache_kafka import (
    OWNER_FILE,
    WORKDIR_PREFIX,
    KafkaNode,
    KafkaUnavailable,
    QuorumView,
    TlsFiles,
    active_controller,
    cluster_id,
    cluster_nodes,
    format_arguments,
    kafka_lib,
    min_in_sync,
    new_workdir,
    quorum_view,
    render_properties,
    server_properties,
)


def test_a_plain_node_listens_on_loopback_and_advertises_only_its_client_listener(tmp_path: Path) -> None:
    properties = server_properties(KafkaNode(port=9092, controller_port=9093), tmp_path / "data")
    assert properties["listeners"] == "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"
    assert properties["advertised.listeners"] == "PLAINTEXT://127.0.0.1:9092"
    assert properties["controller.quorum.voters"] == "1@127.0.0.1:9093"
    assert properties["log.dirs"] == str(tmp_path / "data")
    # one node: nothing may wait for replicas that cannot exist
    assert all(properties[key] == "1" for key in properties if key.endswith(("replication.factor", "min.isr")))
    assert "sasl.enabled.mechanisms" not in properties


def test_sasl_and_ssl_listeners_get_their_protocols_scram_and_the_pem_identity(tmp_path: Path) -> None:
    cert, key = tmp_path / "broker.pem", tmp_path / "broker.key"
    cert.write_text("-----BEGIN CERTIFICATE-----\nAAAA\nBBBB\n-----END CERTIFICATE-----\n")
    key.write_text("-----BEGIN PRIVATE KEY-----\nCCCC\n-----END PRIVATE KEY-----\n")
    node = KafkaNode(
        port=1, controller_port=2, sasl_port=3, ssl_port=4, tls=TlsFiles(cert, key), scram_users={"u": "p"}
    )
    properties = server_properties(node, tmp_path)
    assert properties["listener.security.protocol.map"] == (
        "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL"
    )
    assert properties["sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert properties["listener.name.ssl.ssl.keystore.certificate.chain"] == (
        "-----BEGIN CERTIFICATE-----\\nAAAA\\nBBBB\\n-----END CERTIFICATE-----"
    )
    assert node.url("SSL") == "kafka://127.0.0.1:4" and node.url("SASL_PLAINTEXT") == "kafka://127.0.0.1:3"
    assert "\n" not in render_properties(properties).rstrip("\n").split("\n")[-1]


def test_an_ssl_listener_without_tls_files_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="TLS files"):
        server_properties(KafkaNode(port=1, controller_port=2, ssl_port=3), tmp_path)


def test_format_creates_one_scram_credential_per_user(tmp_path: Path) -> None:
    arguments = format_arguments(tmp_path / "server.properties", "abc", {"alice": "a1", "bob": "b2"})
    assert arguments[:5] == ["format", "-t", "abc", "-c", str(tmp_path / "server.properties")]
    assert arguments[5:] == [
        "--add-scram",
        "SCRAM-SHA-512=[name=alice,password=a1]",
        "--add-scram",
        "SCRAM-SHA-512=[name=bob,password=b2]",
    ]


def test_a_cluster_id_is_a_uuid_in_unpadded_url_safe_base64() -> None:
    found = cluster_id()
    assert len(found) == 22 and len(base64.urlsafe_b64decode(found + "==")) == 16
    assert cluster_id() != found


def test_a_cluster_id_never_starts_with_a_dash_the_storage_tool_would_read_as_an_option() -> None:
    draws = iter([b"\xf8" + bytes(15), b"\x00" * 16])  # the first encodes as "-AAAA..."
    assert cluster_id(lambda: next(draws)) == "A" * 22


def test_missing_jars_name_the_folder_and_the_command_that_fetches_them(tmp_path: Path) -> None:
    with pytest.raises(KafkaUnavailable, match=rf"no Apache Kafka jars in {tmp_path}: run `make kafka`"):
        kafka_lib(str(tmp_path))


def test_a_new_folder_removes_those_of_stacks_that_are_gone_and_keeps_the_rest(tmp_path: Path) -> None:
    gone, alive, foreign = (tmp_path / f"{WORKDIR_PREFIX}{name}" for name in ("gone", "alive", "foreign"))
    for folder in (gone, alive, foreign):
        folder.mkdir()
    ended = subprocess.Popen(["true"])  # a process id that no longer runs
    ended.wait()
    (gone / OWNER_FILE).write_text(str(ended.pid))
    (alive / OWNER_FILE).write_text(str(os.getpid()))
    (tmp_path / "unrelated").mkdir()
    made = new_workdir(tmp_path)
    assert not gone.exists() and alive.exists() and foreign.exists() and (tmp_path / "unrelated").exists()
    assert made.name.startswith(WORKDIR_PREFIX) and (made / OWNER_FILE).read_text() == str(os.getpid())


def test_a_single_node_replicates_once_and_is_its_own_quorum(tmp_path: Path) -> None:
    properties = server_properties(KafkaNode(port=9092, controller_port=9093), tmp_path)
    assert properties["node.id"] == "1" and properties["controller.quorum.voters"] == "1@127.0.0.1:9093"
    assert properties["default.replication.factor"] == "1" and properties["min.insync.replicas"] == "1"


def test_a_cluster_of_three_votes_together_and_replicates_three_times_with_two_in_sync(tmp_path: Path) -> None:
    nodes = cluster_nodes([(9092, 9093), (9192, 9193), (9292, 9293)])
    voters = "1@127.0.0.1:9093,2@127.0.0.1:9193,3@127.0.0.1:9293"
    for n, node in enumerate(nodes, start=1):
        properties = server_properties(node, tmp_path)
        assert properties["node.id"] == str(n) and properties["controller.quorum.voters"] == voters
        assert (
            properties["listeners"]
            == f"PLAINTEXT://127.0.0.1:{node.port},CONTROLLER://127.0.0.1:{node.controller_port}"
        )
        for name in (
            "default.replication.factor",
            "offsets.topic.replication.factor",
            "transaction.state.log.replication.factor",
        ):
            assert properties[name] == "3", name
        assert properties["min.insync.replicas"] == properties["transaction.state.log.min.isr"] == "2"
    assert [min_in_sync(n) for n in (1, 2, 3, 5)] == [1, 2, 2, 3]


def _quorum_state(leader: int, epoch: int, voted: int = -1) -> str:
    """A node's quorum-state file as Apache Kafka 4.1 writes it."""
    return (
        f'{{"clusterId":"","leaderId":{leader},"leaderEpoch":{epoch},"votedId":{voted},"appliedOffset":0,'
        '"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}'
    )


def test_a_quorum_state_file_names_its_epoch_and_leader_or_none_during_an_election() -> None:
    assert quorum_view(_quorum_state(leader=2, epoch=5, voted=2)) == QuorumView(epoch=5, leader=2)
    assert quorum_view(_quorum_state(leader=-1, epoch=6, voted=3)) == QuorumView(epoch=6, leader=None)
    assert quorum_view("") is None and quorum_view('{"clusterId":""}') is None and quorum_view("[]") is None


def test_the_active_controller_is_the_leader_of_the_newest_epoch_not_the_one_most_files_name() -> None:
    # node 1 led epoch 1 and was killed: its own file and one other still name it, the third has seen epoch 2
    after_kill = [_quorum_state(1, 1), _quorum_state(1, 1), _quorum_state(2, 2)]
    assert active_controller(after_kill) == 2
    assert active_controller([_quorum_state(3, 1), _quorum_state(3, 1), _quorum_state(3, 1)]) == 3
    # the newest epoch has no leader yet: the older epoch's leader is not the controller any more
    assert active_controller([_quorum_state(1, 1), _quorum_state(-1, 2, voted=3)]) is None
    assert active_controller([_quorum_state(-1, 2), _quorum_state(3, 2), "{half a file"]) == 3
    assert active_controller([]) is None
