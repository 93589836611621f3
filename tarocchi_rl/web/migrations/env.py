"""Alembic's environment for the web games' database (:mod:`tarocchi_rl.web.store`).

:meth:`tarocchi_rl.web.store.Store.upgrade` runs the migrations on its own connection
(``config.attributes["connection"]``); the ``alembic`` command (``alembic -x url=sqlite:///games.db ...`` with a
config whose ``script_location`` is this folder) opens the URL it is given."""

import sqlalchemy as sa
from alembic import context

config = context.config


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option("sqlalchemy.url")
    if not url:
        raise SystemExit("give the database: alembic -x url=sqlite:///games.db ...")
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        context.configure(connection=conn)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


run()
