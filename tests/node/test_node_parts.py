"""The node's parts without a broker: config validation, the journal, the time source."""

from __future__ import annotations

import json

import pytest

from board_nodes.board import NodeTime
from board_nodes.cli import run as cli_run
from board_nodes.config import NodeConfig, NodeConfigError
from board_nodes.journal import Journal, JournalError

GOOD = """
venue = "meishan"
node = "pi-01"
regulation = "meishan-2016"
data_dir = "data"
[broker]
url = "mqtt://127.0.0.1:1883"
username = "pi-01"
[[board]]
id = "1"
face = "simulated"
[[board]]
id = "2"
face = "serial"
url = "socket://127.0.0.1:7001"
"""


def test_a_good_config_loads_with_data_dir_relative_to_the_file(tmp_path):
    path = tmp_path / "node.toml"
    path.write_text(GOOD)
    config = NodeConfig.load(path)
    assert [b.id for b in config.board] == ["1", "2"]
    assert config.data_dir == tmp_path / "data"
    assert config.broker.port == 1883 and not config.broker.tls


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('venue = "meishan"', 'venue = "梅山"'), "venue: String should match pattern"),
        (('node = "pi-01"\n', 'node = "pi-01"\ncolour = 1\n'), "colour: unknown key"),
        (('data_dir = "data"\n', ""), "data_dir: missing value"),
        (('face = "simulated"', 'face = "telepathy"'), "board[0].face: Input should be"),
        (('url = "mqtt://', 'url = "http://'), "broker.url: must start with mqtt://"),
        (('url = "socket://127.0.0.1:7001"\n', ""), "board[1]: a serial face needs url"),
        # a key misspelt: both halves of it (an outsider saw only "node: missing value")
        (('node = "pi-01"', 'nod = "pi-01"'), "node: missing value; nod: unknown key"),
        (('id = "2"', 'id = "1"'), "board '1' is configured twice"),
        (("[broker]", "[broker"), "not valid TOML"),
    ],
)
def test_a_bad_config_names_file_key_and_reason(tmp_path, change, message):
    path = tmp_path / "node.toml"
    path.write_text(GOOD.replace(*change, 1))
    with pytest.raises(NodeConfigError) as info:
        NodeConfig.load(path)
    assert str(info.value).startswith(str(path)), info.value
    assert message in str(info.value)


def test_a_file_saved_in_gbk_is_refused_in_words(tmp_path):
    path = tmp_path / "node.toml"
    path.write_bytes("# 第5台 配置\n".encode("gbk") + GOOD.encode())
    with pytest.raises(NodeConfigError, match=r"not UTF-8 text .*save the file as UTF-8") as info:
        NodeConfig.load(path)
    assert str(info.value).startswith(str(path))


def test_check_refuses_a_regulation_the_node_could_not_load(tmp_path, capsys):
    """``--check`` passed ``meishan2016`` and the node then died at start with a traceback."""
    path = tmp_path / "node.toml"
    path.write_text(GOOD.replace('regulation = "meishan-2016"', 'regulation = "meishan2016"'))

    class Args:
        config = str(path)
        check = True
        log_level = "INFO"

    assert cli_run(Args()) == 2
    err = capsys.readouterr().err
    assert "regulation: meishan2016: no such profile" in err and "meishan-2016" in err, err


def test_the_cli_refuses_a_bad_config_with_exit_2(tmp_path, capsys):
    path = tmp_path / "node.toml"
    path.write_text(GOOD.replace('face = "simulated"', "face = 3"))

    class Args:
        config = str(path)
        check = True
        log_level = "INFO"

    assert cli_run(Args()) == 2
    assert "board[0].face" in capsys.readouterr().err


def test_journal_numbers_events_and_keeps_them_across_reopen(tmp_path):
    path = tmp_path / "j.sqlite3"
    with Journal(path) as journal:
        assert journal.next_session() == 1
        for _ in range(3):
            journal.record("1", lambda seq: {"seq": seq}, checkpoint={"at": 1}, wall_ms=5)
        journal.record("2", lambda seq: {"seq": seq})
        journal.mark_sent([row.id for row in journal.unsent("1", limit=2)])
        journal.close()
        journal.close()  # idempotent
    with Journal(path) as journal:
        assert journal.next_session() == 2
        record = journal.board("1")
        assert record.last_seq == 3 and record.checkpoint == {"at": 1}
        assert record.checkpoint_wall_ms == 5
        assert [json.loads(r.payload)["seq"] for r in journal.unsent("1")] == [3]
        assert journal.unsent_count() == 2
        assert journal.record("1", lambda seq: {"seq": seq})["seq"] == 4


def test_journal_rolls_back_an_event_whose_payload_failed(tmp_path):
    with Journal(tmp_path / "j.sqlite3") as journal:

        def broken(seq: int) -> dict:
            raise RuntimeError("cannot build")

        with pytest.raises(RuntimeError):
            journal.record("1", broken)
        assert journal.board("1").last_seq == 0
        assert journal.record("1", lambda seq: {"seq": seq})["seq"] == 1


@pytest.mark.allow_error_log  # dropping unsent events past capacity is logged CRITICAL
def test_journal_prunes_sent_events_and_drops_unsent_only_past_capacity(tmp_path, caplog):
    with Journal(tmp_path / "j.sqlite3") as journal:
        for _ in range(10):
            journal.record("1", lambda seq: {"seq": seq})
        journal.mark_sent([r.id for r in journal.unsent("1", limit=6)])
        assert journal.prune(keep=2, capacity=100) == 0
        assert [r.seq for r in journal.events_from("1", 1)] == [5, 6, 7, 8, 9, 10]
        assert journal.unsent_count("1") == 4
        assert journal.prune(keep=2, capacity=3) == 1  # past capacity: the oldest unsent goes
        assert [r.seq for r in journal.unsent("1")] == [8, 9, 10]
    assert any(r.levelname == "CRITICAL" and "dropped 1" in r.message for r in caplog.records)


def test_journal_remembers_replies_per_txn(tmp_path):
    with Journal(tmp_path / "j.sqlite3", txn_keep=2) as journal:
        journal.remember_reply("1", "a", '{"ok":true}')
        journal.remember_reply("1", "b", '{"ok":false}')
        journal.remember_reply("1", "c", '{"ok":true}')
        assert journal.reply_for("1", "a") is None  # beyond txn_keep
        assert journal.reply_for("1", "b") == '{"ok":false}'
        assert journal.reply_for("2", "b") is None


def test_a_journal_that_is_not_sqlite_is_refused(tmp_path):
    path = tmp_path / "j.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(JournalError, match="cannot open the journal"):
        Journal(path).open()


def test_node_time_pins_to_the_act_and_only_a_change_of_state_is_a_floor():
    ticks = iter([100, 200, 300, 400, 500])
    now = NodeTime(lambda: next(ticks))
    assert now() == 100  # a read (display, checkpoint) moves nothing
    with now.pinned(50):  # an act from before that read, arriving late: its own instant
        assert now() == 50 and now() == 50
        now.mark()  # it changed the clock
    with now.pinned(40):  # older than the last change: applied at the change
        assert now() == 50
    assert now() == 200
    now.mark()  # e.g. an arbiter's pause at 300
    with now.pinned(250):
        assert now() == 300
