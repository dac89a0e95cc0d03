import pytest
import sqlalchemy as sa

from workbench.store import open_store
from workbench.store.migrate import current_revision
from workbench.store.models import Base


def test_migrations_from_empty_to_head_create_every_model_table(database_url):
    store = open_store(database_url, upgrade=True)
    assert current_revision(store) is not None
    tables = set(sa.inspect(store.engine).get_table_names())
    assert set(Base.metadata.tables) <= tables
    store.upgrade()  # applying again is a no-op
    store.dispose()


def test_sqlite_connections_enforce_foreign_keys_and_wal(database_url):
    if not database_url.startswith("sqlite"):
        pytest.skip("SQLite connection settings")
    store = open_store(database_url, upgrade=True)
    with store.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    store.dispose()
