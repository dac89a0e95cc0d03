"""Clicks against assessors on the CACM collection: the README's "Query logs" figures.

Runs: the lexical baselines of `workbench.baselines` over CACM (`workbench.cacm`), depth 100.
CACM's judgements are complete (a document not listed for a query is not relevant), so the
qrels set "complete" adds grade 0 for every document a run retrieved in its top 10; the
official qrels list only relevant documents, which leaves no pair of judged documents with
different grades.  For each click model a log is simulated (examples/click_simulator.py),
imported through the service (anonymised, k = 5), and compared with the assessors: the share
of click preferences consistent with the qrels, click deviation against raw CTR as an ordering
of documents, and the runs ranked by prefs_simp on clicks against MAP on the qrels.

Usage: ``python examples/cacm_clicks.py [CACM_FOLDER] [--impressions 200] [--users 100]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from workbench import cacm, clicks, stats
from workbench.metrics.prefs import evaluate_prefs
from workbench.pooling import ranked_list
from workbench.services import (
    campaigns,
    qrels_imports,
    querylog_import,
    querylogs,
    run_imports,
    topic_imports,
)
from workbench.store import open_store
from workbench.trec import Run, read_run, write_qrels

HERE = Path(__file__).resolve().parent
KEY = bytes(range(32))  # a fixed key: the figures do not depend on it


def simulator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("click_simulator", HERE / "click_simulator.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["click_simulator"] = module
    spec.loader.exec_module(module)
    return module


def own_and_others(runs, impressions, assessors) -> None:  # type: ignore[no-untyped-def]
    """Each run scored (prefs_simp, skip-above, m = 2) on the preferences drawn from its own
    result lists and on those drawn from the other runs' lists only."""
    shown_by: dict[tuple[str, tuple[str, ...]], set[str]] = {}
    for tag, run in runs.items():
        for qid, scores in run.items():
            docnos = list(scores)
            top = ranked_list(docnos, np.array([scores[d] for d in docnos]), limit=10).docnos
            shown_by.setdefault((qid, tuple(top)), set()).add(tag)
    scores: dict[str, dict[str, float]] = {"own": {}, "others": {}}
    for tag, run in runs.items():
        trec_run = Run.from_dict(run, tag=tag)
        for label in scores:
            chosen = [
                i
                for i in impressions
                if (tag in shown_by.get((i.query, i.results), set())) == (label == "own")
            ]
            prefs = clicks.prefs_lines(clicks.aggregate_preferences(chosen, min_support=2))
            out = evaluate_prefs(prefs, trec_run, ["prefs_simp"], per_topic=False)
            scores[label][tag] = next(v for m, _, v in out if m == "prefs_simp")
    for label, values in scores.items():
        shown = ", ".join(f"{t} {v:.3f}" for t, v in sorted(values.items()))
        print(
            f"prefs_simp on the {label} lists' preferences: {shown}; Kendall's tau with MAP "
            f"{stats.kendall_tau(assessors, values):.3f}"
        )
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "folder", type=Path, nargs="?", default=HERE.parent / ".." / "shared" / "data" / "cacm"
    )
    parser.add_argument("--impressions", type=int, default=200, help="per topic")
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    sim = simulator()
    started = time.perf_counter()
    collection = cacm.load(args.folder)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = cacm.write_campaign_files(collection, folder / "campaign")
        runs = {run.tag: run.to_dict() for run in map(read_run, files.runs)}
        complete = {t.qid: dict(collection.qrels[t.qid]) for t in collection.judged_topics}
        for run in runs.values():
            for qid, scores in run.items():
                top = sorted(scores, key=lambda d: (-scores[d], d))[:10]
                for docno in top:
                    complete[qid].setdefault(docno, 0)
        write_qrels(complete, folder / "complete.txt")
        titles = {t.qid: t.title for t in collection.judged_topics}
        store = open_store(f"sqlite:///{folder / 'store.sqlite'}", upgrade=True)
        with store.session() as session:
            campaign = campaigns.create_campaign(session, "cacm", scale="0=No,1=Yes")
            topic_imports.import_topics(session, campaign, files.topics)
            run_imports.import_runs(session, campaign, list(files.runs))
            qrels_imports.import_qrels(session, campaign, files.qrels, name="official")
            qrels_imports.import_qrels(session, campaign, folder / "complete.txt", name="complete")
        print(
            f"CACM: {len(titles)} judged topics, {len(runs)} runs; "
            f"{args.impressions} impressions per topic by {args.users} users\n"
        )
        for model_name in sim.MODELS:
            model = sim.ClickModel(model_name, max_grade=1)
            log = sim.simulate(
                complete,
                runs,
                titles,
                model=model,
                n_users=args.users,
                impressions_per_topic=args.impressions,
                seed=args.seed,
            )
            path = folder / f"{model_name}.jsonl"
            sim.write_log(log, path)
            with store.session() as session:
                campaign = campaigns.get_campaign(session, "cacm")
                summary = querylog_import.import_query_log(session, campaign, path, key=KEY)
            print(
                f"## {model_name}: {summary.impressions} impressions stored, "
                f"{summary.mapped_impressions} on {summary.topics} topics "
                f"(read {summary.anonymisation.read[0]})"
            )
            with store.read_session() as session:
                campaign = campaigns.get_campaign(session, "cacm")
                log_model = querylogs.get_query_log(session, campaign, path.name)
                impressions = querylogs.load_impressions(session, log_model)
                deviation = sim.pair_order_accuracy(
                    clicks.document_deviation(impressions), complete
                )
                ctr = sim.pair_order_accuracy(
                    {k: r.value for k, r in clicks.ctr_by_query_document(impressions).items()},
                    complete,
                )
                print(
                    f"relevant above non-relevant: click deviation {deviation:.3f}, "
                    f"raw CTR {ctr:.3f}"
                )
                print("| strategy | preferences | comparable | consistent | 95% interval |")
                print("|---|---|---|---|---|")
                for strategy in clicks.STRATEGIES:
                    options = querylogs.PreferenceOptions(strategy, 2)
                    agreement = querylogs.click_agreement(
                        session, campaign, path.name, "complete", options, n_resamples=1000
                    )
                    low, high = agreement.interval
                    print(
                        f"| {strategy} | {agreement.preferences} | {agreement.comparable} | "
                        f"{agreement.share:.3f} | [{low:.3f}, {high:.3f}] |"
                    )
                evaluation = querylogs.click_evaluation(
                    session, campaign, path.name, "official", querylogs.PreferenceOptions()
                )
                print("\n| run | prefs_simp (clicks) | MAP (official qrels) |")
                print("|---|---|---|")
                for row in sorted(evaluation.runs, key=lambda r: -r.assessors):
                    print(f"| {row.tag} | {row.clicks:.4f} | {row.assessors:.4f} |")
                print(
                    f"\nKendall's tau {evaluation.kendall_tau:.3f}, tau_AP "
                    f"{evaluation.tau_ap:.3f}; click preferences on "
                    f"{evaluation.preference_topics} of {evaluation.campaign_topics} topics\n"
                )
                assessors = {row.tag: row.assessors for row in evaluation.runs}
                own_and_others(runs, impressions, assessors)
        store.dispose()
    print(f"({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
