from workbench.services.current_judgements import current_judgements
from workbench.store.models import Campaign, Judgement, User


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
