"""Game records (录谱, issue 29): one record per game, its moves in ICCS, and every edit.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "records",
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
    op.create_index("ix_records_round", "records", ["round"])
    op.create_table(
        "record_edits",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("game", sa.String(64), nullable=False),
        sa.Column("ply", sa.Integer, nullable=False),
        sa.Column("action", sa.String(8), nullable=False),
        sa.Column("move", sa.String(8), nullable=True),
        sa.Column("by", sa.String(64), nullable=True),
        sa.Column("ts", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_record_edits_game", "record_edits", ["game"])


def downgrade() -> None:
    op.drop_index("ix_record_edits_game", "record_edits")
    op.drop_table("record_edits")
    op.drop_index("ix_records_round", "records")
    op.drop_table("records")
