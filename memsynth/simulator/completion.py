"""What the simulator answers: a chat completion whose content fits the requested schema and,
for a recipe's stage, the stage's variables (`memsynth.simulator.answers`).

An answer is deterministic in the request (model, schema, prompt, sample): a retried call gets
the answer the first call would have had, so a build through faults ends with the same rows
as a clean one. A repair of the simulator's own answer (the exchange so far, ending in the
problems found with it) draws another answer, from the whole exchange, as a model would give.

A stage's answer passes the stage's own checks (memsynth.generation.stage.evaluate, given
the variables the build sent): a draft that fails one is drawn again from the same
generator, up to REDRAWS times, and the redraws are counted (`/stats`).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
import time
from typing import Any

from memsynth.generation.stage import evaluate
from memsynth.simulator.answers import StageAnswer
from memsynth.simulator.fake import SchemaFaker
from memsynth.simulator.generic import GenericAnswer
from memsynth.simulator.profiles import ServerProfile
from memsynth.simulator.prompt_cache import PrefixCache
from memsynth.simulator.stages import stages_by_schema
from memsynth.simulator.text import TextMaker

MODEL_ID = "memsynth-simulator"
REDRAWS = 50
_SCHEMA_IN_PROMPT = re.compile(r'<json-schema name="([^"]*)">\s*(\{.*\})\s*</json-schema>', re.DOTALL)


class AnswerMaker:
    """Answers chat requests from their schema and stage variables (or from a test's script)."""

    def __init__(self, answers: dict[str, StageAnswer], profile: ServerProfile, prompt_cache: PrefixCache,
                 ignores_seed: bool = False):
        self.answers = answers
        self.profile = profile
        self.prompt_cache = prompt_cache
        # Sampled answers (temperature above 0) differ on every request, `seed` or not.
        self.ignores_seed = ignores_seed
        self._draws = itertools.count()
        self.scripts: dict[str, list[Any]] = {}
        # Drafts a stage's checks refused and drew again, and answers sent that still fail
        # them (after REDRAWS), by schema name.
        self.redrawn: dict[str, int] = {}
        self.failing: dict[str, int] = {}

    def script(self, schema_name: str, contents: list[Any]) -> None:
        """Answer the next requests for `schema_name` with these contents, in order (tests).

        An entry is the content itself, or a function of the stage's variables (the request's
        `memsynth.variables`, empty when none were sent) that returns it.
        """
        self.scripts.setdefault(schema_name, []).extend(contents)

    def missing_variables(self, body: dict[str, Any]) -> str | None:
        """Why a recipe stage's request cannot be answered: it carries no stage variables."""
        fmt = body.get("response_format") or {}
        name = (fmt.get("json_schema") or {}).get("name")
        known = name in self.answers or (isinstance(name, str) and name in stages_by_schema())
        if known and not self.scripts.get(name) and not body.get("memsynth"):
            return (f"memsynth simulator: the request for {name} carries no stage variables; "
                    "set llm.stage_variables: true in the config (or build with --llm simulator)")
        return None

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """A chat.completion answering `body` with JSON valid against its schema."""
        messages = body.get("messages") or []
        prompt = "\n".join(str(m.get("content", "")) for m in messages[:2])
        schema, name = requested_schema(body, prompt, self.profile.schema_in_json_object)
        scripted = self.scripts.get(name or "")
        hints = body.get("memsynth") or {}
        # Another sample of the same prompt (a new cache key) gets another answer.
        sample = hints.get("sample", 0)
        salt = f"|{hints['salt']}" if hints.get("salt") else ""  # a regenerated item
        if self.ignores_seed and float(body.get("temperature") or 0) > 0:
            salt += f"|draw {next(self._draws)}"
        variables = hints.get("variables") or {}
        first = f"{body.get('model')}|{name}|{prompt}|{sample}{salt}"
        if scripted:
            seed = hashlib.sha256(first.encode()).digest()
            content = scripted.pop(0)
            content = content(variables) if callable(content) else content
        else:
            seed, content = self._answer(first, schema, name, variables)
            refused = {str(m.get("content", "")) for m in messages[2:] if m.get("role") == "assistant"}
            if content in refused:
                # A repair of this very answer: another one, drawn from the whole exchange, as a
                # model would give. A repair of an answer cut or garbled on its way (or scripted)
                # gets the first ask's answer, the one a clean exchange would have kept.
                exchange = "".join(f"|{m.get('role')}:{m.get('content', '')}" for m in messages[2:])
                seed, content = self._answer(first + exchange, schema, name, variables)
        prompt_tokens = max(1, len(prompt) // 4)
        completion_tokens = max(1, len(content) // 4)
        cached_tokens = self.prompt_cache.read(str(body.get("model")), prompt)
        return {
            "id": "chatcmpl-sim-" + seed.hex()[:24],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or MODEL_ID,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens,
                      "prompt_tokens_details": {"cached_tokens": cached_tokens}},
        }


    def _answer(self, seed_text: str, schema: dict[str, Any] | None, name: str | None,
                variables: dict[str, Any]) -> tuple[bytes, str]:
        """(seed, content) of the answer drawn from `seed_text`."""
        seed = hashlib.sha256(seed_text.encode()).digest()
        text = TextMaker(random.Random(int.from_bytes(seed[:8], "big")), variables.get("language", "en"))
        return seed, text.paragraph(3) if schema is None else self._draw(schema, name, variables, text)

    def _draw(self, schema: dict[str, Any], name: str | None, variables: dict[str, Any], text: TextMaker) -> str:
        """A draft of the schema, shaped by the stage's answer, that passes the stage's checks."""
        answer = self.answers.get(name or "")
        stage = stages_by_schema().get(name or "") if variables else None
        for attempt in range(REDRAWS + 1):
            if answer is None and stage is not None:
                # A stage its recipe taught the simulator nothing about: answered from its
                # schema and variables alone (memsynth.simulator.generic).
                draft = GenericAnswer(text, variables).generate(schema)
            else:
                draft = SchemaFaker(text).generate(schema)
            if answer is not None and variables:
                draft = answer(draft, variables, text)
            content = json.dumps(draft, ensure_ascii=False)
            try:
                problems = evaluate(stage, content, "stop", variables)[1] if stage is not None else []
            except Exception:  # a check that cannot read these variables (a test's few) is no verdict
                problems = []
            if not problems:
                return content
            if attempt < REDRAWS:
                self.redrawn[name] = self.redrawn.get(name, 0) + 1  # type: ignore[index]
        self.failing[name] = self.failing.get(name, 0) + 1  # type: ignore[index]
        return content


def format_name(body: dict[str, Any]) -> str | None:
    """The name of the json_schema a request asks for (memsynth's endpoint probe's is "probe")."""
    fmt = body.get("response_format")
    spec = fmt.get("json_schema") if isinstance(fmt, dict) else None
    return spec.get("name") if isinstance(spec, dict) else None


def requested_schema(body: dict[str, Any], prompt: str, schema_field: bool = False
                     ) -> tuple[dict[str, Any] | None, str | None]:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") or {}
        return spec.get("schema"), spec.get("name")
    if schema_field and fmt.get("type") == "json_object" and isinstance(fmt.get("schema"), dict):
        # llama-cpp-python's schema field carries no name: the prompt's copy has it.
        match = _SCHEMA_IN_PROMPT.search(prompt)
        return fmt["schema"], match.group(1) if match else None
    match = _SCHEMA_IN_PROMPT.search(prompt)
    if match:
        return json.loads(match.group(2)), match.group(1)
    return None, None
