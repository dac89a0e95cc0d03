"""Exports of `services.exports` as downloadable files, for the admin pages and the API."""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Mapping
from urllib.parse import quote

from workbench.services import campaigns as campaign_service
from workbench.services import exports, pools
from workbench.services.errors import NotFound, ServiceError
from workbench.web.db import get_store
from workbench.web.inputs import form_int

EXPORT_KINDS = ("pool", "qrels", "log")


def content_disposition(filename: str) -> str:
    """An attachment header per RFC 6266: an ASCII `filename` fallback (quotes, backslashes
    and control characters replaced) and, for any other name, `filename*` in UTF-8 per
    RFC 5987."""
    ascii_name = unicodedata.normalize("NFKD", filename).encode("ascii", "ignore").decode()
    fallback = (
        "".join("_" if ch in '"\\' or not ch.isprintable() else ch for ch in ascii_name).strip()
        or "download"
    )
    header = f'attachment; filename="{fallback}"'
    if fallback != filename:
        header += f"; filename*=UTF-8''{quote(filename, safe='')}"
    return header


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text) or "campaign"


def export_file(campaign_id: int, kind: str, args: Mapping[str, str]) -> tuple[io.BytesIO, str]:
    """Export `kind` ('pool', 'qrels' or 'log') of a campaign as (UTF-8 bytes, file name).

    pool options: pool=<number in the campaign> (default: the latest). qrels options:
    assessor=<username>, final=1, binary_level=<int> (the file name says .binaryN, else
    .graded), allow_incomplete=1 (export although documents lack a label; the file says so in
    a # header); log: format=csv|json.
    """
    text = io.StringIO()
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_id)
        slug = _slug(campaign.name)
        if kind == "pool":
            pool = pools.get_pool(session, campaign, form_int(args.get("pool"), "pool", minimum=1))
            name = f"{slug}.pool{pool.number}.txt"
            exports.export_pool(session, pool, text)
        elif kind == "qrels":
            assessor = args.get("assessor") or None
            final = args.get("final") in {"1", "true", "yes"}
            allow_incomplete = args.get("allow_incomplete") in {"1", "true", "yes"}
            level = form_int(args.get("binary_level"), "binary_level")
            suffix = f".{_slug(assessor)}" if assessor else (".final" if final else "")
            suffix += f".binary{level}" if level is not None else ".graded"
            suffix += ".incomplete" if allow_incomplete else ""
            name = f"{slug}{suffix}.qrels"
            exports.export_qrels(
                session,
                campaign,
                text,
                assessor=assessor,
                final=final,
                binary_level=level,
                allow_incomplete=allow_incomplete,
            )
        elif kind == "log":
            fmt = args.get("format", "csv")
            if fmt not in {"csv", "json"}:
                raise ServiceError(f"format must be csv or json; got {fmt!r}")
            name = f"{slug}.judgements.{fmt}"
            exports.export_judgement_log(session, campaign, text, fmt=fmt)
        else:
            raise NotFound(f"no export {kind!r}: expected one of {', '.join(EXPORT_KINDS)}")
    return io.BytesIO(text.getvalue().encode()), name
