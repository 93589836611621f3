"""Shared tables: who played each move (moves.by) and the bot that took over a person's seat (seats.replaced_by).

Revision ID: 0002
Revises: 0001
Create Date: 2026-02-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("moves", sa.Column("by", sa.String(12), nullable=True))
    op.add_column("seats", sa.Column("replaced_by", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("replaced_by")
    with op.batch_alter_table("moves") as batch:
        batch.drop_column("by")
