"""The services behind the admin and assessor pages return frozen dataclasses that the views
render after the store session closed (an ORM object read there would raise
DetachedInstanceError, as the judging page's `campaign.grades` once did)."""

from __future__ import annotations

import dataclasses

import pytest
from flask import Flask
from sqlalchemy import event

from tests.web.conftest import World, get_store_of
from workbench.services import (
    adjudication,
    adjudication_queue,
    archive,
    assessment,
    campaign_pages,
    campaigns,
    judging,
    judging_figures,
    pools,
    progress,
)
from workbench.services import users as user_service
from workbench.services.assignments import assign, list_assignments
from workbench.services.errors import NotFound
from workbench.store.models import Assignment


def test_my_topics_lists_the_assessors_assignments_with_titles_and_progress(
    app: Flask, as_user, world: World
) -> None:
    alice = as_user("alice")
    assert alice.post(
        f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements",
        json={"docno": "D1", "grade": 2, "client_id": "mine-1"},
    ).status_code in (200, 201)
    with get_store_of(app).read_session() as session:
        rows = assessment.my_topics(session, world.users["alice"])
    assert [(r.id, r.campaign, r.qid, r.title) for r in rows] == [
        (world.assignment["alice", "T1"], "c1", "T1", "solar panel recycling"),
        (world.assignment["alice", "T2"], "c1", "T2", "honeybee colony collapse"),
    ]
    assert [(r.progress.judged, r.progress.total) for r in rows] == [(1, 6), (0, 6)]


def test_an_assessors_progress_reads_their_own_judgements_only(
    app: Flask, as_user, world: World
) -> None:
    """My topics' progress equals the admin's figures for the same assignments, and every
    read of the judgement log it makes is bound to the assessor (at TREC size, reading the
    campaign's 2 million keys made each judging page take 5.6 s)."""
    for name, docno in (("alice", "D1"), ("bob", "D1"), ("bob", "D2")):
        assert as_user(name).post(
            f"/api/v1/assignments/{world.assignment[name, 'T1']}/judgements",
            json={"docno": docno, "grade": 1, "client_id": f"{name}-{docno}"},
        ).status_code in (200, 201)
    store = get_store_of(app)
    reads: list[list[object]] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        if "FROM judgements" in statement:
            values = parameters.values() if isinstance(parameters, dict) else parameters
            reads.append(list(values))

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        with store.read_session() as session:
            mine = assessment.my_topics(session, world.users["alice"])
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    assert reads and all(world.users["alice"] in values for values in reads)
    with store.read_session() as session:
        everyone = progress.assignment_progress(
            session, list_assignments(session, session.get_one(Assignment, mine[0].id).campaign_id)
        )
    assert [(r.progress.judged, r.progress.total) for r in mine] == [(1, 6), (0, 6)]
    assert [(r.progress.judged, r.progress.total, r.progress.time_ms) for r in mine] == [
        (everyone[r.id].judged, everyone[r.id].total, everyone[r.id].time_ms) for r in mine
    ]


def test_the_judging_page_is_read_whole(app: Flask, as_user, world: World) -> None:
    first = world.assignment["alice", "T1"]
    with get_store_of(app).read_session() as session:
        page = assessment.judging_page(session, first, world.users["alice"])
    # read after the session closed: nothing here is a store object
    assert page.assignment == assessment.AssignedTopic(first, "T1", "solar panel recycling")
    assert page.campaign.name == "c1"
    assert [(g.value, g.label, g.key) for g in page.campaign.grades] == [
        (0, "Not relevant", "0"),
        (1, "Relevant", "1"),
        (2, "Highly relevant", "2"),
    ]
    assert page.topic is not None and page.topic.description == "How are panels recycled?"
    assert page.total == 6 and not page.adaptive and page.first_document
    assert page.title_stems["recycling"] == "recycl"
    with pytest.raises(dataclasses.FrozenInstanceError):
        page.total = 0  # type: ignore[misc]

    assert as_user("alice").post(
        f"/api/v1/assignments/{first}/judgements",
        json={"docno": "D1", "grade": 1, "client_id": "page-1"},
    ).status_code in (200, 201)
    with get_store_of(app).read_session() as session:
        assert not assessment.judging_page(session, first, world.users["alice"]).first_document
        with pytest.raises(NotFound):  # bob's assignment is not alice's
            assessment.judging_page(session, world.assignment["bob", "T1"], world.users["alice"])


def test_the_campaign_page_holds_counts_runs_topics_and_the_pool_shown(
    app: Flask, world: World
) -> None:
    with get_store_of(app).read_session() as session:
        page = campaign_pages.campaign_page(session, world.campaign_id, None)
        figures = judging_figures.campaign_figures(session, world.campaign_id, None)
        with pytest.raises(NotFound):
            campaign_pages.campaign_page(session, world.campaign_id, 9)
    assert page.counts == {"topics": 2, "runs": 2, "qrels sets": 0, "pools": 1}
    assert [(r.tag, r.line_count, r.contributes) for r in page.runs] == [
        ("runA", 12, True),
        ("runB", 12, True),
    ]
    assert [t.qid for t in page.topics] == ["T1", "T2"]
    assert page.pool is not None and page.pool.id == world.pool_id and page.pool.number == 1
    assert [row.pool.number for row in page.pool_rows] == [1]
    assert page.stats is not None and page.stats["runs"] == ["runA", "runB"]
    # what takes a pass over the pool entries or the documents is the figures' (a report job)
    assert figures.documents == 8 and figures.pool_documents == {world.pool_id: 12}
    assert figures.pool_id == world.pool_id and figures.sizes is not None
    assert figures.sizes["size"] == 12 and figures.sizes["sampled"] == 12
    assert figures.without_text == () and figures.assessors == ()
    assert figures.qrels_status.startswith("The qrels are incomplete: ")


def test_the_assignments_page_names_assessors_and_counts_progress(app: Flask, world: World) -> None:
    with get_store_of(app).read_session() as session:
        page = campaign_pages.assignments_page(session, world.campaign_id, 1)
        done = judging_figures.assignment_figures(session, world.campaign_id).done
    assert page.pool is not None and page.numbers == {world.pool_id: 1}
    assert page.sizes == {"T1": 6, "T2": 6}
    assert sorted((page.names[r.user_id], r.qid) for r in page.rows) == [
        ("alice", "T1"),
        ("alice", "T2"),
        ("bob", "T1"),
        ("bob", "T2"),
    ]
    assert {r.id: (done[r.id].judged, done[r.id].total) for r in page.rows} == {
        r.id: (0, 6) for r in page.rows
    }
    assert [u.username for u in page.users] == ["admin", "alice", "bob", "carol"]


def test_campaign_rows_accounts_and_archivable_objects(app: Flask, world: World) -> None:
    store = get_store_of(app)
    with store.session() as session:
        campaigns.create_campaign(session, "c0")
        user = user_service.get_user(session, "carol")
        user_service.new_api_token(session, user)
    with store.read_session() as session:
        rows = campaigns.campaign_rows(session)
        accounts = user_service.accounts(session)
        run = archive.archivable(archive.find_object(session, "run", "runB", "c1"))
    assert [(r.campaign.name, r.topics, r.runs) for r in rows] == [("c0", 0, 0), ("c1", 2, 2)]
    assert [(a.username, a.has_token) for a in accounts] == [
        ("admin", False),
        ("alice", False),
        ("bob", False),
        ("carol", True),
    ]
    assert (run.kind, run.name, run.campaign_id, run.archived_at) == (
        "run",
        "run 'runB'",
        world.campaign_id,
        None,
    )


def test_the_adjudication_page_shows_topic_document_and_a_refused_rule(
    app: Flask, as_user, world: World
) -> None:
    for name, grade in [("alice", 2), ("bob", 0)]:
        assert as_user(name).post(
            f"/api/v1/assignments/{world.assignment[name, 'T1']}/judgements",
            json={"docno": "D1", "grade": grade, "client_id": f"adj-{name}"},
        ).status_code in (200, 201)
    with get_store_of(app).read_session() as session:
        c1 = campaigns.get_campaign(session, world.campaign_id)
        majority, primary = adjudication.MergeSpec("majority"), adjudication.MergeSpec("primary")
        figures = adjudication_queue.queue_figures(session, c1.id, majority)
        page = adjudication_queue.adjudication_page(session, c1, majority, figures)
        refused_figures = adjudication_queue.queue_figures(session, c1.id, primary)
        refused = adjudication_queue.adjudication_page(session, c1, primary, refused_figures)
    assert page.campaign.name == "c1" and page.error is None
    [entry] = page.entries
    assert (entry.item.qid, entry.item.docno, entry.item.proposal) == ("T1", "D1", None)
    assert sorted(entry.item.grades.values()) == [0, 2]
    assert (entry.topic, entry.title) == ("solar panel recycling", "Document 1")
    assert entry.narrative.startswith("Recycling processes are relevant.")
    assert entry.text == "Text 1 about solar panel recycling <script>alert(1)</script>"
    assert refused.entries == () and refused.error
    assert refused_figures.error == refused.error and refused_figures.keys == ()


def test_the_adjudication_queue_carries_the_judges_comments_and_cannot_judge_reasons(
    app: Flask, as_user, world: World
) -> None:
    """The queue's notes, anonymised, in the service and on the page (the browser test of the
    queue runs on SQLite only: tests/conftest.py `_pass_selects`)."""
    store = get_store_of(app)
    with store.session() as s:
        pool = pools.get_pool(s, campaigns.get_campaign(s, world.campaign_id), world.pool_id)
        carol = assign(s, pool, "T1", user_service.get_user(s, "carol")).id
    answers = [
        ("alice", world.assignment["alice", "T1"], {"grade": 2, "comment": "answers the topic"}),
        ("bob", world.assignment["bob", "T1"], {"grade": 0, "comment": "only <b>mentions</b>"}),
        ("carol", carol, {"grade": None, "cannot_judge": "garbled scan"}),
    ]
    for name, assignment, answer in answers:
        assert as_user(name).post(
            f"/api/v1/assignments/{assignment}/judgements",
            json={"docno": "D1", "client_id": f"notes-{name}"} | answer,
        ).status_code in (200, 201)
    with store.read_session() as session:
        c1 = campaigns.get_campaign(session, world.campaign_id)
        [item] = adjudication.disagreement_queue(session, c1, adjudication.MergeSpec("majority"))
    assert (item.qid, item.docno) == ("T1", "D1")
    assert item.comments == {"Judge 1": "answers the topic", "Judge 2": "only <b>mentions</b>"}
    assert item.cannot_judge == {"Judge 3": "garbled scan"}
    page = as_user("admin").get(
        f"/reports/{world.campaign_id}/adjudication?rule=majority&tie=adjudicate"
    )
    assert page.status_code == 200
    assert "Judge 2 commented: only &lt;b&gt;mentions&lt;/b&gt;" in page.text
    assert '<li class="cannot-judge">Judge 3 could not judge: garbled scan</li>' in page.text
    assert "carol" not in page.text


def test_a_document_no_judge_could_grade_is_decided_on_the_adjudication_page(
    app: Flask, as_user, world: World
) -> None:
    """Only 'cannot judge' answers on T1/D2: no rule can label it, so the queue offers it
    (no grades, no proposal) and the adjudicator's grade becomes its final label."""
    assert as_user("alice").post(
        f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements",
        json={"docno": "D2", "grade": None, "cannot_judge": "pages <missing>",
              "client_id": "cj-1"},
    ).status_code in (200, 201)  # fmt: skip
    admin = as_user("admin")
    queue = f"/reports/{world.campaign_id}/adjudication?rule=majority&tie=adjudicate"
    page = admin.get(queue)
    assert page.status_code == 200
    assert "1 document left to decide (no final label yet)" in page.text
    assert "No judge could grade it: the final grade is yours." in page.text
    assert "Judge 1 could not judge: pages &lt;missing&gt;" in page.text
    decided = admin.post(
        f"/reports/{world.campaign_id}/adjudication",
        data={"qid": "T1", "docno": "D2", "grade": "1", "reason": "read the rest elsewhere",
              "rule": "majority", "tie": "adjudicate", "show": "undecided"},
    )  # fmt: skip
    assert decided.status_code == 303
    with get_store_of(app).read_session() as session:
        labels = adjudication.final_labels(
            session, campaigns.get_campaign(session, world.campaign_id)
        )
    assert {key: (label.grade, label.adjudicated) for key, label in labels.items()} == {
        ("T1", "D2"): (1, True)
    }
    after = admin.get(queue + "&show=adjudicated")
    assert "1 document decided by an adjudicator" in after.text
    assert "No judge could grade it: the final grade is yours.\n" in after.text
    assert "· current final label: 1 (adjudicated)" in after.text


def test_an_unknown_merge_rule_is_refused_on_the_page_not_replaced(as_user, world: World) -> None:
    admin = as_user("admin")
    page = admin.get(f"/reports/{world.campaign_id}/adjudication?rule=vote&tie=adjudicate")
    assert page.status_code == 200
    refusal = "unknown merge rule &#39;vote&#39;; expected one of majority, mean, any, all, primary"
    assert refusal in page.text
    tie = admin.get(f"/reports/{world.campaign_id}/adjudication?rule=majority&tie=coin")
    assert "unknown tie rule &#39;coin&#39;" in tie.text


def _judgement_reads(app: Flask, run) -> list[tuple[str, list[object]]]:  # type: ignore[no-untyped-def]
    """The statements reading the judgement log while `run()` runs, with their parameters."""
    store = get_store_of(app)
    reads: list[tuple[str, list[object]]] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        if "FROM judgements" in statement:
            values = parameters.values() if isinstance(parameters, dict) else parameters
            reads.append((statement, list(values)))

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        run()
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    return reads


def test_the_judging_page_asks_for_the_next_topic_when_it_needs_it(
    app: Flask, as_user, world: World
) -> None:
    """The judging page does not work out the next topic (60 % of a judge's first page's CPU
    at TREC size, for an offer shown once per topic); it asks /assess/<id>/next-topic when
    its topic is done or the key t is pressed: the assessor's own assignments only."""
    t1, t2 = world.assignment["alice", "T1"], world.assignment["alice", "T2"]
    alice = as_user("alice")
    page = alice.get(f"/assess/{t1}").text
    assert f'data-next-topic="/assess/{t1}/next-topic"' in page
    assert "honeybee" not in page  # T2's title: not read for the page
    answer = alice.get(f"/assess/{t1}/next-topic")
    assert answer.status_code == 200
    assert answer.get_json() == {
        "next": {"id": t2, "qid": "T2", "title": "honeybee colony collapse", "url": f"/assess/{t2}"}
    }
    assert alice.get(f"/assess/{world.assignment['bob', 'T1']}/next-topic").status_code == 404
    assert as_user("admin").get(f"/assess/{t1}/next-topic").status_code in (403, 404)
    with get_store_of(app).read_session() as session:
        docnos = judging.document_sequence(session, session.get_one(Assignment, t2))
    for k, docno in enumerate(docnos):
        assert alice.post(
            f"/api/v1/assignments/{t2}/judgements",
            json={"docno": docno, "grade": 1, "client_id": f"next-{k}"},
        ).status_code in (200, 201)
    assert alice.get(f"/assess/{t1}/next-topic").get_json() == {"next": None}


def test_the_next_topic_reads_the_one_after_first_and_not_the_time_spent(
    app: Flask, as_user, world: World
) -> None:
    """The judging page's next topic is the first assignment after this one (wrapping) with
    documents left, as 'My topics' counts them; the one right after is read alone first (at
    TREC size each topic is 2,650 judgements), and no time spent is summed."""
    store = get_store_of(app)
    alice, t1, t2 = (
        world.users["alice"],
        world.assignment["alice", "T1"],
        world.assignment["alice", "T2"],
    )

    def next_of(assignment_id: int) -> assessment.AssignedTopic | None:
        with store.read_session() as session:
            return assessment.next_topic(session, alice, assignment_id)

    def expected(assignment_id: int) -> int | None:  # from My topics' figures
        with store.read_session() as session:
            rows = assessment.my_topics(session, alice)
        ids = [r.id for r in rows]
        start = ids.index(assignment_id) + 1
        left = [r.id for r in rows[start:] + rows[:start] if r.progress.judged < r.progress.total]
        return next((i for i in left if i != assignment_id), None)

    found: list[assessment.AssignedTopic | None] = []
    reads = _judgement_reads(app, lambda: found.append(next_of(t1)))
    assert found == [assessment.AssignedTopic(t2, "T2", "honeybee colony collapse")]
    assert expected(t1) == t2
    assert reads and all("T2" in values and "T1" not in values for _, values in reads)
    assert not any("sum(" in statement.lower() for statement, _ in reads)

    with store.read_session() as session:
        docnos = judging.document_sequence(session, session.get_one(Assignment, t2))
    client = as_user("alice")
    for k, docno in enumerate(docnos):  # T2 done: nothing after T1 is waiting
        assert client.post(
            f"/api/v1/assignments/{t2}/judgements",
            json={"docno": docno, "grade": k % 3, "client_id": f"t2-{k}"},
        ).status_code in (200, 201)
    assert next_of(t1) is None and expected(t1) is None
    assert next_of(t2) == assessment.AssignedTopic(t1, "T1", "solar panel recycling")
    assert expected(t2) == t1


def test_the_state_reads_the_assessors_judgements_once(app: Flask, as_user, world: World) -> None:
    """The assignment's state (every judgement of the topic and where to resume) reads the
    assessor's judgements of the topic once (twice before: 2,650 rows each at TREC size),
    and resumes where `resume_position` reading them itself does."""
    store = get_store_of(app)
    t1 = world.assignment["alice", "T1"]
    client = as_user("alice")
    with store.read_session() as session:
        docnos = judging.document_sequence(session, session.get_one(Assignment, t1))
    for k, docno in enumerate([docnos[1], docnos[0], docnos[1]]):  # a revision
        assert client.post(
            f"/api/v1/assignments/{t1}/judgements",
            json={"docno": docno, "grade": k % 3, "client_id": f"s-{k}"},
        ).status_code in (200, 201)
    answers = []
    reads = _judgement_reads(app, lambda: answers.append(client.get(f"/api/v1/assignments/{t1}")))
    state = answers[0].get_json()
    assert len(reads) == 1
    with store.read_session() as session:
        assignment = session.get_one(Assignment, t1)
        assert state["position"] == judging.resume_position(session, assignment) == 2
    assert [j and j["grade"] for j in state["judgements"]][:3] == [1, 2, None]
