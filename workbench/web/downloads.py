"""Exports of `services.exports` as downloadable files, for the admin pages and the API."""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from workbench.services import campaigns as campaign_service
from workbench.services import exports
from workbench.services.errors import NotFound, ServiceError
from workbench.web.db import get_store
from workbench.web.inputs import form_int


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


def option_value(option: exports.ExportOption, args: Mapping[str, str]) -> Any:
    """The value of an export's option in the query `args` (see ExportOption's kinds)."""
    text = args.get(option.name)
    if option.kind == "int":
        return form_int(text, option.name, minimum=option.minimum)
    if option.kind == "flag":
        return text in {"1", "true", "yes"}
    if option.kind == "choice":
        value = args.get(option.name, option.choices[0])
        if value not in option.choices:
            raise ServiceError(
                f"{option.name} must be {' or '.join(option.choices)}; got {value!r}"
            )
        return value
    return text or None


def export_file(campaign_id: int, kind: str, args: Mapping[str, str]) -> tuple[io.BytesIO, str]:
    """Export `kind` (a name in exports.EXPORTS) of a campaign as (UTF-8 bytes, file name),
    its options read from the query `args`."""
    text = io.StringIO()
    with get_store().read_session() as session:
        campaign = campaign_service.get_campaign(session, campaign_id)
        export = exports.EXPORTS.get(kind)
        if export is None:
            raise NotFound(f"no export {kind!r}: expected one of {', '.join(exports.EXPORTS)}")
        options = {option.name: option_value(option, args) for option in export.options}
        written = export.write(session, campaign, text, options)
    return io.BytesIO(text.getvalue().encode()), written.filename
