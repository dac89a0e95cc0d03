"""Outputs that cannot attack their readers (issue 11 §5): CSV formula injection, LaTeX and
Markdown escaping, unique LaTeX labels, RFC 6266/5987 file names, plain-text plot labels."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from flask import Flask

from tests.web.conftest import World, client_factory, get_store_of
from workbench.reports import plots
from workbench.reports.tables import render_all, to_csv, to_latex, to_markdown
from workbench.services import campaigns, qrels_imports, run_imports, topic_imports
from workbench.tabular import Cell, Table
from workbench.text_safety import csv_safe
from workbench.web.downloads import content_disposition


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("=1+1", "'=1+1"),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("-1", "-1"),
        ("-", "-"),  # the tables' placeholder of an empty cell
        ("--", "'--"),
        ("- x", "'- x"),
        ("+0.5", "+0.5"),
        ("-1e-3", "-1e-3"),
        ("plain", "plain"),
        (-0.25, -0.25),
        (3, 3),
        (None, None),
    ],
)
def test_csv_cells_never_start_a_formula(value: object, expected: object) -> None:
    assert csv_safe(value) == expected


def hostile_table() -> Table:
    return Table(
        ["Run", "MAP"],
        [
            [Cell('=HYPERLINK("http://x")'), Cell(0.5)],
            [Cell("<img src=x onerror=alert(1)>"), Cell(-0.25, marks="a")],
            [Cell("[click](javascript:alert(1))"), Cell(1.0)],
        ],
        caption="Campaign \\input{/etc/passwd} & <b>co</b>",
        label="tab:x}\\input{/etc/passwd}",
    )


def test_table_csv_neutralises_formulas_and_keeps_numbers() -> None:
    rows = list(csv.reader(io.StringIO(to_csv(hostile_table()))))
    assert rows[1][0] == '\'=HYPERLINK("http://x")'
    assert rows[2][1] == "-0.25"  # a number stays a number
    assert float(rows[1][1]) == 0.5


def test_markdown_escapes_html_and_links() -> None:
    text = to_markdown(hostile_table())
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)>" in text
    assert "<b>" not in text
    assert "\\[click\\](javascript" in text  # no link: the brackets are literal


def test_latex_escapes_every_text_field_and_the_label() -> None:
    text = to_latex(hostile_table())
    assert "\\input" not in text
    assert "\\textbackslash{}input" in text
    assert "\\label{tab:x--input-/etc/passwd-}" not in text  # '/' is not a label character
    label = [line for line in text.splitlines() if line.startswith("\\label")]
    assert label == ["\\label{tab:x--input--etc-passwd-}"]
    assert "<" not in text and "\\textless{}img" in text


def test_latex_labels_of_several_tables_are_unique() -> None:
    tables = [
        Table(["a"], [[Cell(1)]], label="tab:agreement-pairs"),
        Table(["a"], [[Cell(2)]], label="tab:agreement-pairs"),
        Table(["a"], [[Cell(3)]], label="tab:agreement-pairs"),
    ]
    text = render_all(tables, "latex")
    labels = [line for line in text.splitlines() if line.startswith("\\label")]
    assert labels == [
        "\\label{tab:agreement-pairs}",
        "\\label{tab:agreement-pairs-2}",
        "\\label{tab:agreement-pairs-3}",
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("plain.csv", 'attachment; filename="plain.csv"'),
        (
            'say "hi".csv',
            "attachment; filename=\"say _hi_.csv\"; filename*=UTF-8''say%20%22hi%22.csv",
        ),
        (
            "Ügyfél—評価.csv",
            'attachment; filename="Ugyfel.csv"; '
            "filename*=UTF-8''%C3%9Cgyf%C3%A9l%E2%80%94%E8%A9%95%E4%BE%A1.csv",
        ),
    ],
)
def test_content_disposition_follows_rfc_6266_and_5987(name: str, expected: str) -> None:
    assert content_disposition(name) == expected
    content_disposition(name).encode("latin-1")  # a valid header value


def test_plot_labels_are_plain_text() -> None:
    svg = plots.precision_recall_curves({r"$\fake$": [0.5] * 11})
    assert r"$\fake$" in svg
    bars = plots.per_topic_bars({r"$\fake$": {"$q$": 0.1}}, ["$q$"], measure=r"$\alpha$")
    assert r"$\alpha$" in bars


@pytest.fixture
def hostile_campaign(app: Flask, world: World, tmp_path: Path) -> int:
    """A campaign with a non-Latin-1, quoted name, a run tagged `$\\fake$`, reference qrels
    and a judgement whose comment is a formula."""
    run = tmp_path / "fake.run"
    run.write_text("".join(f"T1 Q0 D{d} {d} {10 - d} $\\fake$\n" for d in range(1, 5)))
    qrels = tmp_path / "ref.qrels"
    qrels.write_text("T1 0 D1 1\nT1 0 D2 0\n")
    topics = tmp_path / "topics.jsonl"
    topics.write_text('{"qid": "T1", "title": "t"}\n')
    with get_store_of(app).session() as session:
        campaign = campaigns.create_campaign(session, 'Évaluation "ω"')
        topic_imports.import_topics(session, campaign, topics)
        run_imports.import_runs(session, campaign, [run])
        qrels_imports.import_qrels(session, campaign, qrels, name="ref")
        return campaign.id


def test_a_run_tag_with_mathtext_does_not_break_the_evaluation_page(
    app: Flask, hostile_campaign: int
) -> None:
    admin = client_factory(app)("admin")
    response = admin.get(f"/reports/{hostile_campaign}/evaluation?qrels=ref")
    assert response.status_code == 200
    assert "$\\fake$" in response.text


def test_downloads_with_a_non_latin_name_have_valid_headers(
    app: Flask, hostile_campaign: int
) -> None:
    admin = client_factory(app)("admin")
    response = admin.get(f"/reports/{hostile_campaign}/evaluation.latex?qrels=ref")
    assert response.status_code == 200
    header = response.headers["Content-Disposition"]
    assert "filename*=UTF-8''%C3%89valuation%20%22%CF%89%22-evaluation.tex" in header
    assert "\\$\\textbackslash{}fake\\$" in response.text


def test_the_judgement_log_csv_neutralises_formulas(app: Flask, world: World) -> None:
    alice = client_factory(app)("alice")
    url = f"/api/v1/assignments/{world.assignment['alice', 'T1']}/judgements"
    body = {"docno": "D1", "grade": 1, "comment": '=HYPERLINK("http://evil","x")'}
    assert alice.post(url, json=body).status_code == 201
    admin = client_factory(app)("admin")
    log = admin.get(f"/admin/campaigns/{world.campaign_id}/download/log?format=csv")
    rows = list(csv.DictReader(io.StringIO(log.text)))
    assert rows[-1]["comment"] == '\'=HYPERLINK("http://evil","x")'
    assert rows[-1]["grade"] == "1"
