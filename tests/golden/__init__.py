"""Golden prompts: every stage's prompt rendered from fixed variables, kept under version control.

`fixtures/<group>.py` builds, per stage and language, the variables of one coherent persona
written for the tests (a reviewer reads a golden as a real model would receive it);
`<group>/<stage>.<language>.txt` is the prompt they render to. A group is a recipe (its
chain's stages and its `memsynth eval` tasks' stages) or `emotions` (emotion annotation's
stage). A template change shows up as a diff of these files. `recorded_variables` runs the
chain on the simulator and keeps what each stage was really sent, so a test can check that
the fixtures give every stage the variables the chain gives it.

    python -m tests.golden                      # rewrite the rendered prompts
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from memsynth.generation.prompts import PromptLibrary
from memsynth.generation.registry import evaluation_stages, names, recipe_class
from memsynth.generation.stage import localized
from tests.golden.fixtures import variables as fixture_variables

HERE = Path(__file__).resolve().parent
LANGUAGES = ("en", "zh")
REPAIR_PROBLEMS = {
    "en": ["[schema] items.0.date: Input should be a valid date", "[enough_items] give at least 6 items, got 4"],
    "zh": ["[schema] 字段 items.0.date：应当是 YYYY-MM-DD 格式的日期", "[enough_items] 请至少给出 6 项，实际给了 4 项"],
}
PERSONAS = {
    "en": "A night-shift nurse in Leeds who sings in a church choir. She worries about her mother, who lives alone.",
    "zh": "一位在成都上夜班的护士，周末在社区合唱团唱歌，总惦记着独居的母亲。",
}


def golden_file(recipe: str, stage: str, language: str) -> Path:
    return HERE / recipe / f"{stage}.{language}.txt"


def render(messages: list[dict[str, str]]) -> str:
    return "".join(f"### {m['role']}\n{m['content']}\n\n" for m in messages).rstrip("\n") + "\n"


def golden_stages() -> dict[str, tuple[Any, ...]]:
    """Every prompted stage, by group: each recipe's chain and evaluation stages, and emotions'."""
    from memsynth.generation.emotions import SCORE

    groups = {recipe: (*recipe_class(recipe).stages, *evaluation_stages(recipe)) for recipe in names()}
    return {**{g: stages for g, stages in groups.items() if stages}, "emotions": (SCORE,)}


def rendered(group: str, stage_name: str, language: str, library: PromptLibrary | None = None) -> str:
    """The prompt of `stage_name`, rendered from its fixture's variables."""
    library = library or PromptLibrary()
    variables = fixture_variables(group, language)[stage_name]
    stage = next(s for s in golden_stages()[group] if s.name == stage_name)
    return render(library.render(stage.template_for(language), variables))


def rendered_snippets(language: str, library: PromptLibrary | None = None) -> dict[str, str]:
    """The shared repair and schema-hint snippets, with fixed contents."""
    library = library or PromptLibrary()
    return {
        "_repair": library.render_text(localized("_repair.j2", language), {"problems": REPAIR_PROBLEMS[language]}) + "\n",
        "_schema_hint": library.render_text(localized("_schema_hint.j2", language), {
            "schema": '{"type": "object"}', "schema_name": "enpmr_scene"}) + "\n",
    }


def every_golden() -> dict[Path, str]:
    """Every golden file and the text it should hold."""
    library = PromptLibrary()
    out: dict[Path, str] = {}
    for language in LANGUAGES:
        for group, stages in golden_stages().items():
            for stage in stages:
                out[golden_file(group, stage.name, language)] = rendered(group, stage.name, language, library)
        for name, text in rendered_snippets(language, library).items():
            out[HERE / "shared" / f"{name}.{language}.txt"] = text
    return out


def write_goldens() -> int:
    for path, text in every_golden().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return len(every_golden())


async def _generate(recipe: Any, ctx: Any, engine: Any) -> None:
    await recipe.run_shard([ctx])
    await engine.aclose()


# Each recipe's options for the recording run: small, and for stratmem the test conversation.
GOLDEN_OPTIONS: dict[str, dict[str, Any]] = {
    "pal": {"months": [2, 2]},
    "enpmr": {"dialogues_per_persona": 1},
    "stratmem": {"windows": [1], "max_sessions": 2},
    "longmem": {"haystack_sessions": 3, "exchanges": 2, "per_type": 1, "abstentions": 1},
}
# stratmem's test conversations (LoCoMo's format, written for these tests), per language.
LOCOMO_SAMPLES = {"en": HERE.parent / "data" / "locomo_sample.json", "zh": HERE.parent / "data" / "locomo_sample.zh.json"}


def _options(recipe: str, language: str) -> dict[str, Any]:
    if recipe == "stratmem":
        return {**GOLDEN_OPTIONS[recipe], "source": f"locomo:{LOCOMO_SAMPLES[language]}"}
    return GOLDEN_OPTIONS[recipe]


def recorded_requests(recipe_name: str, language: str, options: dict[str, Any] | None = None
                      ) -> tuple[Any, Any, list[dict[str, Any]]]:
    """Run `recipe_name` for one persona on a recording simulator: the recipe, the persona's
    context, and every request body it sent (with the stage and its variables under `memsynth`)."""
    from memsynth.core.config import BuildConfig
    from memsynth.core.records import PersonaRow
    from memsynth.generation.recipe import PersonaContext, ShardOutput, persona_rng
    from memsynth.generation.stage import GenerationSettings, StageRunner
    from memsynth.llm.cache import ResponseCache
    from memsynth.llm.engine import LLMEngine
    from memsynth.llm.settings import EngineSettings
    from memsynth.simulator.server import Simulator, SimulatorThread

    with SimulatorThread(Simulator()) as sim, tempfile.TemporaryDirectory() as cache:
        sim.simulator.record = True
        config = BuildConfig(dataset="golden", recipe=recipe_name, language=language, seed=1,
                             recipe_options={**_options(recipe_name, language), **(options or {})})
        engine = LLMEngine(EngineSettings(base_url=sim.base_url, api_key_env="X"), ResponseCache(cache),
                           api_key="k")
        runner = StageRunner(engine, PromptLibrary(), GenerationSettings(model="m", stage_variables=True))
        recipe = recipe_class(recipe_name)(config.recipe_options)
        persona = (recipe.source_personas(config, Path(cache)) or [
            PersonaRow(persona_id="0042", description=PERSONAS[language], source="golden")])[0]
        ctx = PersonaContext(persona, config, runner, ShardOutput(), persona_rng(1, "0042"))
        asyncio.run(_generate(recipe, ctx, engine))
        return recipe, ctx, stage_requests(sim.simulator.recorded)


def stage_requests(recorded: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stages' requests, without the capability probe's (which names no stage)."""
    return [body for body in recorded if "memsynth" in body]


def recorded_variables(recipe_name: str, language: str) -> dict[str, dict[str, Any]]:
    """Each chain stage's variables as a simulator run of `recipe_name` first sent them."""
    from memsynth.generation.recipe import persona_rng

    recipe, ctx, recorded = recorded_requests(recipe_name, language)
    captured: dict[str, Any] = {}
    for body in recorded:
        captured.setdefault(body["memsynth"]["stage"].split(".", 1)[1], body["memsynth"]["variables"])
    if recipe.persona_stage is not None:  # runs only when personas are synthesized
        captured[recipe.persona_stage.name] = {**ctx.common_variables(),
                                               **recipe.persona_variables(persona_rng(1, "golden"), language)}
    return captured


def recorded_evaluation_variables(language: str) -> dict[tuple[str, str], dict[str, Any]]:
    """(group, stage) → the variables each evaluation stage and emotion scoring first sent:
    each recipe built on a recording simulator (emotions on), then its `memsynth eval` tasks
    run on a couple of items."""
    import os

    from memsynth.build.run import BuildOptions, run_build
    from memsynth.core.config import BuildConfig, LLMConfig
    from memsynth.generation.registry import evaluation_tasks
    from memsynth.quality.evaluation.run import EvalOptions, evaluate
    from memsynth.simulator.server import Simulator, SimulatorThread

    wanted = {(g, s.name) for g, stages in golden_stages().items() for s in stages
              if g == "emotions" or s not in recipe_class(g).stages}
    captured: dict[tuple[str, str], dict[str, Any]] = {}
    saved = {k: os.environ.get(k) for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    with SimulatorThread(Simulator()) as sim, tempfile.TemporaryDirectory() as folder:
        os.environ.update(OPENAI_BASE_URL=sim.base_url, OPENAI_API_KEY="golden")
        warehouse = Path(folder)
        sim.simulator.record = True
        try:
            for recipe in (r for r in names() if evaluation_tasks(r) and recipe_class(r).buildable):
                dataset = f"{recipe}-{language}"
                # Seed 4: the simulator's answers follow the prompts' text, and under some seeds
                # (1 and 2 with the prompts of issue 51) stratmem's labellers find no memory
                # must or nice for the build's only query, leaving nothing to evaluate.
                config = BuildConfig(
                    dataset=dataset, recipe=recipe, language=language, seed=4, warehouse=str(warehouse),
                    llm=LLMConfig(model="m", stage_variables=True), personas={"count": 1},
                    recipe_options={**_options(recipe, language),
                                    **({"emotions": True} if recipe_class(recipe).emotion_source else {})})
                run_build(config, BuildOptions(llm="openai", progress=False))
                for task in evaluation_tasks(recipe):
                    evaluate(task, warehouse, dataset, None, EvalOptions(limit=2, progress=False))
        finally:
            for key, value in saved.items():
                os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
        for body in stage_requests(sim.simulator.recorded):
            group, _, name = body["memsynth"]["stage"].partition(".")
            if (group, name) in wanted:
                captured.setdefault((group, name), body["memsynth"]["variables"])
    return captured
