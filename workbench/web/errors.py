"""The one place that turns refused input into responses, for every blueprint.

A ServiceError (bad input, a rule of the campaign) is a 400 and NotFound a 404; a
TrecFormatError (file, line, what was expected) is a 400. Under /api/ and for token requests
the body is JSON {"error": message}; otherwise the app's error page with the message.
Views that want to stay on their page instead (a form that failed) catch the error and flash
it with one of `FLASH_CATEGORIES`.
"""

from __future__ import annotations

from flask import Flask, jsonify, render_template

from workbench.services.errors import NotFound, ServiceError
from workbench.trec import TrecFormatError
from workbench.web.security import wants_json

# the flash categories the style sheet knows; a view flashes only these
FLASH_CATEGORIES = ("info", "warning", "error")


def _refused(error: ValueError):
    code = 404 if isinstance(error, NotFound) else 400
    if wants_json():
        return jsonify(error=str(error)), code
    title = "Not found" if code == 404 else "Bad request"
    return render_template("error.html", code=code, title=title, message=str(error)), code


def register_error_handlers(app: Flask) -> None:
    """ServiceError, NotFound and TrecFormatError raised by any view become 4xx responses."""
    app.register_error_handler(ServiceError, _refused)
    app.register_error_handler(TrecFormatError, _refused)
