"""The store's schema as SQLAlchemy Core tables; Alembic's migrations create exactly this.

A test compares this metadata with a freshly migrated database, so the two cannot drift.
"""

from __future__ import annotations

import sqlalchemy as sa

__all__ = [
    "SCHEMA_VERSION",
    "alerts",
    "boards",
    "commands",
    "events",
    "games",
    "meta",
    "metadata",
    "pairings",
    "players",
    "record_edits",
    "records",
    "rounds",
    "set_aside",
]

# The Alembic head this code knows; the store refuses a database that is further on.
SCHEMA_VERSION = "0004"

metadata = sa.MetaData()

meta = sa.Table(
    "meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

# One row per clock fact; the unique key is what makes storage exactly-once.
events = sa.Table(
    "events",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("board", sa.String(32), nullable=False),
    sa.Column("session", sa.BigInteger, nullable=False),
    sa.Column("seq", sa.BigInteger, nullable=False),
    sa.Column("node", sa.String(32), nullable=False),
    sa.Column("game", sa.String(64), nullable=True),
    sa.Column("round", sa.Integer, nullable=True),
    sa.Column("ts", sa.BigInteger, nullable=False),
    sa.Column("type", sa.String(16), nullable=False),
    sa.Column("replay", sa.Boolean, nullable=False),
    sa.Column("red_ms", sa.BigInteger, nullable=False),
    sa.Column("black_ms", sa.BigInteger, nullable=False),
    sa.Column("running", sa.String(8), nullable=True),
    sa.Column("data", sa.JSON, nullable=False),
    sa.Column("received_ms", sa.BigInteger, nullable=False),
    sa.UniqueConstraint("board", "session", "seq", name="uq_events_board_session_seq"),
)
sa.Index("ix_events_game_seq", events.c.game, events.c.seq)
sa.Index("ix_events_round", events.c.round)

boards = sa.Table(
    "boards",
    metadata,
    sa.Column("board", sa.String(32), primary_key=True),
    sa.Column("node", sa.String(32), nullable=True),
    sa.Column("status", sa.JSON, nullable=True),
    sa.Column("state", sa.JSON, nullable=True),
    # Highest seq with every seq at or below it stored (the gap detector's watermark).
    sa.Column("last_seq", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("updated_ms", sa.BigInteger, nullable=False, server_default="0"),
)

players = sa.Table(
    "players",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("club", sa.String(128), nullable=True),
    sa.Column("rating", sa.Integer, nullable=True),
    # The standings' groups (0002): space-separated tags, e.g. "u14 local"; null = none.
    sa.Column("tags", sa.String(255), nullable=True),
)

rounds = sa.Table(
    "rounds",
    metadata,
    sa.Column("round", sa.Integer, primary_key=True),
    sa.Column("tc", sa.String(32), nullable=False),
    sa.Column("imported_ms", sa.BigInteger, nullable=False),
    sa.Column("started_ms", sa.BigInteger, nullable=True),
)

pairings = sa.Table(
    "pairings",
    metadata,
    sa.Column("round", sa.Integer, primary_key=True),
    sa.Column("board", sa.String(32), primary_key=True),
    sa.Column("red", sa.String(64), nullable=False),
    sa.Column("black", sa.String(64), nullable=False),
)

games = sa.Table(
    "games",
    metadata,
    sa.Column("game", sa.String(64), primary_key=True),
    sa.Column("round", sa.Integer, nullable=False),
    sa.Column("board", sa.String(32), nullable=False),
    sa.Column("red", sa.String(64), nullable=False),
    sa.Column("black", sa.String(64), nullable=False),
    sa.Column("tc", sa.String(32), nullable=False),
    # Derived from the game's events (see results.py); null while undecided.
    sa.Column("winner", sa.String(8), nullable=True),
    sa.Column("result", sa.String(8), nullable=True),
    sa.Column("reason", sa.String(64), nullable=True),
    sa.Column("updated_ms", sa.BigInteger, nullable=False, server_default="0"),
)
sa.Index("ix_games_round", games.c.round)

alerts = sa.Table(
    "alerts",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    # What raised the alert, so a replayed event or status never raises it twice.
    sa.Column("key", sa.String(160), nullable=False, unique=True),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("board", sa.String(32), nullable=False),
    sa.Column("game", sa.String(64), nullable=True),
    sa.Column("side", sa.String(8), nullable=True),
    sa.Column("seq", sa.BigInteger, nullable=True),
    sa.Column("ts", sa.BigInteger, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("detail", sa.JSON, nullable=False),
    sa.Column("updated_ms", sa.BigInteger, nullable=False),
    sa.Column("by", sa.String(64), nullable=True),
)

commands = sa.Table(
    "commands",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("txn", sa.String(64), nullable=False, unique=True),
    sa.Column("board", sa.String(32), nullable=True),  # null: the venue topic
    sa.Column("cmd", sa.String(32), nullable=False),
    sa.Column("args", sa.JSON, nullable=False),
    sa.Column("user", sa.String(64), nullable=True),
    sa.Column("sent_ms", sa.BigInteger, nullable=False),
    sa.Column("replies", sa.JSON, nullable=True),
    sa.Column("outcome", sa.String(16), nullable=False),
)

# What the writer could not store (a row the database refuses): kept with the reason, as text
# (the item may hold exactly what the database refused), for the arbiter (0003).
set_aside = sa.Table(
    "set_aside",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("board", sa.String(32), nullable=True),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("item", sa.Text, nullable=False),
    sa.Column("set_aside_ms", sa.BigInteger, nullable=False),
)

# 录谱 (0004): one record per game, its moves in ICCS (each replayed legal by the station before it
# is stored, clock_service.xiangqi), ``ply`` = len(moves) for a compare-and-set write; the chief's
# consent to a later or no record (Meishan); every add / undo in ``record_edits``.
records = sa.Table(
    "records",
    metadata,
    sa.Column("game", sa.String(64), primary_key=True),
    sa.Column("board", sa.String(32), nullable=False),
    sa.Column("round", sa.Integer, nullable=False),
    sa.Column("start_fen", sa.String(128), nullable=False),
    sa.Column("moves", sa.JSON, nullable=False),
    sa.Column("ply", sa.Integer, nullable=False),
    sa.Column("created_ms", sa.BigInteger, nullable=False),
    sa.Column("updated_ms", sa.BigInteger, nullable=False),
    sa.Column("updated_by", sa.String(64), nullable=True),
    sa.Column("consent_by", sa.String(64), nullable=True),
    sa.Column("consent_ms", sa.BigInteger, nullable=True),
)
sa.Index("ix_records_round", records.c.round)

record_edits = sa.Table(
    "record_edits",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("game", sa.String(64), nullable=False),
    sa.Column("ply", sa.Integer, nullable=False),  # the record's plies after the edit
    sa.Column("action", sa.String(8), nullable=False),  # add | undo | consent | revoke
    sa.Column("move", sa.String(8), nullable=True),  # ICCS: the move added or taken back
    sa.Column("by", sa.String(64), nullable=True),
    sa.Column("ts", sa.BigInteger, nullable=False),
)
sa.Index("ix_record_edits_game", record_edits.c.game)
