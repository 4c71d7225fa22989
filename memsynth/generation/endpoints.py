"""Which endpoint a command's model calls go to: the `llm` block of a build config, a file
holding one, or flags over either — the same block and validation for `build` (and
`--estimate`), `annotate` and `eval` (whose judge is a second endpoint of its own)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memsynth.core.errors import ConfigError

if TYPE_CHECKING:  # pydantic is imported when a choice is applied, not when the CLI starts
    from memsynth.core.config import BuildConfig

JUDGE_ALIAS = "judge"


@dataclass(frozen=True)
class EndpointChoice:
    """What a command line said about one endpoint (None: not said)."""

    llm: str = "openai"  # `simulator`: memsynth's built-in one, whatever else is said
    config: str | None = None  # a YAML file holding an `llm` block
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    concurrency: int | str | None = None  # a number, or "auto"
    response_mode: str | None = None

    @property
    def names_an_endpoint(self) -> bool:
        """Whether it says where to send, rather than only how."""
        return bool(self.config or self.base_url or self.model)

    def flags(self) -> dict[str, object]:
        return {"base_url": self.base_url, "model": self.model, "api_key_env": self.api_key_env,
                "concurrency": self.concurrency, "response_mode": self.response_mode}


def choose(config: BuildConfig, choice: EndpointChoice, *, of_version: bool = False) -> BuildConfig:
    """`config` with the llm block `choice` makes: a file's block replaces the config's, then
    each flag given replaces its field (validated as a build config's block is).

    `of_version`: `config` is what a version recorded, whose response_mode and seed a probe may
    have settled for the endpoint it was built on; they hold there only (see `Learnt`). A
    version recorded before `learnt` existed says nothing of where, so any endpoint is asked.
    With an endpoint named, the version's own model aliases (llm.models, llm.stages) are left
    out: the endpoint named answers every stage.
    """
    from memsynth.core.config import Learnt, read_llm_config, with_llm

    llm = config.llm.model_copy(deep=True)
    if of_version and llm.learnt is None:
        llm.learnt = Learnt(endpoint="", response_mode="auto", seed=llm.seed,
                            models={alias: ("", None) for alias in llm.models})
    if choice.config:
        llm = read_llm_config(choice.config)
    elif of_version and choice.names_an_endpoint:
        llm.models, llm.stages = {}, {}
        if llm.learnt is not None:
            llm.learnt.models = {}
    learnt = llm.learnt
    llm = with_llm(llm, **choice.flags())
    if learnt is not None:
        llm.learnt = learnt.model_copy(update={"response_mode": choice.response_mode or learnt.response_mode})
    return config.model_copy(update={"llm": llm})


def with_judge(config: BuildConfig, judge: EndpointChoice) -> BuildConfig:
    """`config` with the judge as model alias `judge` (its own endpoint, key, limits, probe and
    response mode; what it leaves unset is the model under test's), or as it is when no judge
    setting is given."""
    if not (judge.names_an_endpoint or judge.api_key_env or judge.concurrency or judge.response_mode):
        return config
    from pydantic import ValidationError

    from memsynth.core.config import ModelAlias, read_llm_config
    llm = config.llm.model_copy(deep=True)
    block = read_llm_config(judge.config) if judge.config else None
    fields = {name: getattr(block, name) for name in ("model", "base_url", "api_key_env", "response_mode",
                                                       "rpm", "tpm", "timeout_s")} if block else {}
    if block is not None:
        fields.update(concurrency=block.concurrency, concurrency_auto=block.concurrency_auto)
        llm.prices = {**llm.prices, **block.prices}
    fields.update({k: v for k, v in judge.flags().items() if v is not None})
    if "concurrency" in fields and fields["concurrency"] != "auto" and judge.concurrency is not None:
        fields["concurrency_auto"] = False
    fields.setdefault("model", llm.model)
    try:
        llm.models[JUDGE_ALIAS] = ModelAlias.model_validate(fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        said = err["msg"].removeprefix("Value error, ")
        raise ConfigError(f"the judge's endpoint: {where + ': ' if where else ''}{said}") from exc
    return config.model_copy(update={"llm": llm})
