"""Rows the writer could not store, set aside with the reason (issue 12: the writer never loops).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "set_aside",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("board", sa.String(32), nullable=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("item", sa.Text, nullable=False),
        sa.Column("set_aside_ms", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("set_aside")
