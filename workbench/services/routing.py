"""Assignment policies applied to pools (`workbench.routing` plans, `services.slots` places).

- `apply_policy`: route a pool by a registered policy. The policy and its parameters are
  recorded with the pool (`pool.params["routing"]`, with the seed), as pooling choices are;
  applying it again routes only what is missing (documents added by an extension, a judge
  more). A pool keeps one policy while it has active assignments.
- `ask_for_work` / `top_up`: under the adaptive policy, a document whose judges disagree gets
  another judge: the first assessor who asks for work (the judging page asks when it opens
  and when its queue is done) takes that place. One write transaction per pool, which first
  bumps the pool's revision (so concurrent claims on PostgreSQL wait for each other's
  commit), and the unique places of `RoutingSlot` guard the rest: two requests never take
  the same place, an assessor never holds a document twice, a document never gets more than
  `max_judges`.
- An assessor's unjudged remainder moves to others in `services.remainder`.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from workbench import routing
from workbench.services import adaptive_pools, assignments, scope, slots
from workbench.services import users as user_service
from workbench.services.archive import refuse_if_pool_archived
from workbench.services.current_judgements import current_judgements
from workbench.services.errors import ServiceError
from workbench.services.pools import PoolInfo, pool_info, qid_key
from workbench.services.topics import listed
from workbench.store.db import Store
from workbench.store.models import Assignment, Campaign, Pool, PoolEntry, RoutingSlot, User

log = logging.getLogger(__name__)
WORK_BATCH = 5  # extra places one request for work takes at most


def recorded_policy(pool: Pool) -> dict[str, Any] | None:
    """The policy recorded with the pool (None: never routed by a policy)."""
    recorded = (pool.params or {}).get("routing")
    return dict(recorded) if recorded else None


def pool_policy(session: Session, pool_id: int) -> tuple[str | None, str]:
    """(policy name, as people read it) recorded with the pool; (None, '') if none."""
    pool = session.get(Pool, pool_id)
    recorded = recorded_policy(pool) if pool is not None else None
    if not recorded:
        return None, ""
    return str(recorded.get("policy")), routing.describe(recorded)


@dataclass(frozen=True)
class RoutingResult:
    """What applying a policy did: the pool, the policy as recorded and read, assignments
    created or reactivated, documents routed, each assessor's documents in the pool after,
    and documents left with fewer judges than the policy wants."""

    pool: PoolInfo
    policy: str
    described: str
    assignments: int
    documents: int
    load: dict[str, int]
    short: int
    notes: tuple[str, ...]


@dataclass(frozen=True)
class PoolState:
    """What a pool has now: its documents per topic, and who holds which."""

    documents: dict[str, list[str]]
    holders: dict[tuple[str, str], set[str]]
    roles: dict[tuple[str, str], str]
    load: dict[str, int]
    judged: dict[tuple[str, str], set[str]]
    names: dict[int, str]


def pool_state(session: Session, pool: Pool) -> PoolState:
    """The pool's sampled documents and their holders (whole-topic assignments hold every
    document of their topic), the role of each assessor on each topic, loads, and who has
    judged what (by username)."""
    names = dict(session.execute(select(User.id, User.username)).all())
    documents: dict[str, list[str]] = defaultdict(list)
    for qid, docno in session.execute(
        select(PoolEntry.qid, PoolEntry.docno)
        .where(PoolEntry.pool_id == pool.id, PoolEntry.sampled.is_(True))
        .order_by(PoolEntry.qid, PoolEntry.docno)
    ):
        documents[qid].append(docno)
    active = assignments.list_assignments(session, pool.campaign_id, pool_id=pool.id)
    routed = slots.slot_documents(session, active)
    slot_roles = {
        (qid, names[user_id]): role
        for qid, user_id, role in session.execute(
            select(RoutingSlot.qid, RoutingSlot.user_id, RoutingSlot.role).where(
                RoutingSlot.pool_id == pool.id
            )
        )
    }
    holders: dict[tuple[str, str], set[str]] = defaultdict(set)
    roles: dict[tuple[str, str], str] = {}
    load: dict[str, int] = defaultdict(int)
    for a in active:
        name = names[a.user_id]
        held = routed.get(a.id)
        mine = documents.get(a.qid, []) if held is None else sorted(held)
        for docno in mine:
            holders[a.qid, docno].add(name)
        load[name] += len(mine)
        roles[a.qid, name] = "judge" if held is None else slot_roles.get((a.qid, name), "judge")
    judged: dict[tuple[str, str], set[str]] = defaultdict(set)
    for row in current_judgements(session, pool.campaign_id):
        judged[row.qid, row.docno].add(names[row.user_id])
    return PoolState(dict(documents), dict(holders), roles, dict(load), dict(judged), names)


def _situation(state: PoolState, topics: Sequence[str] | None) -> routing.Situation:
    chosen = state.documents if topics is None else {q: state.documents[q] for q in topics}
    return routing.Situation(
        documents=chosen,
        holders={k: frozenset(v) for k, v in state.holders.items()},
        barred={k: frozenset(v) for k, v in state.judged.items()},
        roles=state.roles,
        load=state.load,
    )


def _parsed(policy: str, values: Mapping[str, Any]) -> tuple[routing.Policy, Any]:
    try:
        chosen = routing.get_policy(policy)
        return chosen, chosen.parse(values)
    except routing.RoutingError as error:
        raise ServiceError(str(error)) from None


def apply_policy(
    session: Session,
    pool: Pool,
    policy: str,
    values: Mapping[str, Any],
    *,
    assessors: Sequence[User],
    order: str = "random",
    topics: Sequence[str] | None = None,
    seed: int | None = None,
) -> RoutingResult:
    """Route `pool` (its `topics`, default all) by `policy` with parameters from `values`
    over the active users among `assessors`, and record the policy with the pool."""
    chosen, params = _parsed(policy, values)
    if order not in assignments.ORDERS:
        raise ServiceError(
            f"unknown order {order!r}: expected one of {', '.join(assignments.ORDERS)}"
        )
    refuse_if_pool_archived(session, pool)
    recorded = recorded_policy(pool)
    active = assignments.list_assignments(session, pool.campaign_id, pool_id=pool.id)
    current = (recorded or {}).get("policy", routing.DEFAULT_POLICY)
    if active and current != policy:
        what = routing.describe(recorded) if recorded else "whole topics (assigned before)"
        raise ServiceError(
            f"pool {pool.number} is assigned by {what}: withdraw its {len(active)} active "
            f"assignment(s) before routing it by {policy}"
        )
    if policy != routing.DEFAULT_POLICY and adaptive_pools.settings_of(pool) is not None:
        raise ServiceError(
            f"pool {pool.number} is an adaptive pool, whose strategy chooses each topic's "
            "documents: assign its topics whole (policy topics)"
        )
    eligible = [u for u in assessors if u.active]
    same = recorded is not None and recorded.get("policy") == policy
    seed = int(recorded["seed"]) if same and recorded else pool.seed if seed is None else seed
    notes: list[str] = []
    if same and recorded:
        before = chosen.parse(recorded)
        if before != params:
            notes.append(f"parameters changed from {before.describe()} to {params.describe()}")
    if policy == routing.DEFAULT_POLICY:
        made = assignments.auto_assign(
            session,
            pool,
            judges_per_topic=params.judges_per_topic,
            assessors=eligible,
            order=order,
            topics=topics,
        )
        sizes = assignments.topic_sizes(session, pool)
        count, routed = len(made), sum(sizes.get(a.qid, 0) for a in made)
        short: Mapping[tuple[str, str], int] = {}
    else:
        count, routed, short = _route(session, pool, chosen, params, eligible, order, topics, seed)
    enlisted = set((recorded or {}).get("assessors", [])) if same else set()
    record = chosen.record(params, seed)
    record["assessors"] = sorted(enlisted | {u.username for u in eligible})
    pool.params = {**pool.params, "routing": record}
    slots.touch(session, pool.id)
    session.flush()
    if short:
        notes.append(
            f"{len(short)} document(s) have fewer judges than the policy wants: too few "
            "assessors may take them (they judge them already, or there are too few)"
        )
    load = pool_state(session, pool).load
    return RoutingResult(
        pool_info(pool),
        policy,
        routing.describe(pool.params["routing"]),
        count,
        routed,
        {name: load[name] for name in sorted(load)},
        len(short),
        tuple(notes),
    )


def route_pool(
    session: Session,
    campaign: Campaign,
    pool_number: int | None,
    policy: str,
    values: Mapping[str, Any],
    *,
    assessor_names: Sequence[str] | None = None,
    order: str = "random",
    topics: Sequence[str] | None = None,
    seed: int | None = None,
) -> RoutingResult:
    """`apply_policy` to the campaign's pool numbered `pool_number` (default: the scope's
    assignment pool, `scope.default_assignment_pool`) over the assessors named (default every
    assessor): what the form, the CLI and the API do."""
    pool = scope.pool_to_assign(session, campaign, pool_number)
    assessors = (
        [user_service.get_user(session, name) for name in assessor_names]
        if assessor_names
        else user_service.list_users(session, role="assessor")
    )
    return apply_policy(
        session, pool, policy, values, assessors=assessors, order=order, topics=topics, seed=seed
    )


def _route(
    session: Session,
    pool: Pool,
    chosen: routing.Policy,
    params: Any,
    eligible: Sequence[User],
    order: str,
    topics: Sequence[str] | None,
    seed: int,
) -> tuple[int, int, Mapping[tuple[str, str], int]]:
    """Apply a document-level policy: (assignments made or extended, documents routed,
    documents short of judges)."""
    state = pool_state(session, pool)
    if not state.documents:
        raise ServiceError(f"pool {pool.number} has no documents to judge")
    if topics is not None:
        outside = [qid for qid in topics if qid not in state.documents]
        if outside or not topics:
            raise ServiceError(
                f"pool {pool.number} has no documents to judge for topic(s) {listed(outside)}"
                if outside
                else "no topics chosen"
            )
    by_name = {u.username: u for u in eligible}
    try:
        plan = chosen.plan(params, _situation(state, topics), list(by_name), seed)
    except routing.RoutingError as error:
        raise ServiceError(str(error)) from None
    touched, documents = set(), 0
    for route in plan.routes:
        assignment = assignments.assign(
            session, pool, route.qid, by_name[route.assessor], order=order
        )
        documents += slots.add(session, assignment, route.docnos, route.role)
        touched.add(assignment.id)
    return len(touched), documents, plan.short


# ---------------------------------------------------------------- extra judges


@dataclass(frozen=True)
class Need:
    """A document of an adaptive-routed pool that wants another judge."""

    pool_id: int
    qid: str
    docno: str
    holders: frozenset[int]
    judged_by: frozenset[int]  # every assessor with a judgement of it (none may take it)


def needs(session: Session, pool: Pool, qid: str | None = None) -> list[Need]:
    """The documents of the pool (of one topic) that want another judge now: every judge
    holding it has judged it, their grades differ by more than the policy's distance, and
    it has fewer than max_judges (`routing.needs_another_judge`)."""
    recorded = recorded_policy(pool)
    if not recorded or recorded.get("policy") != "adaptive":
        return []
    params = routing.get_policy("adaptive").parse(recorded)
    query = (
        select(RoutingSlot.qid, RoutingSlot.docno, RoutingSlot.user_id)
        .join(Assignment, Assignment.id == RoutingSlot.assignment_id)
        .where(RoutingSlot.pool_id == pool.id, Assignment.active.is_(True))
    )
    if qid is not None:
        query = query.where(RoutingSlot.qid == qid)
    holders: dict[tuple[str, str], set[int]] = defaultdict(set)
    for q, docno, user_id in session.execute(query):
        holders[q, docno].add(user_id)
    if not holders:
        return []
    given: dict[tuple[str, str, int], int | None] = {
        (j.qid, j.docno, j.user_id): j.grade
        for j in current_judgements(session, pool.campaign_id, qid=qid)
    }
    found = []
    for (q, docno), users in sorted(holders.items(), key=lambda kv: (qid_key(kv[0][0]), kv[0][1])):
        if any((q, docno, u) not in given for u in users):
            continue
        grades = [g for u in users if (g := given[q, docno, u]) is not None]
        if routing.needs_another_judge(grades, len(users), params):
            judged_by = frozenset(u for (gq, gd, u) in given if (gq, gd) == (q, docno))
            found.append(Need(pool.id, q, docno, frozenset(users), judged_by))
    return found


@dataclass(frozen=True)
class Claimed:
    """Places an assessor took: (pool id, qid, docno) each."""

    places: tuple[tuple[int, str, str], ...]

    def __len__(self) -> int:
        return len(self.places)


def _routed_pools(session: Session, campaign_ids: Sequence[int]) -> list[Pool]:
    """The campaigns' pools routed adaptively (archived campaigns and pools left out)."""
    found = session.scalars(
        select(Pool)
        .join(Campaign, Campaign.id == Pool.campaign_id)
        .where(
            Pool.campaign_id.in_(campaign_ids),
            Pool.archived_at.is_(None),
            Campaign.archived_at.is_(None),
        )
    )
    return [p for p in found if (recorded_policy(p) or {}).get("policy") == "adaptive"]


def ask_for_work(
    store: Store,
    user_id: int,
    *,
    campaign_id: int | None = None,
    assignment_id: int | None = None,
    limit: int = WORK_BATCH,
) -> Claimed:
    """Give the assessor up to `limit` places that documents of adaptive-routed pools want:
    of one assignment's topic (`assignment_id`), or of the pools (of one campaign) routed
    over them (the assessors a policy was applied over are recorded with it) or of a campaign
    in which they hold an active assignment; their own topics first. A read finds the wants;
    only a claim writes (see the module docstring)."""
    with store.read_session() as session:
        user = session.get(User, user_id)
        if user is None or not user.active:
            return Claimed(())
        targets = _work_targets(session, user, campaign_id, assignment_id)
        wanted: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for pool, qid in targets:
            for need in needs(session, pool, qid):
                if user_id not in need.holders | need.judged_by:
                    wanted[pool.id].append((need.qid, need.docno))
    places: list[tuple[int, str, str]] = []
    for pool_id, documents in wanted.items():
        if len(places) >= limit:
            break
        unique = list(dict.fromkeys(documents))
        places += _claim(store, pool_id, user_id, unique, limit - len(places))
    return Claimed(tuple(places))


def _work_targets(
    session: Session, user: User, campaign_id: int | None, assignment_id: int | None
) -> list[tuple[Pool, str | None]]:
    """(pool, topic or None for all) pairs to look for wanted places in, own topics first."""
    mine = assignments.assignments_for_user(session, user.id)
    if assignment_id is not None:
        own = [a for a in mine if a.id == assignment_id]
        pools = _routed_pools(session, [a.campaign_id for a in own])
        return [(p, a.qid) for a in own for p in pools if p.id == a.pool_id]
    if campaign_id is not None:
        campaigns = [campaign_id]
    else:
        campaigns = sorted(set(session.scalars(select(Pool.campaign_id))))
    pools = [
        p
        for p in _routed_pools(session, campaigns)
        if user.username in (recorded_policy(p) or {}).get("assessors", [])
        or any(a.campaign_id == p.campaign_id for a in mine)
    ]
    held = {(a.pool_id, a.qid) for a in mine}
    first = [(p, qid) for p in pools for pid, qid in sorted(held) if pid == p.id]
    return [*first, *((p, None) for p in pools)]


def _claim(
    store: Store, pool_id: int, user_id: int, documents: Sequence[tuple[str, str]], limit: int
) -> list[tuple[int, str, str]]:
    """Take up to `limit` of `documents` for the user in one transaction: the pool's revision
    is bumped first (PostgreSQL: concurrent claims on the pool wait here for each other's
    commit), each want is read again, and each place is inserted under a savepoint (a unique
    place taken meanwhile is skipped)."""
    taken: list[tuple[int, str, str]] = []
    with store.session() as session:
        slots.touch(session, pool_id)
        pool = session.get(Pool, pool_id)
        user = session.get(User, user_id)
        if pool is None or user is None or pool.archived_at is not None:
            return []
        wanted = {(n.qid, n.docno): n for n in needs(session, pool)}
        for qid, docno in documents:
            need = wanted.get((qid, docno))
            if len(taken) >= limit or need is None or user_id in need.holders | need.judged_by:
                continue
            try:
                with session.begin_nested():
                    assignment = _assignment_for(session, pool, qid, user)
                    slots.add(session, assignment, [docno], "extra")
            except IntegrityError:
                log.info("place on %s/%s taken meanwhile", qid, docno)
                continue
            taken.append((pool_id, qid, docno))
    return taken


def _assignment_for(session: Session, pool: Pool, qid: str, user: User) -> Assignment:
    """The user's active assignment on the pool's topic, made (or reactivated) when there is
    none, in the order of the topic's other assignments."""
    existing = session.scalar(
        select(Assignment).where(
            Assignment.pool_id == pool.id, Assignment.qid == qid, Assignment.user_id == user.id
        )
    )
    if existing is not None and existing.active:
        return existing
    other = session.scalar(
        select(Assignment.order).where(Assignment.pool_id == pool.id, Assignment.qid == qid)
    )
    return assignments.assign(session, pool, qid, user, order=other or "random")


def top_up(store: Store, assignment_id: int, user_id: int) -> Claimed:
    """The judging page's request for work: places wanted on its own topic (usually none;
    one read when the pool is not routed adaptively)."""
    with store.read_session() as session:
        assignment = session.get(Assignment, assignment_id)
        if (
            assignment is None
            or assignment.user_id != user_id
            or not grows(session, assignment.pool_id)
        ):
            return Claimed(())
    return ask_for_work(store, user_id, assignment_id=assignment_id)


def grows(session: Session, pool_id: int) -> bool:
    """Whether the pool's queues may grow while judging (adaptive routing)."""
    pool = session.get(Pool, pool_id)
    return pool is not None and (recorded_policy(pool) or {}).get("policy") == "adaptive"


def policy_fields() -> list[dict[str, Any]]:
    """The registry as the API describes it: each policy with its parameters."""
    return [
        {
            "name": p.name,
            "help": p.help,
            "parameters": [
                {
                    "name": f.name,
                    "type": str(f.type),
                    "help": f.metadata["help"],
                    "default": f.default,
                    "minimum": f.metadata.get("minimum"),
                    "maximum": f.metadata.get("maximum"),
                }
                for f in p.fields()
            ],
        }
        for p in routing.POLICIES.values()
    ]
