import pytest
import sqlalchemy as sa

from workbench.store import open_store
from workbench.store.migrate import current_revision
from workbench.store.models import Base


def test_migrations_from_empty_to_head_create_every_model_table(empty_database_url):
    store = open_store(empty_database_url, upgrade=True)
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


def test_the_migrations_have_one_head(store):
    from alembic.script import ScriptDirectory

    from workbench.store.migrate import alembic_config

    assert len(ScriptDirectory.from_config(alembic_config(store)).get_heads()) == 1


def test_the_models_match_the_migrations(database_url):
    """What `alembic check` verifies: autogenerate finds no difference at head."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    store = open_store(database_url, upgrade=True)
    with store.engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    store.dispose()
    assert differences == []


def test_every_migration_downgrades_to_empty_and_upgrades_again(database_url):
    from alembic import command

    from workbench.store.migrate import alembic_config

    store = open_store(database_url, upgrade=True)
    config = alembic_config(store)
    command.downgrade(config, "base")
    assert current_revision(store) is None
    assert set(sa.inspect(store.engine).get_table_names()) <= {"alembic_version"}
    command.upgrade(config, "head")
    assert set(Base.metadata.tables) <= set(sa.inspect(store.engine).get_table_names())
    store.dispose()


def test_a_store_at_head_is_opened_without_running_the_migrations(database_url, monkeypatch):
    """open_store(upgrade=True) reads the store's version and, at head, runs no migration
    environment; a store one migration behind is still migrated to head."""
    from alembic import command

    from workbench.store import migrate

    store = open_store(database_url)
    heads = migrate.head_revisions()
    assert migrate.current_revisions(store) == heads and len(heads) == 1
    previous = migrate.alembic_config(store)
    command.downgrade(previous, "-1")
    behind = migrate.current_revisions(store)
    assert behind and behind != heads
    ran = []
    monkeypatch.setattr(command, "upgrade", lambda config, revision: ran.append(revision))
    store.upgrade()
    assert ran == ["head"]  # behind: Alembic's upgrade is called
    monkeypatch.undo()
    store.upgrade()
    assert migrate.current_revisions(store) == heads
    monkeypatch.setattr(command, "upgrade", lambda config, revision: ran.append(revision))
    store.upgrade()
    open_store(database_url, upgrade=True).dispose()
    assert ran == ["head"]  # at head: not called again
    store.dispose()
