"""PersonaHub-style persona synthesis: sampled attributes → LLM description → de-duplication.

Used when a build asks for more personas than the seed file and imports hold. Exact
duplicates share a persona id; near duplicates are found with MinHash LSH over word
shingles (character shingles for CJK text) against the existing pool and each other.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memsynth.core.records import PersonaRow
from memsynth.generation.personas import persona_id
from memsynth.generation.recipe import ShardOutput, persona_rng
from memsynth.generation.stage import Stage, StageRunner

if TYPE_CHECKING:
    from datasketch import MinHash

NUM_PERM = 128
MAX_ROUNDS = 8
# Personas asked or held at once: enough to keep any concurrency limit busy.
WINDOW = 1024
_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass
class SynthesisReport:
    requested: int
    generated: int = 0
    kept: int = 0
    exact_duplicates: int = 0
    near_duplicates: int = 0
    failed: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def shingles(text: str, size: int = 3) -> set[str]:
    """Word 3-grams, or character 3-grams for CJK text."""
    text = text.casefold()
    tokens = [c for c in text if not c.isspace()] if _CJK.search(text) else _WORD.findall(text)
    if len(tokens) <= size:
        return {" ".join(tokens)}
    return {" ".join(tokens[i:i + size]) for i in range(len(tokens) - size + 1)}


def minhash(text: str) -> MinHash:
    from datasketch import MinHash  # with scipy, a quarter second a build without new personas skips

    m = MinHash(num_perm=NUM_PERM, seed=1)
    # All shingles in one numpy pass: the same values as one `update` each, a quarter of the time.
    m.update_batch([s.encode("utf-8") for s in shingles(text)])
    return m


class NearDuplicateIndex:
    """Remembers descriptions and tells whether a new one is (nearly) one of them.

    LSH banding is tuned for a lower similarity than the threshold so that it rarely
    misses a candidate; each candidate is then confirmed by its estimated Jaccard.
    """

    def __init__(self, threshold: float):
        from datasketch import MinHashLSH

        self.threshold = threshold
        self.lsh = MinHashLSH(threshold=max(0.1, threshold * 0.6), num_perm=NUM_PERM)
        self.hashes: dict[str, MinHash] = {}

    def add(self, row: PersonaRow, m: MinHash | None = None) -> None:
        if row.persona_id not in self.hashes:
            self.hashes[row.persona_id] = m = m or minhash(row.description)
            self.lsh.insert(row.persona_id, m)

    def verdict(self, row: PersonaRow, m: MinHash | None = None) -> str:
        """'exact', 'near' or 'new' (`m`: the description's MinHash, if made already)."""
        if row.persona_id in self.hashes:
            return "exact"
        m = m or minhash(row.description)
        near = any(self.hashes[c].jaccard(m) >= self.threshold for c in self.lsh.query(m))
        return "near" if near else "new"


@dataclass
class _Answer:
    result: Any
    row: PersonaRow | None = None  # None: no usable answer
    hash: MinHash | None = None


async def _answer(runner: StageRunner, stage: Stage, i: int, seed: int, language: str,
                  attributes: Callable[[Any, str], dict[str, Any]], hashing: Awaitable[Any]) -> _Answer:
    """One slot's answer, hashed as soon as it comes: while the other answers are still
    on their way, not after the last (a build's shards wait for the personas)."""
    result = await runner.run(stage, {"language": language,
                                      **attributes(persona_rng(seed, "synthesis", str(i)), language)},
                              item_key=f"persona/{i:06d}", persona_id=None)
    if not result.usable:
        return _Answer(result)
    text = " ".join(result.output.description.split())
    await hashing  # datasketch is imported there: not on the event loop's thread
    return _Answer(result, PersonaRow(persona_id=persona_id(text), description=text, source="synthesized"),
                   minhash(text))


async def _answers(runner: StageRunner, stage: Stage, slots: range, seed: int, language: str,
                   attributes: Callable[[Any, str], dict[str, Any]], hashing: Awaitable[Any]
                   ) -> AsyncIterator[_Answer]:
    """The stage's answers for `slots`, in order, with at most `WINDOW` asked or held at
    once: memory stays bounded however many personas are wanted. The next slot is asked as
    each answer is taken, not once a whole chunk is in: only an answer slow to come (one
    being retried) holds back the slots after the window."""
    ahead = iter(slots)
    pending: deque[asyncio.Task[_Answer]] = deque()

    def ask(i: int) -> None:
        pending.append(asyncio.ensure_future(_answer(runner, stage, i, seed, language, attributes, hashing)))

    try:
        for i in itertools.islice(ahead, WINDOW):
            ask(i)
        while pending:
            answer = await pending[0]
            pending.popleft()
            for i in itertools.islice(ahead, 1):
                ask(i)
            yield answer
    finally:  # a failed call or a stopped build: the slots still asked go too
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


def _index_of(threshold: float, rows: list[PersonaRow]) -> NearDuplicateIndex:
    index = NearDuplicateIndex(threshold)
    for row in rows:
        index.add(row)
    return index


async def synthesize_personas(
    runner: StageRunner, stage: Stage, needed: int, *, seed: int, language: str,
    threshold: float, existing: list[PersonaRow],
    attributes: Callable[[Any, str], dict[str, Any]], output: ShardOutput,
) -> tuple[list[PersonaRow], SynthesisReport]:
    """Write `needed` new personas that duplicate neither `existing` nor each other."""
    report = SynthesisReport(requested=needed)
    # Made in a thread while the first personas are asked for: importing datasketch (with
    # scipy) takes a third of a second, and a build's first requests would wait for it.
    building = asyncio.ensure_future(asyncio.get_running_loop().run_in_executor(None, _index_of, threshold, existing))
    kept: list[PersonaRow] = []
    slot = 0
    for _ in range(MAX_ROUNDS):
        missing = needed - len(kept)
        if missing <= 0:
            break
        batch = range(slot, slot + missing + max(2, missing // 10))  # a little spare for drops
        slot = batch.stop
        # Verdicts in slot order, whenever the answers came: the same personas are kept.
        async with contextlib.aclosing(_answers(runner, stage, batch, seed, language, attributes, building)) as answers:
            async for answer in answers:
                output.record(answer.result)
                report.generated += 1
                if answer.row is None:
                    report.failed += 1
                    continue
                row = answer.row
                index = await building
                verdict = index.verdict(row, answer.hash)
                if verdict == "exact":
                    report.exact_duplicates += 1
                elif verdict == "near":
                    report.near_duplicates += 1
                elif len(kept) < needed:
                    index.add(row, answer.hash)
                    kept.append(row)
    report.kept = len(kept)
    return kept, report
