"""``channels`` and ``operations`` of ``docs/asyncapi.yaml``: the topics and who sends on them.

Operations are seen from a board node (DESIGN.md §4): it sends status, state, events and
replies, and receives commands and the station's status; every message is QoS 1.
"""

from __future__ import annotations

from typing import Any

from asyncapi_schemas import ref

MQTT_BINDING = "0.2.0"

# channel id -> (address, message, node's action, retain, description)
CHANNELS: dict[str, tuple[str, str, str, bool, str]] = {
    "boardStatus": (
        "qz/v1/{venue}/board/{board}/status",
        "BoardStatus",
        "send",
        True,
        "Retained. `lost` is the will of the board's connection (one connection per "
        "board); a clean stop publishes `offline` first.",
    ),
    "boardState": (
        "qz/v1/{venue}/board/{board}/state",
        "StateSnapshot",
        "send",
        True,
        "Retained. Published on every change and on every (re)birth.",
    ),
    "boardEvent": (
        "qz/v1/{venue}/board/{board}/event",
        "Event",
        "send",
        False,
        "Events in `seq` order; after a reconnect the backlog with `replay: true`.",
    ),
    "boardCmd": (
        "qz/v1/{venue}/board/{board}/cmd",
        "BoardCommand",
        "receive",
        False,
        "Station to node: a command for this board.",
    ),
    "boardReply": (
        "qz/v1/{venue}/board/{board}/reply",
        "Reply",
        "send",
        False,
        "Node to station: the reply to a board or venue command.",
    ),
    "venueCmd": (
        "qz/v1/{venue}/venue/cmd",
        "VenueCommand",
        "receive",
        False,
        "Station to all nodes: start the round, pause all, resume all, rebirth.",
    ),
    "stationStatus": (
        "qz/v1/{venue}/station/status",
        "StationStatus",
        "receive",
        True,
        "Retained. Nodes rebirth (republish status and state, replay) when the "
        "station's status turns online with a new session.",
    ),
}


def channel_section() -> dict[str, Any]:
    channels: dict[str, Any] = {}
    for cid, (address, message, _, _, description) in CHANNELS.items():
        params = [p for p in ("venue", "board") if "{" + p + "}" in address]
        channels[cid] = {
            "address": address,
            "description": description,
            "parameters": {p: ref("parameters", p) for p in params},
            "messages": {message: ref("messages", message)},
        }
    return channels


def operation_section() -> dict[str, Any]:
    ops: dict[str, Any] = {}
    for cid, (_, message, action, retain, _) in CHANNELS.items():
        op: dict[str, Any] = {
            "action": action,
            "channel": {"$ref": f"#/channels/{cid}"},
            "messages": [{"$ref": f"#/channels/{cid}/messages/{message}"}],
            "bindings": {"mqtt": {"qos": 1, "retain": retain, "bindingVersion": MQTT_BINDING}},
        }
        if message.endswith("Command"):
            op["reply"] = {
                "channel": {"$ref": "#/channels/boardReply"},
                "messages": [{"$ref": "#/channels/boardReply/messages/Reply"}],
            }
        ops[f"{action}{cid[0].upper()}{cid[1:]}"] = op
    return ops
