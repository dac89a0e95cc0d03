"""The campaign store: models and engine/session setup, the only place with SQL."""

from workbench.store.db import Store, default_database_url, open_store
from workbench.store.models import Base

__all__ = ["Base", "Store", "default_database_url", "open_store"]
