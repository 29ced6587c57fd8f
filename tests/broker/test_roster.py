"""The roster: a good one loads; each kind of bad one names file, key and reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_config import Roster, RosterError, queue_size

GOOD = """
venue = "meishan-2016"

[station]
username = "station"

[[node]]
id = "pi-01"
boards = ["1", "2"]

[[node]]
id = "pi-02"
boards = ["3"]
username = "pi-02-account"

[[arbiter]]
username = "arbiter-1"

[[display]]
username = "hall"

[listeners]
host = "127.0.0.1"
port = 1883
websockets = { host = "127.0.0.1", port = 9001 }

[broker]
autosave_interval_s = 5
outage_minutes = 30
events_per_board_per_minute = 6
"""


def _error(text: str) -> RosterError:
    with pytest.raises(RosterError) as info:
        Roster.from_toml(text, source="venue.toml")
    return info.value


def test_good_roster_loads_with_every_account(tmp_path: Path) -> None:
    path = tmp_path / "roster.toml"
    path.write_text(GOOD, encoding="utf-8")
    roster = Roster.load(path)
    assert roster.venue == "meishan-2016"
    assert roster.boards == ("1", "2", "3")
    assert roster.accounts() == {
        "station": "station",
        "pi-01": "node",
        "pi-02-account": "node",
        "arbiter-1": "arbiter",
        "hall": "display",
    }
    assert roster.listeners.websockets is not None
    assert roster.listeners.websockets.port == 9001
    assert roster.broker.autosave_interval_s == 5
    assert roster.topic_root == "qz/v1/meishan-2016"


def test_defaults_are_a_loopback_broker_with_a_station() -> None:
    roster = Roster.from_toml('venue = "v"')
    assert roster.station.username == "station"
    assert (roster.listeners.host, roster.listeners.port) == ("127.0.0.1", 1883)
    assert roster.listeners.websockets is None and roster.listeners.tls is None
    assert roster.broker.persistence is True


def test_build_equals_the_same_roster_from_toml() -> None:
    built = Roster.build(
        venue="meishan-2016",
        nodes={"pi-01": ["1", "2"]},
        arbiters=["arbiter-1"],
        displays=["hall"],
        websockets=("127.0.0.1", 9001),
    )
    parsed = Roster.from_toml(
        'venue = "meishan-2016"\n[[node]]\nid = "pi-01"\nboards = ["1", "2"]\n'
        '[[arbiter]]\nusername = "arbiter-1"\n[[display]]\nusername = "hall"\n'
        '[listeners]\nwebsockets = { host = "127.0.0.1", port = 9001 }\n'
    )
    assert built == parsed


def test_unknown_key_names_its_path() -> None:
    err = _error('venue = "v"\n[[node]]\nid = "pi-01"\nboards = ["1"]\nbord = 3\n')
    assert err.source == "venue.toml"
    assert [(p.key, p.reason) for p in err.problems] == [("node[0].bord", "unknown key 'bord'")]
    assert "venue.toml" in str(err) and "node[0].bord" in str(err)


def test_unknown_table_at_top_level() -> None:
    err = _error('venue = "v"\n[brokr]\npersistence = true\n')
    assert err.problems[0].key == "brokr"
    assert "unknown key" in err.problems[0].reason


@pytest.mark.parametrize(
    ("text", "key", "bad"),
    [
        ('venue = "meishan 2016"', "venue", "meishan 2016"),
        ('venue = "v"\n[[node]]\nid = "pi/01"\nboards = ["1"]', "node[0].id", "pi/01"),
        ('venue = "v"\n[[node]]\nid = "pi"\nboards = ["1", "#"]', "node[0].boards[1]", "#"),
        (
            'venue = "v"\n[[display]]\nusername = "' + "x" * 33 + '"',
            "display[0].username",
            "x" * 33,
        ),
        ('venue = ""', "venue", ""),
    ],
)
def test_bad_id_names_key_and_value(text: str, key: str, bad: str) -> None:
    err = _error(text)
    assert len(err.problems) == 1
    assert err.problems[0].key == key
    assert repr(bad) in err.problems[0].reason
    assert "A-Z a-z 0-9 _ -" in err.problems[0].reason


def test_a_board_on_two_nodes() -> None:
    err = _error(
        'venue = "v"\n[[node]]\nid = "pi-01"\nboards = ["1", "2"]\n'
        '[[node]]\nid = "pi-02"\nboards = ["3", "2"]\n'
    )
    assert [(p.key, p.reason) for p in err.problems] == [
        ("node[1].boards[1]", "board '2' is already on node 'pi-01'")
    ]


def test_duplicate_node() -> None:
    err = _error(
        'venue = "v"\n[[node]]\nid = "pi-01"\nboards = ["1"]\n'
        '[[node]]\nid = "pi-01"\nboards = ["2"]\n'
    )
    assert [(p.key, p.reason) for p in err.problems] == [
        ("node[1].id", "node 'pi-01' is listed twice (first at node[0])")
    ]


def test_missing_venue() -> None:
    err = _error('[[node]]\nid = "pi-01"\nboards = ["1"]\n')
    assert [(p.key, p.reason) for p in err.problems] == [("venue", "required key is missing")]


def test_a_username_used_twice() -> None:
    err = _error(
        'venue = "v"\n[[node]]\nid = "hall"\nboards = ["1"]\n[[display]]\nusername = "hall"\n'
    )
    assert [(p.key, p.reason) for p in err.problems] == [
        ("display[0].username", "username 'hall' is already used by node[0].id")
    ]


def test_a_node_without_boards() -> None:
    err = _error('venue = "v"\n[[node]]\nid = "pi-01"\nboards = []\n')
    assert err.problems[0].key == "node[0].boards"


def test_two_listeners_on_one_port() -> None:
    err = _error(
        'venue = "v"\n[listeners]\nport = 1883\nwebsockets = { host = "127.0.0.1", port = 1883 }\n'
    )
    assert err.problems[0].key == "listeners.websockets.port"
    assert "already used" in err.problems[0].reason


def test_listener_host_must_be_an_address() -> None:
    err = _error('venue = "v"\n[listeners]\nhost = "broker.local"\n')
    assert err.problems[0].key == "listeners.host"
    assert "not an IP address" in err.problems[0].reason


def test_several_problems_reported_at_once() -> None:
    err = _error(
        'venue = "v v"\n[[node]]\nid = "pi-01"\nboards = ["1"]\nextra = 1\n'
        "[broker]\nautosave_interval_s = 0\n"
    )
    assert {p.key for p in err.problems} == {"venue", "node[0].extra", "broker.autosave_interval_s"}
    assert str(err).startswith("venue.toml: 3 problems:")


def test_not_toml_and_unreadable_file(tmp_path: Path) -> None:
    err = _error('venue = "v\n')
    assert "not valid TOML" in str(err)
    with pytest.raises(RosterError, match="cannot read"):
        Roster.load(tmp_path / "missing.toml")


def test_build_validates_like_a_file() -> None:
    with pytest.raises(RosterError) as info:
        Roster.build(venue="v", nodes={"a": ["1"], "b": ["1"]})
    assert info.value.source == "Roster.build"
    assert info.value.problems[0].key == "node[1].boards[0]"


def test_tls_paths_are_relative_to_the_roster_file(tmp_path: Path) -> None:
    path = tmp_path / "roster.toml"
    path.write_text(
        'venue = "v"\n[listeners.tls]\nport = 8883\ncafile = "ca.crt"\n'
        'certfile = "s.crt"\nkeyfile = "/etc/k.key"\n',
        encoding="utf-8",
    )
    tls = Roster.load(path).listeners.tls
    assert tls is not None
    assert tls.cafile == tmp_path / "ca.crt"
    assert str(tls.keyfile) == "/etc/k.key"


def test_with_ports_changes_only_the_ports() -> None:
    r = Roster.build(venue="v", nodes={"n": ["1"]}, websockets=("127.0.0.1", 9001))
    moved = r.with_ports(port=20000, ws_port=20001)
    assert moved.listeners.port == 20000
    assert moved.listeners.websockets is not None and moved.listeners.websockets.port == 20001
    assert moved.node == r.node and r.listeners.port == 1883


def test_queue_size_formula() -> None:
    def roster(boards: int, **broker: int) -> Roster:
        return Roster.build(venue="v", nodes={"n": [str(i) for i in range(boards)]}, broker=broker)

    # 120 boards x 6 events/min x 2 messages (event + state) x 30 min x 2 headroom
    assert queue_size(roster(120)) == 100_000  # 86,400: below the floor for one board's flood
    assert queue_size(roster(120, outage_minutes=60)) == 173_000  # 172,800 rounded up
    assert queue_size(roster(12)) == 100_000  # 8640, never below the flood floor
    assert queue_size(roster(1)) == 100_000
    assert queue_size(roster(12, max_queued_messages=500)) == 500


def test_the_roster_in_docs_broker_md_loads(tmp_path: Path) -> None:
    doc = Path(__file__).resolve().parents[2] / "docs" / "broker.md"
    text = doc.read_text(encoding="utf-8").split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "roster.toml"
    path.write_text(text, encoding="utf-8")
    roster = Roster.load(path)
    assert roster.accounts() == {
        "station": "station",
        "pi-01": "node",
        "arbiter-1": "arbiter",
        "hall": "display",
    }
    assert roster.listeners.tls is not None
    assert roster.listeners.tls.cafile == tmp_path / "ca.crt"
    assert roster.bridge is not None and roster.bridge.remote_prefix == "venues/"


def test_public_host_goes_into_urls() -> None:
    from broker_config import Listener

    assert Listener("mqtt", "0.0.0.0", 1883, "broker.lan").url == "mqtt://broker.lan:1883"
    assert Listener("websockets", "::1", 9001).url == "ws://[::1]:9001"
