"""`workbench machine`: machine judges (LLM relevance labels) beside the human ones: the prompt
template, judges, judging jobs with a progress bar, hybrid designs, the trust analysis and the
robustness measurement."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from workbench.cli import common
from workbench.cli.common import topic_list, topics_option
from workbench.hybrid import REVIEW_ON, SAMPLE_DESIGNS

F = TypeVar("F", bound=Callable[..., Any])


def judge_settings(function: F) -> F:
    """One option per judge setting of `machine_judges.PARAMETERS` (the one list)."""
    from workbench.services.machine_judges import PARAMETERS

    for parameter in reversed(PARAMETERS):
        kind = (
            click.FloatRange(parameter.minimum, parameter.maximum)
            if parameter.kind == "float"
            else click.IntRange(int(parameter.minimum), int(parameter.maximum))
        )
        function = click.option(
            f"--{parameter.name.replace('_', '-')}",
            parameter.name,
            type=kind,
            default=None,
            help=f"{parameter.help} [default: {parameter.default}]",
        )(function)
    return function


judge_option = click.option(
    "--judge", "judge_name", required=True, help="The machine judge (machine:<model>)."
)


@click.group()
def machine() -> None:
    """Machine judges: LLM relevance labels beside the assessors', and how far to trust them."""


# ------------------------------------------------------------------------------ template


@machine.group()
def template() -> None:
    """The campaign's prompt template (placeholders {{title}}, {{document}}, ...)."""


@template.command("show")
@common.campaign_option
@click.pass_context
def template_show(ctx: click.Context, campaign_name: str) -> None:
    """Print the campaign's template (the default one until set)."""
    from workbench.services import machine_judges
    from workbench.services.campaigns import get_campaign

    with common.transaction(ctx, read=True) as session:
        campaign = get_campaign(session, campaign_name)
        click.echo(machine_judges.campaign_template(session, campaign), nl=False)


@template.command("set")
@common.campaign_option
@click.argument(
    "path", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=False
)
@click.option("--default", "use_default", is_flag=True, help="Back to the default template.")
@click.pass_context
def template_set(
    ctx: click.Context, campaign_name: str, path: Path | None, use_default: bool
) -> None:
    """Set the campaign's template from a file (judges made before keep theirs)."""
    from workbench.services import machine_judges
    from workbench.services.campaigns import get_campaign

    if (path is None) == (not use_default):
        common.fail("give a template file or --default (not both)")
    text = None if use_default else path.read_text(encoding="utf-8")  # type: ignore[union-attr]
    with common.transaction(ctx) as session:
        campaign = get_campaign(session, campaign_name)
        machine_judges.set_template(session, campaign, text)
    click.echo("template set" if text else "default template")


# -------------------------------------------------------------------------------- judges


@machine.command("add")
@common.campaign_option
@click.option("--model", default=None, help="Model name at the endpoint ($WORKBENCH_LLM_MODEL).")
@click.option("--name", default=None, help="Judge name (default machine:<model>).")
@click.option(
    "--base-url",
    default=None,
    help="The endpoint, e.g. http://127.0.0.1:8000/v1 ($WORKBENCH_LLM_BASE_URL).",
)
@click.option(
    "--api-key-env",
    default="",
    help="Environment variable holding the key (default WORKBENCH_LLM_API_KEY).",
)
@click.option(
    "--api-key-stdin",
    is_flag=True,
    help="Read a key to store with the judge from standard input (never exported).",
)
@judge_settings
@click.pass_context
def add(
    ctx: click.Context,
    campaign_name: str,
    model: str | None,
    name: str | None,
    base_url: str | None,
    api_key_env: str,
    api_key_stdin: bool,
    **settings: Any,
) -> None:
    """Add a machine judge with the campaign's current template."""
    from workbench.services import machine_judges
    from workbench.services.campaigns import get_campaign

    key = click.get_text_stream("stdin").readline().strip() if api_key_stdin else None
    with common.transaction(ctx) as session:
        campaign = get_campaign(session, campaign_name)
        judge = machine_judges.add_judge(
            session, campaign, model=model, name=name, base_url=base_url,
            api_key_env=api_key_env, api_key=key,
            settings={k: v for k, v in settings.items() if v is not None},
        )  # fmt: skip
        click.echo(f"added {judge.name} (template {judge.template_hash[:12]})")


@machine.command("judges")
@common.campaign_option
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text")
@click.pass_context
def judges(ctx: click.Context, campaign_name: str, fmt: str) -> None:
    """The campaign's machine judges: endpoint, labels, tokens and cost (never the key)."""
    from workbench.services import machine_judges
    from workbench.services.campaigns import get_campaign

    with common.transaction(ctx, read=True) as session:
        infos = machine_judges.judge_infos(session, get_campaign(session, campaign_name))
    if fmt == "json":
        click.echo(json.dumps([i.to_dict() for i in infos], indent=1))
        return
    for i in infos:
        click.echo(
            f"{i.name}\t{i.model}\t{i.base_url or '(no base URL)'}\tkey: {i.key_source}\t"
            f"{i.labels} labels, {i.cannot_judge} cannot judge, "
            f"{i.prompt_tokens + i.completion_tokens} tokens, cost {i.cost:.4f}"
        )


@machine.command("delete")
@common.campaign_option
@judge_option
@click.pass_context
def delete(ctx: click.Context, campaign_name: str, judge_name: str) -> None:
    """Delete a machine judge with its labels and jobs (no human judgement is touched)."""
    from workbench.services import machine_judges
    from workbench.services.campaigns import get_campaign

    with common.transaction(ctx) as session:
        machine_judges.delete_judge(session, get_campaign(session, campaign_name), judge_name)
    click.echo(f"deleted {judge_name}")


# ---------------------------------------------------------------------------------- jobs


def _run_with_progress(
    ctx: click.Context, job_id: int, quiet: bool, calls: int | None, tokens: int | None
) -> None:
    from workbench.services import machine_jobs

    store = common.get_store(ctx)
    first = machine_jobs.info(store, job_id)
    if quiet:
        final = machine_jobs.run_job(store, job_id, budget_calls=calls, budget_tokens=tokens)
    else:
        with click.progressbar(
            length=first.total, label=f"{first.judge} job {job_id}", show_pos=True,
            file=click.get_text_stream("stderr"),
        ) as bar:  # fmt: skip
            bar.update(first.done)
            shown = [first.done]

            def progress(state: machine_jobs.JobInfo) -> None:
                bar.update(state.done - shown[0])
                shown[0] = state.done

            final = machine_jobs.run_job(
                store, job_id, progress=progress, budget_calls=calls, budget_tokens=tokens
            )
    click.echo(
        f"job {final.id}: {final.status}, {final.done} of {final.total} judged "
        f"({final.cached} from the cache, {final.cannot_judge} cannot judge), "
        f"{final.calls} calls, {final.tokens} tokens, cost {final.cost:.4f}"
        + (f"; {final.error}" if final.error else "")
    )
    if final.status == machine_jobs.FAILED:
        ctx.exit(1)


@machine.command("run")
@click.option("--campaign", "campaign_name", default=None, help="Campaign name or id.")
@click.option("--judge", "judge_name", default=None, help="The machine judge.")
@click.option("--job", "job_id", type=int, default=None, help="Resume this job instead.")
@common.pool_number_option
@topics_option
@click.option(
    "--only-unjudged",
    is_flag=True,
    help="Only documents without a human grade (humans first, machine fills holes).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    default=4,
    show_default=True,
    help="Questions in flight at once.",
)
@click.option(
    "--budget-calls",
    type=click.IntRange(min=1),
    default=None,
    help="Stop after this many questions.",
)
@click.option(
    "--budget-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Stop once this many tokens are used.",
)
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.pass_context
def run(
    ctx: click.Context,
    campaign_name: str | None,
    judge_name: str | None,
    job_id: int | None,
    pool_number: int | None,
    topics: str | None,
    only_unjudged: bool,
    concurrency: int,
    budget_calls: int | None,
    budget_tokens: int | None,
    quiet: bool,
) -> None:
    """Judge a pool's documents with a machine judge (or resume --job ID, with new budgets if
    given), with a progress bar; stopped, over-budget or interrupted jobs resume where they
    were."""
    from workbench.services import machine_jobs, machine_judges
    from workbench.services.campaigns import get_campaign

    if job_id is None:
        if campaign_name is None or judge_name is None:
            common.fail("give --campaign and --judge (a new job) or --job ID (resume)")
        with common.transaction(ctx) as session:
            chosen = topic_list(topics)
            campaign = get_campaign(session, campaign_name)  # type: ignore[arg-type]
            judge = machine_judges.get_judge(session, campaign, judge_name)  # type: ignore[arg-type]
            job = machine_jobs.create_job(
                session, campaign, judge, pool_number=pool_number, topics=chosen,
                only_unjudged=only_unjudged, concurrency=concurrency,
                budget_calls=budget_calls, budget_tokens=budget_tokens,
            )  # fmt: skip
            job_id = job.id
        budget_calls = budget_tokens = None  # the new job has them
    with common.refusals():
        _run_with_progress(ctx, job_id, quiet, budget_calls, budget_tokens)


@machine.command("jobs")
@common.campaign_option
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text")
@click.pass_context
def jobs(ctx: click.Context, campaign_name: str, fmt: str) -> None:
    """The campaign's judging jobs and their progress."""
    from workbench.services import machine_jobs
    from workbench.services.campaigns import get_campaign

    with common.transaction(ctx, read=True) as session:
        infos = machine_jobs.list_jobs(session, get_campaign(session, campaign_name))
    if fmt == "json":
        click.echo(json.dumps([i.to_dict() for i in infos], indent=1))
        return
    for i in infos:
        click.echo(
            f"job {i.id}\t{i.judge}\t{i.status}\t{i.done}/{i.total}\t{i.describe_scope()}\t"
            f"{i.calls} calls, {i.tokens} tokens" + (f"\t{i.error}" if i.error else "")
        )


@machine.command("stop")
@common.campaign_option
@click.option("--job", "job_id", type=int, required=True)
@click.pass_context
def stop(ctx: click.Context, campaign_name: str, job_id: int) -> None:
    """Ask a job to stop after the questions in flight (resume it with `run --job`)."""
    from workbench.services import machine_jobs
    from workbench.services.campaigns import get_campaign

    with common.transaction(ctx) as session:
        machine_jobs.request_stop(session, get_campaign(session, campaign_name), job_id)
    click.echo(f"job {job_id}: stop asked")


# ------------------------------------------------------------------------- hybrid designs


@machine.command("sample")
@common.campaign_option
@judge_option
@common.pool_number_option
@click.option(
    "--design",
    type=click.Choice(tuple(SAMPLE_DESIGNS)),
    default="stratified",
    show_default=True,
    help="How the human sample is drawn.",
)
@click.option(
    "--share",
    type=click.FloatRange(0, 1, min_open=True),
    default=0.1,
    show_default=True,
    help="Share of each topic's documents humans judge.",
)
@common.seed_option
@click.option(
    "--no-flagged",
    is_flag=True,
    help="Do not force documents flagged as suspicious into the sample.",
)
@click.option("--name", default="", help="Name of the sample pool.")
@click.pass_context
def sample(
    ctx: click.Context,
    campaign_name: str,
    judge_name: str,
    pool_number: int | None,
    design: str,
    share: float,
    seed: int,
    no_flagged: bool,
    name: str,
) -> None:
    """Machine first, humans on a sample: a new pool of the human sample of a machine-labelled
    pool (assign it as any pool: `workbench assign --pool N`)."""
    from workbench.services import machine_hybrid, machine_judges
    from workbench.services.campaigns import get_campaign
    from workbench.services.pools import pool_counts

    with common.transaction(ctx) as session:
        campaign = get_campaign(session, campaign_name)
        judge = machine_judges.get_judge(session, campaign, judge_name)
        pool = machine_hybrid.create_sample_pool(
            session, campaign, judge, design=design, share=share, pool_number=pool_number,
            seed=seed, include_flagged=not no_flagged, name=name,
        )  # fmt: skip
        documents, sampled, topics = pool_counts(session, pool)
        click.echo(f"pool {pool.number}: {sampled} of {documents} documents to judge by humans "
                   f"over {topics} topics ({design}, share {share:g})")  # fmt: skip


@machine.command("review")
@common.campaign_option
@judge_option
@click.option(
    "--on",
    type=click.Choice(tuple(REVIEW_ON)),
    default="relevance",
    show_default=True,
    help="What counts as a disagreement.",
)
@click.option("--name", default="", help="Name of the review pool.")
@click.pass_context
def review(ctx: click.Context, campaign_name: str, judge_name: str, on: str, name: str) -> None:
    """Disagreement review: a new pool of the documents where the machine and the first human
    disagree, to assign to other assessors."""
    from workbench.services import machine_hybrid, machine_judges
    from workbench.services.campaigns import get_campaign

    with common.transaction(ctx) as session:
        campaign = get_campaign(session, campaign_name)
        judge = machine_judges.get_judge(session, campaign, judge_name)
        pool, count = machine_hybrid.create_review_pool(session, campaign, judge, on=on, name=name)
        click.echo(f"pool {pool.number}: {count} document(s) to review")


@machine.command("save-qrels")
@common.campaign_option
@judge_option
@click.option(
    "--combination", type=click.Choice(("hybrid", "machine")), default="hybrid", show_default=True
)
@click.option("--assessor", default=None, help="Human labels of one assessor.")
@click.option("--name", required=True, help="Name of the qrels set.")
@click.option("--allow-incomplete", is_flag=True, help="Save even if documents lack a label.")
@click.pass_context
def save_qrels(
    ctx: click.Context,
    campaign_name: str,
    judge_name: str,
    combination: str,
    assessor: str | None,
    name: str,
    allow_incomplete: bool,
) -> None:
    """Store machine or hybrid qrels as a qrels set (then `workbench evaluate --qrels NAME`)."""
    from workbench.services import machine_hybrid, machine_judges
    from workbench.services.campaigns import get_campaign
    from workbench.services.qrels import IncompleteQrels

    with common.transaction(ctx) as session:
        campaign = get_campaign(session, campaign_name)
        judge = machine_judges.get_judge(session, campaign, judge_name)
        combined = machine_hybrid.combined_qrels(
            session, campaign, judge, combination=combination, assessor=assessor
        )
        if not combined.completeness.complete and not allow_incomplete:
            raise IncompleteQrels(combined.completeness)
        machine_hybrid.save_qrels_set(session, campaign, combined, name)
        click.echo(f"qrels set {name!r}: {len(combined.labels)} labels")


# ------------------------------------------------------------------------------- analysis


@machine.command("report")
@common.campaign_option
@click.option("--judge", "judge_names", multiple=True, help="A judge (default: all).")
@click.option("--assessor", default=None, help="Compare with one assessor's labels.")
@common.measure_option("The measure that ranks the runs.")
@click.option("--top-k", type=click.IntRange(min=2), default=5, show_default=True)
@click.option(
    "--weights",
    type=click.Choice(("linear", "quadratic")),
    default="linear",
    show_default=True,
    help="Weights of the weighted kappa.",
)
@click.option(
    "--resamples",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Topic bootstrap resamples.",
)
@common.seed_option
@common.table_format_option
@common.output_option
@click.pass_context
def report(
    ctx: click.Context,
    campaign_name: str,
    judge_names: tuple[str, ...],
    assessor: str | None,
    measure: str,
    top_k: int,
    weights: str,
    resamples: int,
    seed: int,
    fmt: str,
    output: Path | None,
) -> None:
    """How far to trust each machine judge: kappa against the humans, the confusion matrix,
    the run rankings under machine and hybrid qrels, the sample estimates and the cost."""
    from workbench.reports.tables import render_all, to_json
    from workbench.services.campaigns import get_campaign
    from workbench.services.machine_report import machine_report, report_tables

    with common.transaction(ctx, read=True) as session:
        result = machine_report(
            session, get_campaign(session, campaign_name), judges=judge_names or None,
            assessor=assessor, measure=measure, top_k=top_k, weights=weights,
            n_resamples=resamples, seed=seed,
        )  # fmt: skip
    if fmt == "json":
        common.emit(to_json(result.to_dict()), output)
        return
    text = render_all(report_tables(result), fmt)
    notes = [*result.notes, *(f"{j.judge}: {n}" for j in result.judges for n in j.notes)]
    if notes and fmt == "text":
        text += "\n" + "".join(f"Note: {n}\n" for n in notes)
    common.emit(text, output)


@machine.command("robustness")
@common.campaign_option
@judge_option
@click.option(
    "--per-topic",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Non-relevant documents attacked per topic.",
)
@click.option(
    "--no-neutralise",
    is_flag=True,
    help="Leave marker-like lines in documents (to measure what that defence is worth).",
)
@click.option("--concurrency", type=click.IntRange(1, 64), default=4, show_default=True)
@common.table_format_option
@common.output_option
@click.pass_context
def robustness(
    ctx: click.Context,
    campaign_name: str,
    judge_name: str,
    per_topic: int,
    no_neutralise: bool,
    concurrency: int,
    fmt: str,
    output: Path | None,
) -> None:
    """Prompt injection and keyword stuffing: how often the judge grades an attacked copy of a
    non-relevant document above the document itself (asks the judge's endpoint)."""
    from workbench.reports.tables import render, to_json
    from workbench.services.campaigns import get_campaign
    from workbench.services.machine_robustness import robustness as measure
    from workbench.services.machine_robustness import robustness_table

    with common.transaction(ctx, read=True) as session:
        results = measure(session, get_campaign(session, campaign_name), judge_name,
                          per_topic=per_topic, neutralise=not no_neutralise,
                          concurrency=concurrency)  # fmt: skip
    if fmt == "json":
        common.emit(to_json([r.to_dict() for r in results]), output)
    else:
        common.emit(render(robustness_table(results, judge_name), fmt), output)
