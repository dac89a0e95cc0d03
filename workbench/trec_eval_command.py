"""``workbench trec-eval [trec_eval flags] QRELS RUN [RUN ...]``: trec_eval's command line.

Flags (getopt style: ``-q -c``, ``-qc``, ``-mP.5,10`` or ``-m P.5,10``, ``-l2``, ``-M100``):

  -q            per-topic lines as well as the summary
  -n            no summary lines
  -c            average over all qrels topics (missing ones score 0)
  -J            judged documents only
  -l LEVEL      relevance level (relevant means rel >= LEVEL; default 1)
  -M N          at most N results per topic (after ranking)
  -N N          number of documents in the collection (for utility)
  -m MEASURE    measure or nickname (official, all_trec, set, all_prefs, qrels_jg ...); repeatable
  -R FORMAT     qrels (default), prefs, qrels_prefs, qrels_jg
  -Z FILE       print z-scores using the per-topic ``qid measure mean stddev`` FILE
  --compat 9    reproduce trec_eval 9.0.8 (pytrec_eval): 32-bit score ranking, +0.9 iprec
                cutoffs, no rbp/unj in all_trec, -c topics not printed
  -h            this help; with -m, each measure's help too (-h -m P, -h -m official)
  -v            the version

Output is trec_eval's, byte for byte (``rbp`` aside: trec_eval's own values come from
uninitialised memory).  A run file ``-`` is read from standard input.  Where trec_eval 10
stops on a qrels topic that the run lacks, the topic is skipped (as 9.0.8 did) with a warning.
Exit status: 0 ok, 1 bad usage or measure, 2 unreadable or malformed input, 4 a topic that
trec_eval cannot evaluate either (a docno twice in an evaluated topic's ranking or judgements;
a topic whose judgements are all negative): as trec_eval, the topics before it are printed
(-q), no summary; 7 no topic with both results and judgements.
A docno twice in a topic that is not evaluated is no error.
"""

from __future__ import annotations

# This module imports neither click nor anything the command does not need: the `workbench`
# entry point (workbench.__main__) runs it directly, so `workbench trec-eval` starts fast.
import sys
from functools import partial
from typing import Any

from workbench import __version__

_NO_ARG = set("qncJahv")
_WITH_ARG = set("mlMNRZTD")


class UsageError(Exception):
    pass


class Options:
    """The parsed command line (a plain class: a dataclass would cost start-up time)."""

    def __init__(self) -> None:
        self.per_topic = False
        self.summary = True
        self.complete = False
        self.judged_only = False
        self.level = 1
        self.max_results: int | None = None
        self.n_docs = 0
        self.measures: list[str] = []
        self.rel_format = "qrels"
        self.zscores: str | None = None
        self.compat = 10
        self.help = False
        self.version = False
        self.files: list[str] = []

    def evaluator_options(self) -> dict[str, Any]:
        """The keywords `metrics.evaluation.evaluate` takes from these flags: -l, -c, -M and
        the version."""
        return {
            "relevance_level": self.level,
            "average_over_all_topics": self.complete,
            "max_results": self.max_results,
            "compat": self.compat,
        }


def _int(flag: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"-{flag} needs an integer, got {value!r}") from None


def parse_args(args: list[str]) -> Options:
    """getopt-style parsing of trec_eval's flags (options may follow the files)."""
    opts = Options()
    i = 0
    only_files = False
    while i < len(args):
        arg = args[i]
        i += 1
        if only_files or arg == "-" or not arg.startswith("-"):
            opts.files.append(arg)
            continue
        if arg == "--":
            only_files = True
            continue
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if name == "compat":
                if not eq:
                    if i >= len(args):
                        raise UsageError("--compat needs a value (9 or 10)")
                    value, i = args[i], i + 1
                if value not in ("9", "10"):
                    raise UsageError(f"--compat must be 9 or 10, got {value!r}")
                opts.compat = int(value)
            elif name == "help":
                opts.help = True
            elif name == "version":
                opts.version = True
            else:
                raise UsageError(f"unknown option {arg!r}")
            continue
        k = 1
        while k < len(arg):
            flag = arg[k]
            k += 1
            if flag in _NO_ARG:
                _set_flag(opts, flag)
                continue
            if flag not in _WITH_ARG:
                raise UsageError(f"unknown option -{flag}")
            value = arg[k:]
            if not value:
                if i >= len(args):
                    raise UsageError(f"-{flag} needs a value")
                value, i = args[i], i + 1
            _set_value(opts, flag, value)
            break
    return opts


def _set_flag(opts: Options, flag: str) -> None:
    if flag == "q":
        opts.per_topic = True
    elif flag == "n":
        opts.summary = False
    elif flag == "c":
        opts.complete = True
    elif flag == "J":
        opts.judged_only = True
    elif flag == "a":
        opts.measures.append("all_trec")
    elif flag == "h":
        opts.help = True
    elif flag == "v":
        opts.version = True


def _set_value(opts: Options, flag: str, value: str) -> None:
    if flag == "m":
        opts.measures.append(value)
    elif flag == "l":
        opts.level = _int(flag, value)
    elif flag == "M":
        opts.max_results = _int(flag, value)
    elif flag == "N":
        opts.n_docs = _int(flag, value)
    elif flag == "R":
        if value not in ("qrels", "prefs", "qrels_prefs", "qrels_jg"):
            raise UsageError(f"unknown -R format {value!r}")
        opts.rel_format = value
    elif flag == "Z":
        opts.zscores = value
    elif flag == "T" and value != "trec_results":
        raise UsageError(f"unknown -T format {value!r}")


def run_trec_eval(args: list[str], out=None, err=None) -> int:
    """Run the command; returns the exit status."""
    from workbench.metrics.evaluation import CannotEvaluate
    from workbench.metrics.names import MeasureError, measure_help
    from workbench.trec.errors import TrecFormatError

    out = out or sys.stdout
    err = err or sys.stderr
    try:
        opts = parse_args(args)
    except UsageError as error:
        err.write(f"trec_eval: {error}\n{_usage()}")
        return 1
    if opts.help:
        out.write(__doc__ or "")
        if opts.measures:  # as trec_eval: the help of each measure named with -m
            try:
                out.write(measure_help(opts.measures, opts.compat))
            except MeasureError as error:
                err.write(f"trec_eval: {error}\n")
                return 1
        return 0
    if opts.version:
        out.write(f"workbench trec-eval {__version__} (trec_eval 10.0 / 9.0.8 compatible)\n")
        return 0
    if len(opts.files) < 2:
        err.write(f"trec_eval: need a qrels file and at least one run\n{_usage()}")
        return 1
    statuses = ((TrecFormatError, 2), (CannotEvaluate, 4), (MeasureError, 1))
    try:
        _evaluate_all(opts, out, err)
    except (TrecFormatError, CannotEvaluate, MeasureError) as error:
        err.write(f"trec_eval: {error}\n")
        return next(status for kind, status in statuses if isinstance(error, kind))
    except NoTopics:
        err.write("trec_eval: No queries with both results and relevance info\n")
        return 7
    except OSError as error:
        err.write(f"trec_eval: cannot read {error.filename}: {error.strerror}\n")
        return 2
    return 0


def _usage() -> str:
    return "usage: workbench trec-eval [-q] [-c] [-m measure] ... QRELS RUN [RUN ...]\n"


def _evaluate_all(opts: Options, out, err) -> None:
    from workbench.trec.qrels import read_qrels
    from workbench.trec.runs import read_run

    qrels_path, run_paths = opts.files[0], opts.files[1:]
    measures = opts.measures or (["official"] if opts.rel_format == "qrels" else [])
    if opts.rel_format == "qrels":
        qrels = read_qrels(qrels_path, check_duplicates=False)  # as trec_eval: per topic
        zscores = None
        if opts.zscores:
            from workbench.metrics.report import read_zscores

            zscores = read_zscores(opts.zscores)
        for path in run_paths:
            run = read_run(path, check_duplicates=False, ranks=False)
            _print_qrels_run(opts, measures, qrels, run, path, zscores, out, err)
        return
    if opts.rel_format == "qrels_jg":
        from workbench.metrics.judgment_groups import evaluate_judgment_groups
        from workbench.trec.prefs import read_qrels_jg

        groups = read_qrels_jg(qrels_path)
        judged = {line.qid for line in groups}
        evaluate_other = partial(evaluate_judgment_groups, groups)
    else:
        from workbench.metrics.prefs import evaluate_prefs, prefs_from_qrels
        from workbench.trec.prefs import read_prefs

        prefs = (
            read_prefs(qrels_path)
            if opts.rel_format == "prefs"
            else prefs_from_qrels(read_qrels(qrels_path))
        )
        judged = {line.qid for line in prefs}
        evaluate_other = partial(evaluate_prefs, prefs)
    from workbench.metrics.prefs import TrecEvalFlags, UnevaluableTopic
    from workbench.metrics.report import format_line

    for path in run_paths:
        run = read_run(path, check_duplicates=False, ranks=False)
        if not opts.complete:
            for qid in sorted(judged - set(run.topics())):
                _warn_missing(err, qid, path)
            if not judged & set(run.topics()):
                raise NoTopics()
        try:
            lines = evaluate_other(
                run, measures, TrecEvalFlags(per_topic=opts.per_topic, **opts.evaluator_options())
            )
        except UnevaluableTopic as error:
            out.write("".join(format_line(name, qid, value) for name, qid, value in error.lines))
            raise
        out.write(
            "".join(
                format_line(name, qid, value)
                for name, qid, value in lines
                if opts.summary or qid != "all"
            )
        )


def _warn_missing(err, qid: str, path: str) -> None:
    err.write(
        f"trec_eval: warning: qrels topic '{qid}' has no results in {path}: skipped as "
        "trec_eval 9.0.8 does (trec_eval 10 stops here; use -c to score it 0)\n"
    )


def _print_qrels_run(opts, measures, qrels, run, path, zscores, out, err) -> None:
    from workbench.metrics.evaluation import TopicError, evaluate
    from workbench.metrics.report import report_lines

    try:
        evaluation = evaluate(
            qrels,
            run,
            measures,
            judged_only=opts.judged_only,
            n_docs_in_collection=opts.n_docs,
            drop_in=True,
            **opts.evaluator_options(),
        )
    except TopicError as error:
        # trec_eval prints the topics before the failing one (-q), then stops
        partial = report_lines(error.evaluated, per_topic=opts.per_topic, summary=False)
        out.write("".join(partial))
        raise
    for qid in evaluation.skipped:
        _warn_missing(err, qid, path)
    if len(evaluation.per_topic) == len(evaluation.hidden):
        raise NoTopics()
    out.write(
        "".join(
            report_lines(
                evaluation, per_topic=opts.per_topic, summary=opts.summary, zscores=zscores
            )
        )
    )


class NoTopics(Exception):
    """No topic has both results and judgements: trec_eval prints nothing and exits 7."""
