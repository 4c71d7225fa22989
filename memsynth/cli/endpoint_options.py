"""The endpoint flags every model-calling command takes (`build`, `annotate`, `eval` and its
judge), gathered into one `EndpointChoice` (memsynth.generation.endpoints applies it)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from memsynth.core.limits import AUTO_CONCURRENCY_MAX
from memsynth.generation.endpoints import EndpointChoice

RESPONSE_MODES = ["auto", "json_schema", "json_object_schema", "json_object", "text"]


class Concurrency(click.ParamType):
    """A whole number of requests in flight, or `auto`."""

    name = "N|auto"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | str:
        if isinstance(value, int) or value == "auto":
            return value
        try:
            number = int(str(value).strip())
        except ValueError:
            self.fail(f"expected a whole number or `auto`, got {value!r}", param, ctx)
        if number < 1:
            self.fail(f"expected at least 1, got {number}", param, ctx)
        return number


def endpoint_options(*, prefix: str = "", dest: str = "endpoint", default_from: str = "the config's llm block",
                     model_help: str | None = None, simulator: bool = True) -> Callable[[Any], Any]:
    """Add the endpoint flags (named `--{prefix}base-url` and so on) to a command; the command
    receives them as one `EndpointChoice` in the argument `dest`."""
    p = prefix
    whose = f"the {prefix.rstrip('-')}'s" if prefix else "the"
    sets = f"llm.models.{prefix.rstrip('-')}" if prefix else "llm"  # where a judge's settings go
    kept = (" (of it: model, base_url, api_key_env, response_mode, concurrency, rpm, tpm, timeout_s "
            "and prices)") if prefix else ""
    options = []
    if simulator:
        options.append(click.option(
            f"--{p}llm", f"{p.replace('-', '_')}llm", type=click.Choice(["openai", "simulator"]), default="openai",
            show_default=True,
            help="`openai`: an OpenAI-compatible endpoint, from " + default_from + ", $OPENAI_BASE_URL and "
                 "the flags below, with the key in $OPENAI_API_KEY (or llm.api_key_env); `simulator`: the "
                 "built-in fake model on a loopback port, for dry runs (its text is not real data)"))
    options += [
        click.option(f"--{p}llm-config", f"{p.replace('-', '_')}llm_config", metavar="FILE",
                     type=click.Path(dir_okay=False),
                     help=f"{whose} endpoint settings: a YAML file holding an `llm` block as a build config "
                          f"writes it (a whole build config will do), used instead of {default_from}{kept}; "
                          "the flags below override its fields"),
        click.option(f"--{p}base-url", f"{p.replace('-', '_')}base_url", metavar="URL",
                     help=f"{whose} OpenAI-compatible endpoint, ending in /v1 (llama.cpp: http://127.0.0.1:8080/v1, "
                          f"vLLM: http://127.0.0.1:8000/v1, Ollama: http://127.0.0.1:11434/v1); sets {sets}.base_url"),
        click.option(f"--{p}model", f"{p.replace('-', '_')}model", metavar="NAME",
                     help=model_help or f"{whose} model, as the endpoint names it (sets {sets}.model)"),
        click.option(f"--{p}api-key-env", f"{p.replace('-', '_')}api_key_env", metavar="VAR",
                     help=f"the environment variable holding {whose} API key (sets {sets}.api_key_env; "
                          "any non-empty value for a local server without auth)"),
        click.option(f"--{p}concurrency", f"{p.replace('-', '_')}concurrency", type=Concurrency(),
                     help=f"{whose} requests in flight at most (sets {sets}.concurrency); `auto` finds how many the "
                          f"server takes from how its answers slow (up to {AUTO_CONCURRENCY_MAX}). A local server "
                          "with fewer slots queues the rest, and they wait their turn"),
        click.option(f"--{p}response-mode", f"{p.replace('-', '_')}response_mode", type=click.Choice(RESPONSE_MODES),
                     help=f"how answers are held to their JSON schema (sets {sets}.response_mode); `auto` asks the "
                          "endpoint once which form it enforces (a version's mode holds only on the endpoint it "
                          "was built on: another one is asked afresh)"),
    ]
    fields = {"llm": "llm", "llm_config": "config", "base_url": "base_url", "model": "model",
              "api_key_env": "api_key_env", "concurrency": "concurrency", "response_mode": "response_mode"}
    name_prefix = p.replace("-", "_")

    def decorate(fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = {field: kwargs.pop(name_prefix + name) for name, field in fields.items()
                     if name_prefix + name in kwargs}
            kwargs[dest] = EndpointChoice(**given)
            return fn(*args, **kwargs)

        for option in reversed(options):
            wrapper = option(wrapper)
        return wrapper
    return decorate
