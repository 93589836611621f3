"""Duplicate challenges: the challenge and deal of a game (games.challenge, games.challenge_deal) and the
challenged bot's result on each deal of a challenge (challenge_results), computed once offline.

Revision ID: 0003
Revises: 0002
Create Date: 2026-03-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("games", sa.Column("challenge", sa.String(32), nullable=True))
    op.add_column("games", sa.Column("challenge_deal", sa.Integer, nullable=True))
    op.create_index("games_by_challenge", "games", ["challenge", "challenge_deal"])
    op.create_table(
        "challenge_results",
        sa.Column("challenge", sa.String(32), primary_key=True),
        sa.Column("deal", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("variant", sa.String(32), nullable=False),
        sa.Column("bot", sa.String(64), nullable=False),
        sa.Column("seat", sa.Integer, nullable=False),
        sa.Column("payoff", sa.Integer, nullable=False),
        sa.Column("record", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("challenge_results")
    op.drop_index("games_by_challenge", "games")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("challenge_deal")
        batch.drop_column("challenge")
