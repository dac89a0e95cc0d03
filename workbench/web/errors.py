"""The one place that turns refused input into responses, for every blueprint.

A ServiceError (bad input, a rule of the campaign) is a 400, NotFound a 404 and Conflict (an
archived campaign or pool refusing a change) a 409; a
TrecFormatError (file, line, what was expected) is a 400. Under /api/ and for token requests
the body is JSON {"error": message}; otherwise the app's error page with the message.
Views that want to stay on their page instead (a form that failed) catch the error and flash
it with one of `FLASH_CATEGORIES`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from flask import Flask, abort, jsonify, render_template

from workbench.services.errors import Conflict, NotFound, ServiceError
from workbench.trec import TrecFormatError
from workbench.web.security import wants_json

# the flash categories the style sheet knows; a view flashes only these
FLASH_CATEGORIES = ("info", "warning", "error")


TITLES = {400: "Bad request", 404: "Not found", 409: "Conflict"}

P = ParamSpec("P")
T = TypeVar("T")


def or_404(read: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """read(*args, **kwargs), its NotFound a plain 404 even inside a form's transaction
    (`web.admin.change`, which flashes other refusals): a page of nothing is not found."""
    try:
        return read(*args, **kwargs)
    except NotFound:
        abort(404)


def not_found_as_404(read: Callable[P, T]) -> Callable[P, T]:
    """`read` (a service's lookup) with its NotFound as `or_404` makes it, typed as `read`."""

    @functools.wraps(read)
    def found(*args: P.args, **kwargs: P.kwargs) -> T:
        return or_404(read, *args, **kwargs)

    return found


def status_of(error: ValueError) -> int:
    """The HTTP status of a refused request: 404 NotFound, 409 Conflict, else 400."""
    if isinstance(error, NotFound):
        return 404
    return 409 if isinstance(error, Conflict) else 400


def _refused(error: ValueError):
    code = status_of(error)
    if wants_json():
        return jsonify(error=str(error)), code
    title = TITLES[code]
    return render_template("error.html", code=code, title=title, message=str(error)), code


def register_error_handlers(app: Flask) -> None:
    """ServiceError, NotFound and TrecFormatError raised by any view become 4xx responses."""
    app.register_error_handler(ServiceError, _refused)
    app.register_error_handler(TrecFormatError, _refused)
