"""A client of an OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp, Ollama, a
hosted service): one question, one answer, with timeouts and retries.

The protocol is spoken by the `openai` package (the optional extra `workbench[llm]`): it is the
reference client of that API, which vLLM, llama.cpp's server and Ollama implement and test
against, it is maintained by the API's authors, and it gives typed errors (429, 5xx, timeouts,
connection failures), usage counts and token log-probabilities. Its own retries are turned
off (max_retries=0) so that every attempt is counted and the back-off is ours:

    delay_n = min(cap, base * 2^(n-1)) * (1/2 + u/2),  u ~ U(0, 1) (seeded)

after attempt n fails with 408, 409, 429, a 5xx status, a timeout or a lost connection, at
least the server's Retry-After (seconds) when it sends one, for at most `attempts` attempts.
Other statuses are not retried: 401, 403 and 404 mean the endpoint, model or key is wrong
(`EndpointError.fatal`, which stops a whole job); others (e.g. 400, a context too long) concern
the one question.
"""

from __future__ import annotations

import random
import threading
import time
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

RETRIED_STATUSES = frozenset({408, 409, 429})
FATAL_STATUSES = frozenset({401, 403, 404})


class EndpointError(Exception):
    """No usable answer: the last failure, after `attempts` attempts."""

    def __init__(self, message: str, *, attempts: int, status: int | None = None) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.status = status

    @property
    def fatal(self) -> bool:
        """The endpoint, model or key is wrong: no other question will fare better."""
        return self.status in FATAL_STATUSES


class MissingClientLibrary(RuntimeError):
    """The `openai` package is not installed."""


@dataclass(frozen=True)
class Endpoint:
    """Where and how to ask: base URL (…/v1), model, key ('' when the server needs none),
    per-attempt timeout, attempts, and the back-off base and cap in seconds."""

    base_url: str
    model: str
    api_key: str = ""
    timeout_s: float = 60.0
    attempts: int = 5
    backoff_s: float = 1.0
    backoff_cap_s: float = 60.0


@dataclass(frozen=True)
class Reply:
    """One answer: its text, why it ended, token counts, the answer's token log-probabilities
    (as plain dicts: token, logprob, top_logprobs), latency of the answering attempt and the
    attempts it took."""

    text: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    logprobs: tuple[dict[str, Any], ...] | None
    latency_ms: float
    attempts: int


def _openai() -> Any:
    try:
        import openai
    except ImportError:
        raise MissingClientLibrary(
            "machine judges need the openai package: pip install 'workbench[llm]' "
            "(or pip install openai)"
        ) from None
    return openai


_models_built = threading.Lock()


def _build_response_models(openai: Any) -> None:
    """Build the schemas of the completion's pydantic models now, in one thread.

    The `openai` package defers building them to their first use (pydantic's
    `defer_build`), and pydantic's deferred build is not thread-safe: threads that first
    parse answers at the same moment may see a half-built model and fail with "BaseModel
    cannot be instantiated directly" (pydantic/pydantic, googleapis/python-genai#2991).
    Building every model reachable from ChatCompletion before the job's threads start
    removes the race; `model_rebuild` is a no-op on a model already built."""
    import pydantic

    def build(tp: Any, seen: set[type]) -> None:
        if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):
            if tp in seen:
                return
            seen.add(tp)
            tp.model_rebuild()
            for field in tp.model_fields.values():
                build(field.annotation, seen)
        for argument in typing.get_args(tp):
            build(argument, seen)

    with _models_built:
        build(openai.types.chat.ChatCompletion, set())


def backoff_delay(
    attempt: int, endpoint: Endpoint, rng: random.Random, retry_after: float
) -> float:
    """Seconds to wait after failed attempt `attempt` (1, 2, ...): the jittered exponential
    delay, at least `retry_after`, at most the cap."""
    delay = min(endpoint.backoff_cap_s, endpoint.backoff_s * 2 ** (attempt - 1))
    delay *= 0.5 + 0.5 * rng.random()
    return min(endpoint.backoff_cap_s, max(delay, retry_after))


def _retry_after(error: Any) -> float:
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else 0.0
    except ValueError:
        return 0.0


def _token(entry: Any) -> dict[str, Any]:
    return {
        "token": entry.token,
        "logprob": float(entry.logprob),
        "top_logprobs": [
            {"token": alt.token, "logprob": float(alt.logprob)}
            for alt in (getattr(entry, "top_logprobs", None) or [])
        ],
    }


class ChatClient:
    """Asks one endpoint; thread-safe (one HTTP connection pool shared by the threads)."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        seed: int = 0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        openai = _openai()
        _build_response_models(openai)
        self.endpoint = endpoint
        self._errors = openai
        self._client = openai.OpenAI(
            base_url=endpoint.base_url,
            api_key=endpoint.api_key or "none",
            max_retries=0,
            timeout=endpoint.timeout_s,
        )
        self._rng = random.Random(seed)
        self._sleep = sleep

    def close(self) -> None:
        self._client.close()

    def ask(self, messages: Sequence[dict[str, str]], parameters: dict[str, Any]) -> Reply:
        """The endpoint's answer to `messages`, asked with `parameters` (temperature,
        max_tokens, seed, top_logprobs: 0 asks for no log-probabilities); EndpointError when
        there is none after the retries."""
        request: dict[str, Any] = {
            "model": self.endpoint.model,
            "messages": list(messages),
            "temperature": parameters.get("temperature", 0.0),
            "max_tokens": parameters.get("max_tokens", 200),
        }
        if parameters.get("seed") is not None:
            request["seed"] = parameters["seed"]
        if parameters.get("top_logprobs"):
            request["logprobs"] = True
            request["top_logprobs"] = parameters["top_logprobs"]
        openai = self._errors
        attempt = 0
        while True:
            attempt += 1
            started = time.monotonic()
            try:
                completion = self._client.chat.completions.create(**request)
            except openai.APIStatusError as error:
                status = error.status_code
                message = f"HTTP {status} from {self.endpoint.base_url}: {_short(error)}"
                retried = status in RETRIED_STATUSES or status >= 500
                if not retried or attempt >= self.endpoint.attempts:
                    raise EndpointError(message, attempts=attempt, status=status) from None
                self._sleep(backoff_delay(attempt, self.endpoint, self._rng, _retry_after(error)))
                continue
            except (openai.APITimeoutError, openai.APIConnectionError) as error:
                kind = "timed out" if isinstance(error, openai.APITimeoutError) else "unreachable"
                if attempt >= self.endpoint.attempts:
                    raise EndpointError(
                        f"{self.endpoint.base_url} {kind} ({self.endpoint.timeout_s:g} s per "
                        f"attempt)",
                        attempts=attempt,
                    ) from None
                self._sleep(backoff_delay(attempt, self.endpoint, self._rng, 0.0))
                continue
            latency = (time.monotonic() - started) * 1000
            return _reply(completion, latency, attempt)


def _short(error: Any) -> str:
    text = str(getattr(error, "message", "") or error)
    return text[:300]


def _reply(completion: Any, latency_ms: float, attempts: int) -> Reply:
    if not completion.choices:
        return Reply("", "empty", 0, 0, None, latency_ms, attempts)
    choice = completion.choices[0]
    usage = completion.usage
    content = getattr(choice.logprobs, "content", None) if choice.logprobs else None
    return Reply(
        text=choice.message.content or "",
        finish_reason=choice.finish_reason or "stop",
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        logprobs=tuple(_token(entry) for entry in content) if content else None,
        latency_ms=latency_ms,
        attempts=attempts,
    )
