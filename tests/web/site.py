"""A whole site to look at: the demo campaign judged in part, with an adaptive pool, a query
log, a campaign judged by lists of passages and one judged by pairs, and every page of it.

`build_site` fills a store once (the phone-width and accessibility tests walk every page of
it); `pages` lists each page as (name, path, user), and `PAGE_ENDPOINTS` the endpoints they
cover, which a test compares with the app's routes so that no page is forgotten.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select

from workbench import demo
from workbench.services import adaptive_pools, assignments, campaigns, querylog_import
from workbench.services import users as user_service
from workbench.services.adjudication import MergeSpec, apply_rule
from workbench.store.db import Store
from workbench.store.models import Run, Topic
from workbench.trec import read_run

PASSWORDS = {name: password for name, password, _ in demo.logins()}


@dataclass(frozen=True)
class Site:
    demo: int  # the demo campaign's id
    adaptive: int  # its adaptive pool's number
    log: str  # its query log's name
    passages: int  # a campaign judged by lists of passages (evidence on)
    pairs: int  # a campaign judged by pairs
    judge: int  # alice's first demo assignment (the document page, evidence on)
    judge_passages: int
    judge_pairs: int
    run: int  # a run's id (its delete page)
    docno: str
    run_tag: str  # the same run's tag (its page)


def _query_log(folder: Path, topics: dict[str, str], run: dict[str, list[str]]) -> Path:
    """Impressions of each demo topic's title by six users, the run's top 5 shown and the
    second result clicked."""
    lines = []
    for n, (qid, title) in enumerate(sorted(topics.items())):
        shown = run[qid][:5]
        for user in range(6):
            lines.append(
                {
                    "session": f"s{n}-{user}",
                    "user": f"u{user}",
                    "query": title,
                    "time": 1_700_000_000 + 100 * n + user,
                    "results": [{"docno": d, "rank": r} for r, d in enumerate(shown, 1)],
                    "clicks": [{"docno": shown[1], "time": 1_700_000_010 + 100 * n + user}],
                }
            )
    path = folder / "clicks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def build_site(store: Store, folder: Path) -> Site:
    folder.mkdir(parents=True, exist_ok=True)
    demo.create_demo(store)
    demo.judge_first_topics(store)
    files = demo.write_files(folder)
    run = read_run(files["runs"][0]).to_dict()
    ranked = {qid: sorted(docs, key=lambda d: -docs[d]) for qid, docs in run.items()}
    with store.session() as session:
        campaign = campaigns.get_campaign(session, demo.CAMPAIGN)
        campaigns.set_judging(session, campaign, evidence=True)
        apply_rule(session, campaign, MergeSpec("majority"))
        adaptive = adaptive_pools.build_adaptive_pool(
            session, campaign, method="mm", budget=5, name="bandit"
        )
        titles = {t.qid: t.title for t in _topics(session, campaign.id)}
        summary = querylog_import.import_query_log(
            session,
            campaign,
            _query_log(folder, titles, ranked),
            key=b"k" * 32,
            min_users=2,
            name="clicks",
        )
        alice = user_service.get_user(session, "alice")
        judge = assignments.assignments_for_user(session, alice.id)[0].id
        demo_id, adaptive_number = campaign.id, adaptive.number
        run_id, run_tag = session.execute(
            select(Run.id, Run.tag).where(Run.campaign_id == campaign.id).limit(1)
        ).one()
    made = demo.create_mode_demos(store)
    passages, pairs = made["demo-passages"], made["demo-pairs"]
    with store.read_session() as session:
        alice_id = user_service.get_user(session, "alice").id
        mine = {
            a.campaign_id: a.id
            for a in reversed(assignments.assignments_for_user(session, alice_id))
        }
    return Site(
        demo_id,
        adaptive_number,
        summary.name,
        passages,
        pairs,
        judge,
        mine[passages],
        mine[pairs],
        run_id,
        ranked[sorted(ranked)[0]][0],
        run_tag,
    )


def _topics(session, campaign_id: int) -> list[Topic]:  # type: ignore[no-untyped-def]
    return list(session.scalars(select(Topic).where(Topic.campaign_id == campaign_id)))


def pages(site: Site) -> list[tuple[str, str, str]]:
    """(endpoint, path, user) of every page: the admin's, then the assessor's."""
    c, a = site.demo, "admin"
    return [
        ("admin.campaigns", "/admin/", a),
        ("admin.campaign", f"/admin/campaigns/{c}", a),
        ("admin.campaign", f"/admin/campaigns/{site.pairs}", a),
        ("admin.assignments", f"/admin/campaigns/{c}/assignments", a),
        ("admin.campaign_progress", f"/admin/campaigns/{c}/progress", a),
        ("admin.campaign_progress", f"/admin/campaigns/{site.pairs}/progress", a),
        ("admin.users", "/admin/users", a),
        ("admin.confirm_delete", f"/admin/delete/run/{site.run}", a),
        ("adaptive.status", f"/admin/campaigns/{c}/pools/{site.adaptive}/adaptive", a),
        ("browse.topics", f"/admin/campaigns/{c}/topics", a),
        ("browse.documents", f"/admin/campaigns/{c}/documents?q=the", a),
        ("browse.document", f"/admin/campaigns/{c}/documents/{site.docno}", a),
        ("browse.runs", f"/admin/campaigns/{c}/runs", a),
        ("browse.run", f"/admin/campaigns/{c}/runs/{site.run_tag}", a),
        ("browse.judgements", f"/admin/campaigns/{c}/judgements", a),
        ("reports.index", "/reports/", a),
        ("reports.agreement", f"/reports/{c}/agreement", a),
        ("reports.adjudication", f"/reports/{c}/adjudication?show=all", a),
        ("reports.evaluation", f"/reports/{c}/evaluation?qrels=demo-reference", a),
        ("querylogs.index", f"/querylogs/{c}", a),
        ("querylogs.report", f"/querylogs/{c}/report?name={site.log}", a),
        ("querylogs.agreement", f"/querylogs/{c}/agreement?name={site.log}&qrels=final", a),
        ("auth.change_password", "/account/password", a),
        ("admin.campaign", "/admin/campaigns/99999", a),  # the error page (404)
        ("assess.topics", "/assess/", "alice"),
        ("assess.judge", f"/assess/{site.judge}", "alice"),
        ("assess.judge", f"/assess/{site.judge_passages}", "alice"),
        ("assess.judge", f"/assess/{site.judge_pairs}", "alice"),
    ]


ADMIN_BLUEPRINTS = ("admin", "adaptive", "browse", "reports", "querylogs", "uploads")
NOT_PAGES = {
    "admin.download": "a file download",
    "reports.agreement_download": "a file download",
    "reports.evaluation_download": "a file download",
    "uploads.task": "an upload's progress while its import runs (no table, one card)",
}
"""GET routes of the admin blueprints that are not pages to look at, and why."""
