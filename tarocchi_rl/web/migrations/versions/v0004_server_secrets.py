"""The server's secrets by name (server_secrets): the key that signs the challenges' player tokens, made once and
shared by every process serving the database (tarocchi_rl.web.challenges).

Revision ID: 0004
Revises: 0003
Create Date: 2026-03-20
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "server_secrets",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("value", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("server_secrets")
