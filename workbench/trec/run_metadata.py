"""ir_metadata: PRIMAD annotations of a run, in the comment lines that open its file
(Breuer, Keller & Schaer, "ir_metadata: An Extensible Metadata Schema for IR Experiments",
SIGIR 2022; PRIMAD after Ferro et al., SIGIR Forum 2016).

The block is YAML, each line behind ``#``, between ``# ir_metadata.start`` and
``# ir_metadata.end``; it holds ``schema-version``, ``run-version``, ``tag`` and the PRIMAD
components ``platform``, ``research goal``, ``implementation``, ``method``, ``actor``,
``data`` (any further keys are kept: the schema is extensible).  trec_eval skips these lines
as comments.  Reading never guesses: a block that does not end before the run lines, a line
in it without ``#``, YAML that does not parse or is not a mapping, anchors and aliases (a
small file could name an endless structure), nesting deeper than :data:`MAX_DEPTH`, more than
:data:`MAX_BYTES`, a second block, or a ``tag`` that names no run of the file: each is a
:class:`TrecFormatError` naming the line.  A run file without a block has no metadata.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from workbench.trec.errors import TrecFormatError
from workbench.trec.scan import Source, _source_name

START = "ir_metadata.start"
END = "ir_metadata.end"
PRIMAD = ("platform", "research goal", "implementation", "method", "actor", "data")
MAX_BYTES = 1 << 20
MAX_DEPTH = 32
_MARK = re.compile(r"^#\s*(ir_metadata\.(?:start|end))\s*$")


class RunMetadata(NamedTuple):
    """A run file's ir_metadata: the YAML as written (``#`` and one space taken off each
    line), the mapping it holds (dates as ISO text), and the lines of its start and end."""

    text: str
    data: dict[str, Any]
    start_line: int
    end_line: int

    @property
    def tag(self) -> str | None:
        tag = self.data.get("tag")
        return None if tag is None else str(tag)


def read_run_metadata(source: Source) -> RunMetadata | None:
    """The ir_metadata block among the comment lines that open a run file, or None."""
    path = _source_name(source)
    lines = _leading_comments(source, path)
    found: RunMetadata | None = None
    start: int | None = None
    body: list[str] = []
    for number, line in lines:
        mark = _MARK.match(line.strip())
        if start is None:
            if mark and mark.group(1) == START:
                if found is not None:
                    raise TrecFormatError(path, number, line, "one ir_metadata block per file")
                start, body = number, []
            elif mark:
                raise TrecFormatError(path, number, line, f"'# {START}' before '# {END}'")
            continue
        if mark and mark.group(1) == END:
            found = parse_metadata("\n".join(body) + "\n", path, start)._replace(end_line=number)
            start = None
        elif mark:
            raise TrecFormatError(path, number, line, f"'# {END}' before another '# {START}'")
        else:
            if not line.startswith("#"):
                raise TrecFormatError(path, number, line, f"'#' lines up to '# {END}'")
            body.append(line[2:] if line.startswith("# ") else line[1:])
    if start is not None:
        raise TrecFormatError(path, start, f"# {START}", f"'# {END}' before the run lines")
    return found


def parse_metadata(text: str, path: str = "<ir_metadata>", start_line: int = 0) -> RunMetadata:
    """The block's YAML ``text`` (its first line is the file's line ``start_line + 1``)."""
    import yaml

    _check_tokens(text, path, start_line)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        number = start_line + 1 + (mark.line if mark is not None else 0)
        problem = getattr(error, "problem", None) or str(error)
        line = _line_of(text, number - start_line - 1)
        raise TrecFormatError(path, number, line, f"ir_metadata in YAML ({problem})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise TrecFormatError(path, start_line + 1, _line_of(text, 0), "ir_metadata as a mapping")
    return RunMetadata(text, _plain(data), start_line, start_line)


def _check_tokens(text: str, path: str, start_line: int) -> None:
    """Refuse anchors, aliases, tags and nesting deeper than MAX_DEPTH before building
    anything (YAML errors are left to safe_load, which names their line)."""
    import yaml

    opening = (
        yaml.BlockMappingStartToken,
        yaml.BlockSequenceStartToken,
        yaml.FlowMappingStartToken,
        yaml.FlowSequenceStartToken,
    )
    closing = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)
    depth = 0
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            index = token.start_mark.line
            if isinstance(token, yaml.AnchorToken | yaml.AliasToken | yaml.TagToken):
                expected = "ir_metadata without YAML anchors, aliases or tags"
            elif isinstance(token, opening) and depth + 1 > MAX_DEPTH:
                expected = f"ir_metadata nested at most {MAX_DEPTH} deep"
            else:
                depth += isinstance(token, opening) - isinstance(token, closing)
                continue
            raise TrecFormatError(path, start_line + 1 + index, _line_of(text, index), expected)
    except yaml.YAMLError:
        return


def _plain(value: Any) -> Any:
    """YAML values as JSON's: mappings with text keys, lists, text, numbers, booleans, None;
    dates and times as ISO text."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, float) and value != value:
        return None  # NaN: JSON has none
    return value


def metadata_of_runs(
    metadata: RunMetadata | None, tags: Sequence[str], path: str
) -> dict[str, RunMetadata]:
    """Which runs of a file the block describes: the run its ``tag`` names, or the file's
    only run when it names none; a tag that is no run of the file, or no tag in a file of
    several runs, is refused."""
    if metadata is None:
        return {}
    line = f"# {START}"
    if metadata.tag is None:
        if len(tags) > 1:
            raise TrecFormatError(
                path, metadata.start_line, line,
                f"a tag in the ir_metadata of a file of several runs ({', '.join(tags)})",
            )  # fmt: skip
        return dict.fromkeys(tags, metadata)
    if metadata.tag not in tags:
        raise TrecFormatError(
            path, metadata.start_line, line,
            f"the ir_metadata's tag ({metadata.tag!r}) to be a run tag of the file "
            f"({', '.join(tags)})",
        )  # fmt: skip
    return {metadata.tag: metadata}


def metadata_lines(text: str) -> str:
    """The block as a run file opens with it: ``# ir_metadata.start``, ``# `` + each YAML
    line, ``# ir_metadata.end``."""
    body = "".join(f"# {line}".rstrip() + "\n" for line in text.rstrip("\n").split("\n"))
    return f"# {START}\n{body}# {END}\n"


def metadata_json(text: str | None) -> dict[str, Any] | None:
    """The mapping of stored YAML text (None for a run without metadata)."""
    return None if text is None else parse_metadata(text).data


def _leading_comments(source: Source, path: str) -> list[tuple[int, str]]:
    """(line number, text) of the lines before the first run line: comments and blank
    lines, at most MAX_BYTES of them."""
    stream, owned = _open_binary(source)
    out: list[tuple[int, str]] = []
    size = 0
    try:
        for number, raw in enumerate(stream, 1):
            if isinstance(raw, str):
                raw = raw.encode()
            size += len(raw)
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            stripped = text.strip()
            if stripped and not stripped.startswith("#"):
                break
            if size > MAX_BYTES:
                raise TrecFormatError(
                    path, number, text[:80], f"comment lines of at most {MAX_BYTES} bytes"
                )
            if stripped:
                out.append((number, stripped if stripped.startswith("#") else text))
    finally:
        if owned:
            stream.close()
    return out


def _open_binary(source: Source) -> tuple[Any, bool]:
    if isinstance(source, str | os.PathLike):
        return open(source, "rb"), True
    raise TypeError("run metadata is read from a file path")


def _line_of(text: str, index: int) -> str:
    lines = text.split("\n")
    return f"# {lines[index]}" if 0 <= index < len(lines) else ""
