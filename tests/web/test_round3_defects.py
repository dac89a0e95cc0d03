"""Issue 25's smaller defects: the first admin of an empty store, empty topics and documents
files, binary files' bytes escaped, and the consistency items (one public pool number, the
adaptive pool's label and form, the incomplete-qrels wording, agreement's topic count, the
Reports page's query-log link, the users page's password length)."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask

from tests.web.conftest import FAST_HASH, PASSWORD, World, get_store_of, make_app
from tests.web.test_agreement_readings import alice_and_bob_disagree
from tests.web.test_import_forms import post_file
from workbench.cli import main
from workbench.services import adaptive_pools, adaptive_provenance, qrels, users
from workbench.services.errors import ServiceError
from workbench.store.models import Campaign
from workbench.trec import TrecFormatError, read_run, read_topics

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x02\x80"


# ------------------------------------------------------------------------- the first admin


def test_the_login_page_says_how_to_make_the_first_admin(database_url: str, tmp_path: Path) -> None:
    app = make_app(database_url, tmp_path)
    page = app.test_client().get("/login").text
    assert "No admin account exists yet." in page
    assert "<code>workbench user add admin --role admin</code>" in page
    with get_store_of(app).session() as s:
        users.create_user(s, "ann", PASSWORD, role="assessor", hash_method=FAST_HASH)
    assert "No admin account exists yet." in app.test_client().get("/login").text
    with get_store_of(app).session() as s:
        users.create_user(s, "root", PASSWORD, role="admin", hash_method=FAST_HASH)
    assert "No admin account exists yet." not in app.test_client().get("/login").text
    get_store_of(app).dispose()


class _Server:
    """granian's server, not started: `serve` only prints what it says before."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def serve(self) -> None:
        return None


def test_serve_prints_the_command_that_makes_the_first_admin(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import granian

    monkeypatch.setattr(granian, "Granian", _Server)
    monkeypatch.chdir(tmp_path)
    for name in ("WORKBENCH_DATABASE_URL", "WORKBENCH_INSTANCE_PATH"):
        monkeypatch.delenv(name, raising=False)
    empty = CliRunner().invoke(main, ["serve", "--port", "0"])  # ./instance, as in a new folder
    assert empty.exit_code == 0, empty.output
    assert (
        "No admin account exists yet. Create the first one in another terminal, in this folder "
        "(it asks for a password), then log in:\n    workbench user add admin --role admin\n"
    ) in empty.output
    named = CliRunner().invoke(main, ["--db", database_url, "serve", "--port", "0"])
    if database_url.startswith("sqlite"):
        assert f"    workbench --db {database_url} user add admin --role admin\n" in named.output
    added = CliRunner().invoke(
        main,
        ["user", "add", "admin", "--role", "admin", "--password-stdin"],
        input="a long password\n",
    )
    assert added.exit_code == 0, added.output
    again = CliRunner().invoke(main, ["serve", "--port", "0"])
    assert "No admin account" not in again.output and "Serving on" in again.output


# ------------------------------------------------------------------------------- imports


@pytest.mark.parametrize(
    ("kind", "name", "data", "message"),
    [
        (
            "topics",
            "topics.txt",
            b"",
            "topics.txt:1: expected topics (TREC <top>, TSV or JSONL); got ''",
        ),
        ("topics", "topics.txt", b"\n\n  \n", "topics.txt:1: expected topics"),
        (
            "documents",
            "docs.jsonl",
            b"",
            "docs.jsonl:1: expected documents (JSONL or TREC <DOC>); got ''",
        ),
        (
            "documents",
            "docs.jsonl.gz",
            gzip.compress(b"\n\n", mtime=0),
            "docs.jsonl.gz:1: expected documents",
        ),
        ("topics", "logo.png", PNG, r"logo.png:1: expected UTF-8 text; got b'\x89PNG'"),
        ("documents", "logo.png", PNG, r"logo.png:1: expected UTF-8 text; got b'\x89PNG'"),
        (
            "runs",
            "logo.png",
            PNG,
            r"logo.png:1: expected UTF-8 text; got b'\x89PNG'",
        ),
    ],
)
def test_empty_and_binary_files_are_refused_clearly(
    app: Flask, as_user, world: World, kind: str, name: str, data: bytes, message: str
) -> None:
    page = post_file(as_user("admin"), world.campaign_id, kind, name, data)
    assert page.status_code == 400
    text = (
        re.sub(r"<[^>]+>", "", page.text)
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
    )
    assert message in text
    assert "\ufffd" not in text  # never replacement characters


def test_readers_show_bytes_that_are_not_utf8_escaped(tmp_path: Path) -> None:
    latin = tmp_path / "latin.txt"
    latin.write_bytes("401 0 café 1\n".encode("latin-1"))
    for read in (read_run,):  # (qrels as trec_eval reads them: bytes kept)
        with pytest.raises(TrecFormatError, match=r"got b'401 0 caf\\xe9 1'") as caught:
            read(latin)
        assert caught.value.line == r"401 0 caf\xe9 1"  # readable, and no replacement character
    topics = tmp_path / "topics.txt"
    topics.write_bytes("<top>\n<num> 401\n<title> café\n</top>\n".encode("latin-1"))
    with pytest.raises(
        TrecFormatError, match=r"topics.txt:3: expected UTF-8 text; got b'<title> caf\\xe9'"
    ):
        read_topics(topics)


# ------------------------------------------------------------------------- consistency


def test_one_public_pool_number(app: Flask, as_user, world: World) -> None:
    with get_store_of(app).session() as s:
        campaign = s.get(Campaign, world.campaign_id)
        _pool_elsewhere(s)  # a pool of another campaign takes id 2 first
        pool = adaptive_pools.build_adaptive_pool(s, campaign, method="mm", budget=3, name="b")
        assert (pool.id, pool.number) == (3, 2)
        warning = adaptive_provenance.evaluation_warning(s, campaign)
    assert warning is not None and warning.startswith("pool(s) 2 judged adaptively")
    page = as_user("admin").get(f"/admin/campaigns/{world.campaign_id}/assignments").text
    assert "pool 2 “b” (adaptive, mm)</option>" in page
    assert "pool 1 (depth)</option>" in page


def _pool_elsewhere(session) -> None:  # type: ignore[no-untyped-def]
    from workbench.services import campaigns
    from workbench.store.models import Pool

    other = campaigns.create_campaign(session, "other")
    session.add(Pool(campaign_id=other.id, number=1, strategy="depth", params={}, seed=1))
    session.flush()


def test_the_adaptive_form_takes_a_name_topics_and_runs(app: Flask, as_user, world: World) -> None:
    admin = as_user("admin")
    page = admin.get(f"/admin/campaigns/{world.campaign_id}").text
    form = page[page.index('id="build-adaptive-pool"') :]
    form = form[: form.index("</form>")]
    for field in ('name="name"', 'name="topics"', 'name="runs"'):
        assert field in form
    done = admin.post(
        f"/admin/campaigns/{world.campaign_id}/adaptive-pools",
        data={"method": "mm", "budget": "2", "name": "bandit T1", "topics": "T1", "runs": "runA"},
        follow_redirects=True,
    )
    assert "Pool 2 built" in done.text
    with get_store_of(app).read_session() as s:
        from workbench.services import pools

        pool = pools.get_pool(s, s.get(Campaign, world.campaign_id), 2)
        assert (pool.name, pool.params["topics"], pool.params["runs"]) == (
            "bandit T1",
            ["T1"],
            ["runA"],
        )
        statuses = adaptive_pools.topic_statuses(s, pool)
    assert [t.qid for t in statuses] == ["T1"]


def test_the_incomplete_qrels_refusal_names_the_web_labels(
    app: Flask, as_user, world: World
) -> None:
    with get_store_of(app).read_session() as s, pytest.raises(ServiceError) as refused:
        qrels.campaign_qrels(s, s.get(Campaign, world.campaign_id), final=True)
    message = str(refused.value)
    export_label = "export even if documents lack a label"
    evaluate_label = "incomplete qrels: evaluate anyway"
    assert f"'{export_label}' in the qrels download" in message
    assert f"'{evaluate_label}' on the evaluation page" in message
    templates = Path(__file__).resolve().parents[2] / "templates"
    assert export_label in (templates / "admin" / "_export_qrels.html").read_text()
    page = as_user("admin").get(f"/reports/{world.campaign_id}/evaluation?qrels=final")
    assert f'name="allow_incomplete" value="1"> {evaluate_label}</label>' in page.text


def test_reports_link_query_logs_and_users_page_states_the_password_length(
    as_user, world: World
) -> None:
    admin = as_user("admin")
    reports = admin.get("/reports/").text
    assert f'href="/querylogs/{world.campaign_id}">query logs</a>' in reports
    page = admin.get("/admin/users").text
    assert f"Password ({users.MIN_PASSWORD_LENGTH} characters or more)" in page
    assert f'minlength="{users.MIN_PASSWORD_LENGTH}"' in page and 'minlength="8"' not in page


def test_agreement_names_how_many_topics_it_resamples(app: Flask, as_user, world: World) -> None:
    alice_and_bob_disagree(as_user, world)
    page = as_user("admin").get(f"/reports/{world.campaign_id}/agreement").text
    assert "resampling the 2 topics (overall, given at least 5 topics)" in page
    assert "from 5 topics" not in page
