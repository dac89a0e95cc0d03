"""What the web and the CLI hold of the store (`services.store_handle`)."""

from __future__ import annotations

from click.testing import CliRunner

from workbench.cli import main
from workbench.services.store_handle import open_store, shown_url


def test_a_shown_url_hides_the_password() -> None:
    store = open_store("postgresql+psycopg://judge:s3cret@db.example:5432/campaigns")
    assert shown_url(store) == "postgresql+psycopg://judge:***@db.example:5432/campaigns"
    store.dispose()


def test_db_upgrade_names_the_store(database_url: str) -> None:
    result = CliRunner().invoke(main, ["--db", database_url, "db", "upgrade"])
    assert result.exit_code == 0, result.output
    shown = shown_url(store := open_store(database_url))
    store.dispose()
    assert result.output == f"store at {shown} is up to date\n"
