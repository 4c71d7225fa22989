"""What an endpoint accepts, learned by a small probe before the first paid request.

`llm.response_mode: auto` sends the strongest structured output the server takes: a JSON
schema in `response_format` (OpenAI, vLLM, SGLang, Ollama), a schema inside a `json_object`
response format (llama-cpp-python's own field), plain JSON mode, or nothing. A form counts
only if the server *enforces* it: the probe asks for an object whose one required key the
prompt never names, so a server that accepts the field and ignores it is caught. The
answer is kept in the cache folder per (base URL, model), so a rebuild sends nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx  # the HTTP library of openai >= 3

from memsynth.core.config import redacted
from memsynth.core.errors import BuildFailed, ConfigError
from memsynth.core.secrets import mask
from memsynth.llm.retry import JITTER

ENDPOINTS_DIR = "endpoints"  # inside the cache folder
PROBE_KEY = "memsynth_probe"
PROBE_SCHEMA = {"type": "object", "properties": {PROBE_KEY: {"type": "integer"}},
                "required": [PROBE_KEY], "additionalProperties": False}
# Strongest first; each mode's response_format for the probe (None: the field is left out).
FORMS: tuple[tuple[str, dict[str, Any] | None], ...] = (
    ("json_schema", {"type": "json_schema",
                     "json_schema": {"name": "probe", "schema": PROBE_SCHEMA, "strict": False}}),
    ("json_object_schema", {"type": "json_object", "schema": PROBE_SCHEMA}),
    ("json_object", {"type": "json_object"}),
    ("text", None),
)
ENFORCING = {"json_schema", "json_object_schema"}
TRIES = 8  # per form, for answers that say nothing about the form (429, gateway errors, cut-offs)


@dataclass(frozen=True)
class Capabilities:
    """What one endpoint does for one model."""

    base_url: str
    model: str
    served: tuple[str, ...] = ()  # the names /models lists ([] when it lists none)
    context: int | None = None  # the model's context in tokens, when /models says
    response_mode: str | None = None  # the strongest structured output it enforces (None: not probed)
    seed: bool = True  # False: the server refused a request carrying `seed`
    # Two sampled answers under one seed agreed (None: not asked, as no seed is set).
    seed_honoured: bool | None = None
    probe_requests: int = 0  # chat requests the probe sent (0: read from the cache folder)


def record_path(directory: Path, base_url: str, model: str) -> Path:
    digest = hashlib.sha256(f"{base_url.rstrip('/')}|{model}".encode()).hexdigest()[:20]
    return directory / ENDPOINTS_DIR / f"{digest}.json"


def learn(directory: Path, base_url: str, api_key: str, model: str, *, probe_formats: bool,
          seed: int | None = None, timeout_s: float = 120.0, refresh: bool = False) -> Capabilities:
    """The endpoint's capabilities for `model`: from the cache folder, or probed and kept there."""
    path = record_path(directory, base_url, model)
    if not refresh and path.is_file():
        try:
            stored = Capabilities(**{**json.loads(path.read_text(encoding="utf-8")), "probe_requests": 0})
            stored = Capabilities(**{**asdict(stored), "served": tuple(stored.served)})
        except (ValueError, TypeError):
            stored = None
        # Kept, unless it lacks what this build asks: the forms, or whether a newly set seed holds.
        unasked_seed = seed is not None and stored is not None and stored.seed and stored.seed_honoured is None
        if stored is not None and (stored.response_mode or not probe_formats) and not (probe_formats and unasked_seed):
            return stored
    with httpx.Client(base_url=base_url.rstrip("/") + "/", timeout=timeout_s,
                      headers={"Authorization": f"Bearer {api_key}"}) as http:
        probe = _Probe(http, base_url, model)
        served, context = probe.models()
        mode, seed_ok = probe.structured_output(seed) if probe_formats else (None, True)
        honoured = probe.seed_honoured(seed) if seed is not None and seed_ok and probe_formats else None
    # Kept with a URL's user:password masked: the file names the endpoint, never its secret.
    found = Capabilities(base_url=redacted(base_url), model=model, served=served, context=context,
                         response_mode=mode, seed=seed_ok, seed_honoured=honoured, probe_requests=probe.sent)
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_suffix(f".{os.getpid()}.tmp")
    scratch.write_text(json.dumps({k: v for k, v in asdict(found).items() if k != "probe_requests"},
                                  indent=1), encoding="utf-8")
    os.replace(scratch, path)  # whole or not at all
    return found


class _Probe:
    def __init__(self, http: httpx.Client, base_url: str, model: str):
        self.http = http
        self.base_url = redacted(base_url)  # as errors show it: a user:password in it masked
        self.model = model
        self.sent = 0

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
        try:
            return self.http.request(method, path.lstrip("/"), json=body)
        except httpx.ConnectError as exc:
            raise BuildFailed(f"cannot reach the endpoint at {self.base_url}: cannot connect: {exc}") from exc

    def _refused_key(self, response: httpx.Response) -> None:
        if response.status_code in (401, 403):
            raise BuildFailed(f"the endpoint at {self.base_url} refused the API key (HTTP "
                              f"{response.status_code}): check the variable llm.api_key_env names")

    def models(self) -> tuple[tuple[str, ...], int | None]:
        """The served names and the model's context, from /models; refuses a name not served."""
        try:
            response = self._call("GET", "/models")
        except httpx.HTTPError:
            return (), None  # no answer here says nothing: the chat probe will tell
        self._refused_key(response)
        if response.status_code == 404 and not self.base_url.rstrip("/").endswith("/v1"):
            raise ConfigError(f"the endpoint at {self.base_url} has no /models: the base URL does not end "
                              "in /v1, where OpenAI-compatible servers answer")
        try:
            listed = [m for m in response.json().get("data", []) if isinstance(m, dict) and "id" in m]
        except (ValueError, AttributeError):
            return (), None
        served = tuple(str(m["id"]) for m in listed)
        if served and self.model not in served:
            shown = ", ".join(served[:8]) + (f" and {len(served) - 8} more" if len(served) > 8 else "")
            raise ConfigError(f"the endpoint at {self.base_url} does not serve the model {self.model!r}; "
                              f"it serves {shown}: set llm.model (or $MEMSYNTH_MODEL) to one of them")
        entry = next((m for m in listed if m["id"] == self.model), {})
        meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
        # vLLM: max_model_len; llama.cpp's C++ server: meta.n_ctx_train; LM Studio and
        # OpenRouter: context_length.
        context = entry.get("max_model_len") or entry.get("context_length") or meta.get("n_ctx_train")
        return served, int(context) if isinstance(context, (int, float)) and context > 0 else None

    def structured_output(self, seed: int | None) -> tuple[str, bool]:
        """The strongest form the server enforces, and whether it takes `seed`."""
        seed_ok = True
        refusals: list[str] = []
        for mode, form in FORMS:
            while True:
                outcome = self._try(form, seed if seed_ok and seed is not None else None)
                if outcome == "seed refused":
                    seed_ok = False
                    continue
                break
            if outcome == "enforced" or (outcome == "accepted" and mode not in ENFORCING):
                return mode, seed_ok
            refusals.append(f"{mode}: {outcome}")
        raise ConfigError(f"the endpoint at {self.base_url} refused every form of request memsynth can send "
                          f"({'; '.join(refusals)})")

    def seed_honoured(self, seed: int) -> bool | None:
        """Whether two sampled answers under one seed agree (None: the server would not say)."""
        body: dict[str, Any] = {
            "model": self.model, "max_tokens": 16, "temperature": 1.0, "seed": seed,
            "messages": [{"role": "user", "content": "Write eight random words."}]}
        answers = []
        for _ in range(2):
            response = self._send(body, whole=False)  # 16 random words may well be cut off
            if isinstance(response, str):
                return None
            try:
                answers.append(response.json()["choices"][0]["message"]["content"])
            except (ValueError, KeyError, IndexError, TypeError):
                return None
        return answers[0] == answers[1]

    def _try(self, form: dict[str, Any] | None, seed: int | None) -> str:
        body: dict[str, Any] = {
            "model": self.model, "max_tokens": 32, "temperature": 0,
            "messages": [{"role": "user", "content": "Reply with one small JSON object."}]}
        if form is not None:
            body["response_format"] = form
        if seed is not None:
            body["seed"] = seed
        response = self._send(body)
        if isinstance(response, str):
            return response
        choice = response.json()["choices"][0]
        try:
            answer = json.loads(choice["message"]["content"] or "")
        except ValueError:
            return "accepted"
        return "enforced" if isinstance(answer, dict) and PROBE_KEY in answer else "accepted"

    def _send(self, body: dict[str, Any], whole: bool = True) -> httpx.Response | str:
        """A readable answer to `body` (`whole`: not cut off mid-JSON), or why the request itself
        was refused; asked again on answers that say nothing about it (429, gateway errors)."""
        last = ""
        for attempt in range(TRIES):
            if attempt:
                time.sleep(min(8.0, JITTER.uniform(0.2, 0.5) * 2 ** attempt))
            self.sent += 1
            try:
                response = self._call("POST", "/chat/completions", body)
            except httpx.HTTPError as exc:  # dropped or timed out: says nothing about the form
                last = f"{type(exc).__name__}"
                continue
            self._refused_key(response)
            said = mask(response.text)[:300]  # masked whole: a cut could leave part of a key
            if response.status_code == 404:
                raise ConfigError(f"the endpoint at {self.base_url} answered HTTP 404 to a chat request for "
                                  f"{self.model!r}: {said}")
            if response.status_code >= 400:
                if body.get("seed") is not None and "seed" in said.lower() and response.status_code < 500:
                    return "seed refused"
                if _says_invalid(response.status_code, said):
                    return f"refused (HTTP {response.status_code}: {said[:120]})"
                last = f"HTTP {response.status_code}"
                continue  # 429, a gateway's 502, a passing 500: ask again
            try:
                choice = response.json()["choices"][0]
                content = choice["message"]["content"] or ""
            except (ValueError, KeyError, IndexError, TypeError):
                last = "an unreadable answer"
                continue
            if whole and choice.get("finish_reason") == "length":
                try:
                    json.loads(content)
                except ValueError:
                    last = "a cut-off answer"
                    continue
            return response
        raise BuildFailed(f"the endpoint at {self.base_url} did not answer memsynth's capability probe "
                          f"({TRIES} tries, last: {last}); re-run when it answers, or set llm.response_mode")


def _says_invalid(status: int, said: str) -> bool:
    """A refusal of the request itself: a 4xx (429 and 408 aside), or a 500 naming the field
    (llama-cpp-python answers an unknown response_format type with one)."""
    if status in (408, 409, 425, 429):
        return False
    if status < 500:
        return True
    return status == 500 and any(word in said for word in ("response_format", "json_schema", "json_object"))
