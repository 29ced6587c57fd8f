"""The initial station schema: events, boards, players, rounds, pairings, games, alerts,
commands, meta.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "meta",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    op.create_table(
        "events",
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
    op.create_index("ix_events_game_seq", "events", ["game", "seq"])
    op.create_index("ix_events_round", "events", ["round"])
    op.create_table(
        "boards",
        sa.Column("board", sa.String(32), primary_key=True),
        sa.Column("node", sa.String(32), nullable=True),
        sa.Column("status", sa.JSON, nullable=True),
        sa.Column("state", sa.JSON, nullable=True),
        sa.Column("last_seq", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("updated_ms", sa.BigInteger, nullable=False, server_default="0"),
    )
    op.create_table(
        "players",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("club", sa.String(128), nullable=True),
        sa.Column("rating", sa.Integer, nullable=True),
    )
    op.create_table(
        "rounds",
        sa.Column("round", sa.Integer, primary_key=True),
        sa.Column("tc", sa.String(32), nullable=False),
        sa.Column("imported_ms", sa.BigInteger, nullable=False),
        sa.Column("started_ms", sa.BigInteger, nullable=True),
    )
    op.create_table(
        "pairings",
        sa.Column("round", sa.Integer, primary_key=True),
        sa.Column("board", sa.String(32), primary_key=True),
        sa.Column("red", sa.String(64), nullable=False),
        sa.Column("black", sa.String(64), nullable=False),
    )
    op.create_table(
        "games",
        sa.Column("game", sa.String(64), primary_key=True),
        sa.Column("round", sa.Integer, nullable=False),
        sa.Column("board", sa.String(32), nullable=False),
        sa.Column("red", sa.String(64), nullable=False),
        sa.Column("black", sa.String(64), nullable=False),
        sa.Column("tc", sa.String(32), nullable=False),
        sa.Column("winner", sa.String(8), nullable=True),
        sa.Column("result", sa.String(8), nullable=True),
        sa.Column("reason", sa.String(64), nullable=True),
        sa.Column("updated_ms", sa.BigInteger, nullable=False, server_default="0"),
    )
    op.create_index("ix_games_round", "games", ["round"])
    op.create_table(
        "alerts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
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
    op.create_table(
        "commands",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("txn", sa.String(64), nullable=False, unique=True),
        sa.Column("board", sa.String(32), nullable=True),
        sa.Column("cmd", sa.String(32), nullable=False),
        sa.Column("args", sa.JSON, nullable=False),
        sa.Column("user", sa.String(64), nullable=True),
        sa.Column("sent_ms", sa.BigInteger, nullable=False),
        sa.Column("replies", sa.JSON, nullable=True),
        sa.Column("outcome", sa.String(16), nullable=False),
    )


def downgrade() -> None:
    for table in (
        "commands",
        "alerts",
        "games",
        "pairings",
        "rounds",
        "players",
        "boards",
        "events",
        "meta",
    ):
        op.drop_table(table)
