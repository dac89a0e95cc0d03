from workbench.services.current_judgements import (
    CurrentGrades,
    counted_grades,
    counted_judgements,
    counted_judges,
    counted_notes,
    current_judgements,
    graded_keys,
    graders,
    judged_keys,
)
from workbench.store.models import (
    Assignment,
    Campaign,
    GoldDocument,
    Judgement,
    Pool,
    QualitySettings,
    User,
)


def test_current_value_is_the_latest_row_of_each_key_and_the_log_keeps_all(store):
    with store.session() as s:
        campaign = Campaign(name="c")
        alice, bob = (
            User(username="alice", password_hash="x"),
            User(username="bob", password_hash="x"),
        )
        s.add_all([campaign, alice, bob])
        s.flush()
        for user, grade in [(alice, 0), (bob, 2), (alice, 1)]:
            s.add(
                Judgement(
                    campaign_id=campaign.id, qid="q1", docno="d1", user_id=user.id, grade=grade
                )
            )
        s.add(Judgement(campaign_id=campaign.id, qid="q1", docno="d2", user_id=alice.id, grade=2))
        s.flush()
        current = current_judgements(s, campaign.id)
        assert [(j.docno, j.user_id, j.grade) for j in current] == [
            ("d1", alice.id, 1),
            ("d1", bob.id, 2),
            ("d2", alice.id, 2),
        ]
        assert [j.grade for j in current_judgements(s, campaign.id, user_id=bob.id)] == [2]
        assert s.query(Judgement).count() == 4


def test_narrow_readers_agree_with_the_whole_rows_on_undo_cannot_judge_gold_and_withdrawn(store):
    """`judged_keys`, `graders` and `counted_grades` read a few columns in SQL; they must give
    what the whole current rows give, on a campaign with a revision, an undo, a 'cannot
    judge', a gold document left out of the qrels and a withdrawn assignment not counted."""
    with store.session() as s:
        campaign = Campaign(name="c", count_withdrawn=False)
        users = [User(username=name, password_hash="x") for name in ("ann", "ben", "cat", "dan")]
        s.add_all([campaign, *users])
        s.flush()
        ann, ben, cat, dan = (u.id for u in users)
        pool = Pool(campaign_id=campaign.id, strategy="depth", params={}, seed=1)
        s.add(pool)
        s.flush()
        s.add(
            Assignment(
                campaign_id=campaign.id, pool_id=pool.id, qid="q2", user_id=cat, active=False
            )
        )
        s.add(QualitySettings(campaign_id=campaign.id, gold_in_qrels=False))
        s.add(GoldDocument(campaign_id=campaign.id, qid="q1", docno="gold", grade=2))
        log = [
            ("q1", "d1", ann, 0, None),
            ("q1", "d1", ann, 2, None),  # revised
            ("q1", "d1", ben, 1, None),
            ("q1", "d2", ben, None, "unreadable"),  # cannot judge
            ("q1", "gold", ann, 2, None),  # gold: not counted
            ("q2", "d3", cat, 1, None),  # under a withdrawn assignment: not counted
            ("q2", "d5", ben, 2, None),  # by a judge not withdrawn: counted
            ("q2", "d4", dan, 1, None),
            ("q2", "d4", dan, None, None),  # taken back: no current judgement
        ]
        notes = [  # a comment, evidence (on gold: not counted), empty evidence, a withdrawn note
            ("q1", "d1", ben, 1, None, "see the second page", None),
            ("q1", "gold", ann, 2, None, "", [[0, 4]]),
            ("q2", "d5", ben, 2, None, "", []),
            ("q2", "d3", cat, 1, None, "withdrawn, with a comment", None),
        ]
        for qid, docno, user_id, grade, reason, comment, evidence in [
            *((*row, "", None) for row in log),
            *notes,
        ]:
            s.add(
                Judgement(
                    campaign_id=campaign.id,
                    qid=qid,
                    docno=docno,
                    user_id=user_id,
                    grade=grade,
                    cannot_judge=reason,
                    comment=comment,
                    evidence=evidence,
                )
            )
        s.flush()
        current = current_judgements(s, campaign.id)
        _narrow_reads_agree(s, campaign)
        assert counted_judges(s, campaign) == {ann, ben}
        assert [(j.docno, j.comment) for j in counted_notes(s, campaign)] == [
            ("d1", "see the second page"),
            ("d2", ""),  # ben's 'cannot judge'
        ]

        assert sorted(judged_keys(s, campaign.id)) == sorted(
            (j.qid, j.docno, j.user_id) for j in current
        )
        assert sorted(judged_keys(s, campaign.id)) == [
            ("q1", "d1", ann), ("q1", "d1", ben), ("q1", "d2", ben), ("q1", "gold", ann),
            ("q2", "d3", cat), ("q2", "d5", ben),
        ]  # fmt: skip
        assert graders(s, campaign.id) == {ann, ben, cat}  # dan took his only grade back
        counted = [
            (j.qid, j.docno, j.user_id, j.grade)
            for j in counted_judgements(s, campaign)
            if j.grade is not None
        ]
        assert [tuple(g) for g in counted_grades(s, campaign)] == counted
        assert counted == [("q1", "d1", ann, 2), ("q1", "d1", ben, 1), ("q2", "d5", ben, 2)]
        assert graded_keys(s, campaign) == {(q, d) for q, d, _, _ in counted}
        s.delete(s.get(GoldDocument, 1))  # with no gold left out and withdrawn ones counted
        campaign.count_withdrawn = True
        s.flush()
        counted = [
            (j.qid, j.docno, j.user_id, j.grade)
            for j in counted_judgements(s, campaign)
            if j.grade is not None
        ]
        assert [tuple(g) for g in counted_grades(s, campaign)] == counted
        assert graded_keys(s, campaign) == {(q, d) for q, d, _, _ in counted}
        everything = {("q1", "d1"), ("q1", "gold"), ("q2", "d3"), ("q2", "d5")}
        assert graded_keys(s, campaign) == everything
        _narrow_reads_agree(s, campaign)
        assert counted_judges(s, campaign) == {ann, ben, cat}
        assert [j.docno for j in counted_notes(s, campaign)] == ["d1", "d2", "gold", "d3"]

        # some documents' current rows: the topic's rows of those documents, no others
        for docnos in (["d1"], ["d2", "d4", "gold"], [], ["absent"]):
            mine = current_judgements(s, campaign.id, qid="q1", user_id=ann, docnos=docnos)
            assert mine == [
                j for j in current if j.qid == "q1" and j.user_id == ann and j.docno in docnos
            ]
        assert [(j.docno, j.grade) for j in current_judgements(s, campaign.id, docnos=["d1"])] == [
            ("d1", 2),
            ("d1", 1),
        ]
        # an undone key has no current row, also when asked for by name
        assert current_judgements(s, campaign.id, user_id=dan, docnos=["d4"]) == []


def _narrow_reads_agree(s, campaign) -> None:
    """`counted_judges`, `counted_notes` and `counted_grades` of some documents read less than
    `counted_judgements` and must give what it gives; `graders` and `graded_keys` from the
    campaign's `CurrentGrades` (one pass) what they give in SQL."""
    whole = counted_judgements(s, campaign)
    grades = CurrentGrades(s, campaign.id)
    current = current_judgements(s, campaign.id)
    graded = [j for j in current if j.grade is not None]
    assert grades.by_user == {
        user: {(j.qid, j.docno): j.grade for j in graded if j.user_id == user}
        for user in {j.user_id for j in graded}
    }
    assert graders(s, campaign.id, grades=grades) == graders(s, campaign.id)
    for user in {j.user_id for j in current} | {-1}:
        alone = graders(s, campaign.id, user_id=user)
        assert graders(s, campaign.id, user_id=user, grades=grades) == alone
    assert graded_keys(s, campaign, grades) == graded_keys(s, campaign)
    assert counted_judges(s, campaign) == {j.user_id for j in whole}
    assert counted_notes(s, campaign) == [
        j for j in whole if j.comment or j.cannot_judge or j.evidence
    ]
    for qid, docnos in (("q1", ["d1"]), ("q1", ["gold", "d2"]), ("q2", ["d3", "d5"]), ("q2", [])):
        assert [tuple(g) for g in counted_grades(s, campaign, qid=qid, docnos=docnos)] == [
            (j.qid, j.docno, j.user_id, j.grade)
            for j in whole
            if j.qid == qid and j.docno in docnos and j.grade is not None
        ]


def test_one_users_judged_documents_equal_the_latest_rows_and_are_kept_while_unchanged(store):
    """`judged_documents` (what an assessor's own progress counts on every judging page:
    27,000 rows of ten topics at TREC size) gives the keys of the latest rows through
    revisions, 'cannot judge', undos and a judgement made again after an undo, of each user
    and set of topics; read grouped (no anti-join per row: 180 ms against 56 ms on
    PostgreSQL); kept, so that an unchanged topic costs one count, and read again once the
    user's rows of the topic change."""
    from sqlalchemy import event

    from workbench.services.current_judgements import judged_documents

    with store.session() as s:
        campaign = Campaign(name="c")
        users = [User(username=name, password_hash="x") for name in ("ann", "ben")]
        s.add_all([campaign, *users])
        s.flush()
        campaign_id = campaign.id
        ann, ben = (u.id for u in users)
        log = [
            ("q1", "d1", ann, 0, None),
            ("q1", "d1", ann, 2, None),  # revised
            ("q1", "d2", ann, None, "unreadable"),  # cannot judge
            ("q1", "d3", ann, 1, None),
            ("q1", "d3", ann, None, None),  # taken back: no current judgement
            ("q1", "d4", ann, 1, None),
            ("q1", "d4", ann, None, None),  # taken back
            ("q1", "d4", ann, 2, None),  # and judged again
            ("q1", "d3", ben, 1, None),  # another judge's key of the same document
            ("q2", "d1", ann, None, None),  # a key with no judgement ever
            ("q2", "d5", ann, 1, None),
            ("q2", "d5", ben, None, None),
        ]
        for qid, docno, user_id, grade, reason in log:
            s.add(
                Judgement(
                    campaign_id=campaign_id,
                    qid=qid,
                    docno=docno,
                    user_id=user_id,
                    grade=grade,
                    cannot_judge=reason,
                )
            )
    statements: list[str] = []

    def listen(*args) -> None:  # type: ignore[no-untyped-def]
        if "FROM judgements" in args[2]:
            statements.append(args[2])

    event.listen(store.engine, "before_cursor_execute", listen)
    choices = (("q1",), ("q2",), ("q1", "q2"), ("q3",))

    def read_all() -> dict:
        with store.read_session() as s:
            return {
                (user_id, qids): judged_documents(s, campaign_id, user_id, qids)
                for user_id in (ann, ben)
                for qids in choices
            }

    def expected() -> dict:
        with store.read_session() as s:
            everyone = judged_keys(s, campaign_id)  # the anti-join, over every user
        return {
            (user_id, qids): {
                q: frozenset(d for q2, d, u in everyone if q2 == q and u == user_id) for q in qids
            }
            for user_id in (ann, ben)
            for qids in choices
        }

    try:
        first = read_all()
        assert not any("EXISTS" in sql for sql in statements)
        assert first == expected()
        assert first[ann, ("q1", "q2")] == {
            "q1": {"d1", "d2", "d4"},
            "q2": {"d5"},
        }
        assert first[ben, ("q1", "q2")] == {"q1": {"d3"}, "q2": frozenset()}
        assert first[ann, ("q3",)] == {"q3": frozenset()}
        statements.clear()
        assert read_all() == first  # unchanged: each call one count of the user's rows
        assert len(statements) == 2 * len(choices)
        assert all("count(" in sql.lower() and "docno" not in sql.lower() for sql in statements)
        with store.session() as s:  # ann takes d1 back; ben judges d5 of q2
            s.add(Judgement(campaign_id=campaign_id, qid="q1", docno="d1", user_id=ann))
            s.add(Judgement(campaign_id=campaign_id, qid="q2", docno="d5", user_id=ben, grade=0))
        statements.clear()
        again = read_all()
        assert again == expected() != first
        assert again[ann, ("q1", "q2")] == {"q1": {"d2", "d4"}, "q2": {"d5"}}
        assert again[ben, ("q1", "q2")] == {"q1": {"d3"}, "q2": {"d5"}}
        assert any("docno" in sql for sql in statements)  # the changed topics read again
    finally:
        event.remove(store.engine, "before_cursor_execute", listen)


def test_a_judgement_made_while_the_judged_documents_are_read_is_never_missed_later(store):
    """A judgement stored by another request right after `judged_documents` read a topic's
    documents is in the next call's answer: the set is kept with the count of the rows it was
    read from (the count read first, in the same read transaction), so the next count finds
    the topic changed and reads it again."""
    from sqlalchemy import event

    from workbench.services.current_judgements import judged_documents

    with store.session() as s:
        campaign = Campaign(name="c")
        user = User(username="ann", password_hash="x")
        s.add_all([campaign, user])
        s.flush()
        campaign_id, ann = campaign.id, user.id
        s.add(Judgement(campaign_id=campaign_id, qid="q1", docno="d1", user_id=ann, grade=1))
    inserted: list[int] = []

    def meanwhile(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        if "judgements.docno" in statement and "GROUP BY" in statement and not inserted:
            inserted.append(1)  # another request's judgement, stored right after this read
            with store.session() as other:
                other.add(
                    Judgement(campaign_id=campaign_id, qid="q1", docno="d2", user_id=ann, grade=2)
                )

    event.listen(store.engine, "after_cursor_execute", meanwhile)
    try:
        with store.read_session() as s:
            assert judged_documents(s, campaign_id, ann, ["q1"]) == {"q1": {"d1"}}
    finally:
        event.remove(store.engine, "after_cursor_execute", meanwhile)
    assert inserted
    with store.read_session() as s:
        assert judged_documents(s, campaign_id, ann, ["q1"]) == {"q1": {"d1", "d2"}}
