"""``components/schemas`` of ``docs/asyncapi.yaml``: the pydantic models' own JSON schemas.

Normalised to read well (no derived titles, ``$ref`` into ``components/schemas``, nullable
types folded), with the prose that says what each event type, command and common field means;
the event and command unions are written here because pydantic cannot express them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from wire_contract import messages as wire
from wire_contract import records

# -- schema normalisation -------------------------------------------------------------------------
# The order keys are written in, so that a property reads "type, then its limits, then prose".
_KEY_ORDER = [
    "$ref",
    "title",
    "description",
    "type",
    "const",
    "enum",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "default",
    "additionalProperties",
    "required",
    "properties",
    "items",
    "anyOf",
    "allOf",
    "discriminator",
    "oneOf",
    "examples",
]


def _ordered(schema: dict[str, Any]) -> dict[str, Any]:
    rank = {key: i for i, key in enumerate(_KEY_ORDER)}
    return dict(sorted(schema.items(), key=lambda kv: rank.get(kv[0], len(rank))))


def normalize(schema: Any) -> Any:
    """Make a pydantic JSON schema readable without changing what it accepts.

    Titles go (pydantic derives them from names); ``$defs`` references point into
    ``components/schemas``; ``anyOf [X, null]`` of a plain typed X becomes ``type: [X, 'null']``.
    """
    if isinstance(schema, list):
        return [normalize(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("title", "$defs"):
            continue
        if key == "properties":
            out[key] = {name: normalize(sub) for name, sub in value.items()}
        elif key == "$ref":
            out[key] = value.replace("#/$defs/", "#/components/schemas/")
        else:
            out[key] = normalize(value)
    any_of = out.get("anyOf")
    if isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of:
        other = next(s for s in any_of if s != {"type": "null"})
        if isinstance(other.get("type"), str) and "$ref" not in other:
            del out["anyOf"]
            merged = {**other, **out, "type": [other["type"], "null"]}
            if "enum" in merged:
                merged["enum"] = [*merged["enum"], None]
            out = merged
    return _ordered(out)


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The schema a receiver validates against (defaults make a field optional)."""
    result: dict[str, Any] = normalize(model.model_json_schema(mode="validation"))
    return result


def _defs_of(model: type[BaseModel]) -> dict[str, Any]:
    defs = model.model_json_schema(mode="validation").get("$defs", {})
    return {name: normalize(sub) for name, sub in defs.items()}


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def event_schema_name(event_type: str) -> str:
    return f"{_camel(event_type)}EventData"


def args_schema_name(cmd: str) -> str:
    return f"{_camel(cmd)}Args"


def ref(kind: str, name: str) -> dict[str, str]:
    return {"$ref": f"#/components/{kind}/{name}"}


# -- prose -----------------------------------------------------------------------------------------
EVENT_DOC = {
    "ready": "A game is set on the board (game id, time control, players if known).",
    "started": "The clock started; `side_on_move` runs first.",
    "move": "A side pressed its button: `used_ms` is the time of that move, `move` its number.",
    "paused": "The clock stopped, by the board's pause key or by the arbiter.",
    "resumed": "The clock runs again after a pause.",
    "flag": "A side's time reached zero, at the exact instant.",
    "foul": "A foul of a side: pending until resolved (`ref`: the seq of the event it settles).",
    "forfeit": "A forfeit of a side, pending or as ruled.",
    "shutdown": "The clock face lost power (`power_switch`) or the node restarted.",
    "late": "A side did not arrive within the regulation's minutes after the round start.",
    "adjusted": "A side's time changed by `delta_ms` (arbiter correction).",
    "result": "The game's result; a flag's result stays `pending` until the arbiter confirms it.",
    "move_count": "Natural-move-limit count `started` by the arbiter, or its limit `reached`.",
    "warning": "Something the arbiter should look at that is not a foul.",
}
COMMAND_DOC = {
    "set_game": "Set the game; times, moves, side on move optional (carry-over to a spare clock).",
    "start": "Start the clock, now or at the wall-clock ms `at`.",
    "pause": "Pause the clock (arbiter).",
    "resume": "Resume the clock.",
    "adjust": "Add `delta_ms` (may be negative) to a side's time.",
    "arbiter_mode": "Arbiter mode on/off: board pauses and power cuts are then not fouls.",
    "resolve": "Confirm or dismiss the pending ruling raised by event `seq`.",
    "withdraw": "Take back the confirmed foul first reported by event `seq` (recorded by "
    "mistake), and a loss by fouls it completed that the fouls left no longer reach.",
    "result": "Enter the game's result.",
    "move_count": "Start a natural-move-limit count of `limit` moves (none: the profile's); "
    "`claimant`: the side that claims it (the station's, for a game record's count of checks; "
    "the node ignores it).",
    "foul": "Record a foul the arbiter saw.",
    "reset": "Clear the board back to idle.",
    "rebirth": "Republish status and state and replay journaled events (from `from_seq`).",
    "clock_probe": "A round trip for the node's clock offset: the reply carries `clock` "
    "(`rx`, `tx`), the node's wall ms at receipt and answer; changes nothing, not journaled.",
}
FIELD_DOC = {
    "ts": "Wall-clock Unix time of the fact, in milliseconds (UTC).",
    "session": "Counts the publisher's (re)connections; changes on every birth.",
    "seq": "Per-board event number: +1 per event over the board's whole life, never reused.",
    "replay": "true for events sent from the outbox after a disconnect.",
    "red_ms": "Red's remaining time in ms as of `ts`.",
    "black_ms": "Black's remaining time in ms as of `ts`.",
    "txn": "Transaction id: a command is applied at most once per txn; the reply repeats it.",
    "conn": "The epoch of the connection this status speaks for (the node's wall ms when it "
    "built it, increasing); order statuses by (session, conn, end of connection), not by ts "
    "(docs/wire.md).",
}


def _with_field_docs(schema: dict[str, Any]) -> dict[str, Any]:
    for name, sub in schema.get("properties", {}).items():
        if name in FIELD_DOC and "$ref" not in sub:
            schema["properties"][name] = _ordered({**sub, "description": FIELD_DOC[name]})
    return schema


def schema_components() -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    for model in (wire.StateSnapshot, wire.EventEnvelope, wire.Command, wire.Reply):
        schemas.update(_defs_of(model))
    schemas["BoardStatus"] = _with_field_docs(model_schema(wire.BoardStatus))
    schemas["StationStatus"] = _with_field_docs(model_schema(wire.StationStatus))
    schemas["StateSnapshot"] = _with_field_docs(model_schema(wire.StateSnapshot))

    envelope = _with_field_docs(model_schema(wire.EventEnvelope))
    types = list(wire.EVENT_DATA)
    envelope["properties"]["type"] = {"type": "string", "enum": types}
    envelope["properties"]["data"] = {"type": "object", "description": "Per `type`, see oneOf."}
    envelope["discriminator"] = "type"
    envelope["oneOf"] = [
        {
            "title": t,
            "description": EVENT_DOC.get(t, ""),
            "properties": {"type": {"const": t}, "data": ref("schemas", event_schema_name(t))},
        }
        for t in types
    ]
    schemas["EventEnvelope"] = _ordered(envelope)
    for t, data_model in wire.EVENT_DATA.items():
        schemas[event_schema_name(t)] = model_schema(data_model)

    schemas["Command"] = _with_field_docs(model_schema(wire.Command))
    schemas["BoardCommand"] = _command_union(list(wire.COMMAND_ARGS))
    schemas["VenueCommand"] = _command_union(
        sorted(wire.VENUE_COMMANDS, key=list(wire.COMMAND_ARGS).index)
    )
    for cmd, args_model in wire.COMMAND_ARGS.items():
        schemas[args_schema_name(cmd)] = model_schema(args_model)
    schemas["Reply"] = _with_field_docs(model_schema(wire.Reply))
    # Station -> hub (issue 27); no node sends or receives it (docs/wire.md).
    schemas["Decision"] = model_schema(wire.Decision)
    # Station -> hub (issue 29): a board's game record, retained.
    schemas["GameRecord"] = model_schema(records.GameRecord)
    schemas["PlyClock"] = model_schema(records.PlyClock)
    # Hub -> station, brought in by the venue bridge: events the centre lacks (the mending).
    schemas["ResendAsk"] = model_schema(wire.ResendAsk)
    return schemas


def _command_union(cmds: list[str]) -> dict[str, Any]:
    variants = []
    for cmd in cmds:
        variant: dict[str, Any] = {
            "title": cmd,
            "description": COMMAND_DOC.get(cmd, ""),
            "properties": {"cmd": {"const": cmd}, "args": ref("schemas", args_schema_name(cmd))},
        }
        if wire.COMMAND_ARGS[cmd].model_json_schema().get("required"):
            variant["required"] = ["args"]  # absent args mean {}, which these reject
        variants.append(variant)
    return {"allOf": [ref("schemas", "Command")], "discriminator": "cmd", "oneOf": variants}
