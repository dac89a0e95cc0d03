"""The campaign store: SQLAlchemy 2 typed models.

The schema is created and changed only by the Alembic migrations in `migrations/`.
Identifiers that come from files (topic ids, document numbers, run tags) are strings and are
kept exactly as given. A judgement is keyed by (campaign, topic, docno, assessor), never by a
pool position; the judgement table is an append-only log and the current value of a key is its
latest row (highest id).
"""

from workbench.store.models.accounts import LoginFailure, RateBucket, User, username_key
from workbench.store.models.base import VIEWS, Base, utcnow
from workbench.store.models.campaigns import Campaign, CampaignVersion, Grade, Topic
from workbench.store.models.documents import (
    Document,
    DocumentImport,
    DocumentReplacement,
    DocumentRow,
)
from workbench.store.models.judgements import (
    FinalLabel,
    Judgement,
    PreferenceJudgement,
    QrelsEntry,
    QrelsSet,
)
from workbench.store.models.machine import (
    MachineJob,
    MachineJudge,
    MachineJudgement,
    MachineTemplate,
)
from workbench.store.models.pools import (
    AdaptiveTopic,
    Assignment,
    Pool,
    PoolEntry,
    PoolRun,
    PoolStatistics,
    RoutingSlot,
)
from workbench.store.models.quality import (
    CalibrationAnswer,
    CalibrationItem,
    GoldDocument,
    QualitySettings,
)
from workbench.store.models.query_logs import QueryLog, QueryLogImpression
from workbench.store.models.report_jobs import ReportJob, ReportResult
from workbench.store.models.runs import Run, RunEfficiency, RunTopic, RunTopicRow, RunVersion

__all__ = [
    "VIEWS",
    "AdaptiveTopic",
    "Assignment",
    "Base",
    "CalibrationAnswer",
    "CalibrationItem",
    "Campaign",
    "CampaignVersion",
    "Document",
    "DocumentImport",
    "DocumentReplacement",
    "DocumentRow",
    "FinalLabel",
    "GoldDocument",
    "Grade",
    "Judgement",
    "LoginFailure",
    "MachineJob",
    "MachineJudge",
    "MachineJudgement",
    "MachineTemplate",
    "Pool",
    "PoolEntry",
    "PoolRun",
    "PoolStatistics",
    "PreferenceJudgement",
    "QrelsEntry",
    "QrelsSet",
    "QualitySettings",
    "QueryLog",
    "QueryLogImpression",
    "RateBucket",
    "ReportJob",
    "ReportResult",
    "RoutingSlot",
    "Run",
    "RunEfficiency",
    "RunTopic",
    "RunTopicRow",
    "RunVersion",
    "Topic",
    "User",
    "username_key",
    "utcnow",
]
