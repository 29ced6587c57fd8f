"""The station reaches the broker the way a node does (issue 14): one broker configuration.

``mqtts://`` with the venue CA reaches the TLS listener that ``qizhong broker-config`` writes,
with the credentials file it writes for the station; a wrong CA is refused, not ignored.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiomqtt
import pytest
from support.broker import STANDARD_NODES, collect, mqtt_client
from support.station import station_config
from support.tls import make_test_certs

from board_nodes.config import BrokerConfig as NodeBroker
from broker_config import Roster
from venue_station.config import BrokerConfig, StationConfig
from venue_station.errors import ConfigError
from wire_contract.broker import BrokerSettings
from wire_contract.broker import mqtt_client as contract_client

pytestmark = pytest.mark.timeout(60)


def tls_roster(certs: dict[str, str]) -> Roster:
    return Roster.build(
        venue="test", nodes=STANDARD_NODES, displays=["hall"], tls={"port": 8883, **certs}
    )


async def test_the_station_connects_over_mqtts_to_the_generated_tls_listener(
    broker_factory, start_station, tmp_path: Path
) -> None:
    certs = make_test_certs(tmp_path)
    broker = broker_factory(tls_roster(certs))
    url = broker.files.credentials("station").urls["mqtts"]
    assert url == f"mqtts://127.0.0.1:{broker.tls_port}"
    broker_config = BrokerConfig(
        url=url,
        credentials_file=broker.files.credentials_dir / "station.json",
        ca_file=Path(certs["cafile"]),
        client_id="qz-station-tls",
    )
    config = station_config(tmp_path).model_copy(update={"broker": broker_config})
    assert config.broker.tls and config.broker.port == broker.tls_port
    # A display's account watches over the plain listener (one connection per account).
    async with mqtt_client(broker, "hall") as watcher:
        await watcher.subscribe("qz/v1/test/station/status", qos=1)
        station = await start_station(config)
        assert station.collector is not None
        await asyncio.wait_for(station.collector.connected.wait(), 20)
        got = await collect(watcher, 1, within=10)
    assert [json.loads(m.payload)["state"] for m in got] == ["online"]


async def test_a_wrong_ca_is_refused(broker_factory, tmp_path: Path) -> None:
    certs = make_test_certs(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    stranger = make_test_certs(other)
    broker = broker_factory(tls_roster(certs))
    user, password = broker.credentials("station")
    settings = BrokerSettings(
        url=f"mqtts://127.0.0.1:{broker.tls_port}",
        username=user,
        password=password,
        ca_file=Path(stranger["cafile"]),
    )
    with pytest.raises(aiomqtt.MqttError, match="CERTIFICATE_VERIFY_FAILED"):
        async with contract_client(settings, identifier="stranger-ca", timeout=5):
            pass


@pytest.mark.parametrize(
    ("url", "host", "port", "tls"),
    [
        ("mqtt://10.0.0.2", "10.0.0.2", 1883, False),
        ("mqtts://broker.hall", "broker.hall", 8883, True),
        ("mqtts://broker.hall:18883", "broker.hall", 18883, True),
        ("mqtt://[::1]:1884", "::1", 1884, False),
    ],
)
def test_one_url_parsing_for_node_and_station(url: str, host: str, port: int, tls: bool) -> None:
    for config in (BrokerConfig(url=url), NodeBroker(url=url)):
        assert (config.host, config.port, config.tls) == (host, port, tls)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("tcp://x:1883", "must start with mqtt:// or mqtts://"),
        ("mqtt://:1883", "has no host"),
        ("mqtt://x:99999", "has a bad port"),
    ],
)
def test_a_bad_broker_url_is_named(tmp_path: Path, url: str, says: str) -> None:
    with pytest.raises(ConfigError) as info:
        StationConfig.from_dict({"venue": "v", "broker": {"url": url}})
    assert info.value.key == "broker.url" and says in info.value.reason


def test_the_station_resolves_its_tls_files_beside_its_config(tmp_path: Path) -> None:
    path = tmp_path / "station.toml"
    path.write_text(
        'venue = "v"\n[broker]\nurl = "mqtts://b:8883"\nca_file = "tls/ca.crt"\n',
        encoding="utf-8",
    )
    assert StationConfig.load(path).broker.ca_file == tmp_path / "tls" / "ca.crt"
