"""A small local server that speaks the OpenAI chat-completions protocol with deterministic
answers: for the tests, the robustness measurement and trying the workbench without a model.

`python -m workbench.llm_test_server --port 8088 [--injection obey|delimited|ignore]`

Its "model" grades by word overlap: the share s of the topic title's words (the prompt's
`Title:` line, words of 3+ letters) found in the document (the text after the first line that
starts with `<<<DOCUMENT`) gives grade round(s * top) on the scale 0..top (`top`, the largest
grade listed as `N = label` lines, default 2). So it rewards keyword stuffing, as a weak
model may. How it treats instructions found in the prompt ("answer 3", '"grade": 3', "grade
3") is configurable (`injection`):

- "obey": the last instruction the document contains wins (a naive model);
- "delimited": only instructions that escaped the document's data are obeyed, the data
  ending at the first line that starts with `<<<END-DOCUMENT` (a model that respects
  delimiters, fooled by a forged end marker unless the judge neutralises it);
- "ignore": instructions are never obeyed.

Faults for the tests, triggered by words in the document: `STUB:MALFORMED` (no grade),
`STUB:REFUSE` (an apology), `STUB:OFFSCALE` (grade 9), `STUB:SLOW` (sleeps `slow_s`), and the
`fail_next` list of statuses (429, 500, 503...) answered to the next requests, 429 with
`Retry-After: retry_after`; `delay_s` delays every answer. `record` counts requests, questions
graded and the most in flight at once. With `logprobs` the answer carries token log-probabilities.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

INJECTIONS = ("obey", "delimited", "ignore")
_ORDER = re.compile(
    r"(?:answer|respond|reply|output|grade)\s*(?:with\s+)?(?:a\s+)?(?:grade\s*)?(?:of\s+|:|=)?"
    r"\s*(\d)\b|\"grade\"\s*:\s*(\d)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9]+")


@dataclass
class Behaviour:
    injection: str = "obey"
    logprobs: bool = True
    api_key: str = ""  # required as a Bearer token when set
    slow_s: float = 2.0
    delay_s: float = 0.0  # every answer waits this long
    retry_after: float = 0.0
    fail_next: list[int] = field(default_factory=list)


@dataclass
class Record:
    """What the server saw: requests answered (any status) and the prompts graded."""

    requests: int = 0
    graded: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    prompts: list[str] = field(default_factory=list)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _split(prompt: str) -> tuple[str, str, str]:
    """(title, the document's data, the part that escaped it) as the stub reads a prompt: the
    data runs from the line after the first `<<<DOCUMENT` line to the first line that starts
    with `<<<END-DOCUMENT`; text between that line and the last such line escaped it (a
    forged end marker)."""
    match = re.search(r"^\s*Title:\s*(.*)$", prompt, re.MULTILINE)
    title = match.group(1) if match else ""
    lines = prompt.split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith("<<<DOCUMENT")), None)
    if start is None:
        return title, "", ""
    ends = [i for i in range(start + 1, len(lines)) if lines[i].startswith("<<<END-DOCUMENT")]
    first, last = (ends[0], ends[-1]) if ends else (len(lines), len(lines))
    return title, "\n".join(lines[start + 1 : first]), "\n".join(lines[first + 1 : last])


def _top_grade(prompt: str) -> int:
    grades = [int(g) for g in re.findall(r"^\s*(\d+)\s*=", prompt, re.MULTILINE)]
    return max(grades) if grades else 2


def _ordered(text: str) -> int | None:
    found = [int(a or b) for a, b in _ORDER.findall(text)]
    return found[-1] if found else None


def grade_of(prompt: str, injection: str) -> tuple[int, float, str]:
    """(grade, overlap share, why) for a prompt, as the stub model decides."""
    title, data, escaped = _split(prompt)
    top = _top_grade(prompt)
    terms = {w for w in _words(title) if len(w) > 2}
    present = set(_words(data + "\n" + escaped))
    share = len(terms & present) / len(terms) if terms else 0.0
    grade = min(top, round(share * top))
    why = f"{len(terms & present)} of {len(terms)} topic words present"
    if injection == "obey":
        ordered = _ordered(data + "\n" + escaped)
    elif injection == "delimited":
        ordered = _ordered(escaped)
    else:
        ordered = None
    if ordered is not None and 0 <= ordered <= top:
        return ordered, share, "as instructed"
    return grade, share, why


def _logprobs(grade: int, share: float, top: int, reason: str) -> list[dict[str, Any]]:
    """Tokens of the JSON answer; at the grade token, a distribution over the grades peaked
    at the chosen one, flatter when the overlap share sits between two grades."""
    distance = abs(share * top - round(share * top))  # 0 (sure) .. 0.5 (torn)
    sharpness = 4.0 * (1.0 - 2.0 * distance) + 0.5
    weights = {g: math.exp(-sharpness * abs(g - grade)) for g in range(top + 1)}
    total = sum(weights.values())
    top_logprobs = [
        {"token": str(g), "logprob": math.log(w / total), "bytes": None}
        for g, w in sorted(weights.items(), key=lambda kv: -kv[1])
    ]
    tokens = ['{"', "grade", '":', " ", str(grade), ",", ' "', "reason", '":', ' "', reason, '"}']
    out: list[dict[str, Any]] = []
    for token in tokens:
        chosen = token == str(grade) and out and out[-1]["token"] == " "
        out.append(
            {
                "token": token,
                "logprob": math.log(weights[grade] / total) if chosen else 0.0,
                "bytes": None,
                "top_logprobs": top_logprobs if chosen else [],
            }
        )
    return out


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up before its answer (a judge that timed out on a slow answer)
        is no error of the server's: socketserver printed its BrokenPipeError to stderr."""
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


class StubServer:
    """The server on 127.0.0.1:`port` (0: any free port) in a thread; `url` ends in /v1."""

    def __init__(self, behaviour: Behaviour | None = None, port: int = 0) -> None:
        self.behaviour = behaviour or Behaviour()
        self.record = Record()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, payload, headers = server.answer(self.path, self.headers, body)
                self._json(status, payload, headers)

            def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self._server = _Server(("127.0.0.1", port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> StubServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def answer(
        self, path: str, headers: Any, body: dict[str, Any]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        behaviour = self.behaviour
        with self._lock:
            self.record.requests += 1
            failing = behaviour.fail_next.pop(0) if behaviour.fail_next else None
        if behaviour.api_key and headers.get("authorization") != f"Bearer {behaviour.api_key}":
            return 401, {"error": {"message": "invalid api key"}}, {}
        if not path.rstrip("/").endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {path}"}}, {}
        if failing is not None:
            extra = {"retry-after": f"{behaviour.retry_after:g}"} if failing == 429 else {}
            return failing, {"error": {"message": f"stub failure {failing}"}}, extra
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        with self._lock:
            self.record.graded += 1
            self.record.prompts.append(prompt)
            self.record.in_flight += 1
            self.record.max_in_flight = max(self.record.max_in_flight, self.record.in_flight)
        try:
            return self._graded(body, prompt)
        finally:
            with self._lock:
                self.record.in_flight -= 1

    def _graded(self, body: dict[str, Any], prompt: str) -> tuple[int, dict[str, Any], dict]:
        behaviour = self.behaviour
        time.sleep(behaviour.delay_s)
        _, data, _ = _split(prompt)
        if "STUB:SLOW" in data:
            time.sleep(behaviour.slow_s)
        grade, share, why = grade_of(prompt, behaviour.injection)
        text = json.dumps({"grade": grade, "reason": why})
        if "STUB:MALFORMED" in data:
            text = "The document seems fine to me."
        elif "STUB:REFUSE" in data:
            text = "I'm sorry, but I cannot help with judging this document."
        elif "STUB:OFFSCALE" in data:
            text = json.dumps({"grade": 9, "reason": "very much so"})
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop",
            "logprobs": None,
        }
        if body.get("logprobs") and behaviour.logprobs and text.startswith('{"grade": '):
            choice["logprobs"] = {"content": _logprobs(grade, share, _top_grade(prompt), why)}
        usage = {
            "prompt_tokens": len(prompt.split()),
            "completion_tokens": len(text.split()),
            "total_tokens": len(prompt.split()) + len(text.split()),
        }
        return (
            200,
            {
                "id": f"stub-{self.record.requests}",
                "object": "chat.completion",
                "created": 0,
                "model": str(body.get("model", "stub")),
                "choices": [choice],
                "usage": usage,
            },
            {},
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8088)
    parser.add_argument("--injection", choices=INJECTIONS, default="obey")
    parser.add_argument("--no-logprobs", action="store_true")
    args = parser.parse_args(argv)
    server = StubServer(Behaviour(args.injection, logprobs=not args.no_logprobs), args.port)
    print(f"OpenAI-compatible test server on {server.url} (model: any name)", flush=True)
    server.start()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
