"""A shard's inputs as plain data: what any process needs to run the build's shards.

A `ShardPlan` holds nothing live and no secret: it pickles to any worker, which builds its
own engine, cache handle and staging area from it (memsynth.build.shards' `runtime_for`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memsynth.core.config import BuildConfig
from memsynth.generation.session import SIMULATOR_API_KEY, Endpoint
from memsynth.warehouse.location import Location


@dataclass(frozen=True)
class LimitShare:
    """One process's part of the endpoint's limits, and where it hears others back off."""

    concurrency: int
    rpm: float | None = None
    tpm: float | None = None
    budget_usd: float | None = None
    backoff_channel: str | None = None  # a Dask Variable's name (see memsynth.build.cluster)
    workers: int = 1  # how many share the limits (a model alias's limits are divided alike)


@dataclass(frozen=True)
class ShardPlan:
    """What any process needs to run the build's shards (picklable; the API key is read
    from the worker's own environment, never carried here)."""

    build_id: str
    config: BuildConfig
    warehouse: str  # the local warehouse root (a recipe may read its source there)
    dataset_dir: str  # the staging area's root
    cache_dir: str
    cache_read: bool
    base_url: str | None
    model: str
    simulated: bool
    regenerations: dict[str, dict[str, str]] = field(default_factory=dict)
    share: LimitShare | None = None  # None: the config's whole limits
    # Where staging goes (a bucket's is reachable from every worker). With `mirror_cache`, a
    # worker's cache folder mirrors the location's shared cache logs (fetched when it starts,
    # its own shared when it closes).
    location: Location | None = None  # None: the local folder `dataset_dir` is in
    mirror_cache: bool = False  # the cache is the location's (no cache_dir of the config's own)

    @property
    def api_key(self) -> str | None:
        # memsynth's simulator accepts any key; a real one comes from $api_key_env.
        return "simulator" if self.simulated else None

    @property
    def endpoint(self) -> Endpoint | None:
        """The simulator this build runs on (every model alias answered there), or None."""
        if not self.simulated or self.base_url is None:
            return None
        return Endpoint(base_url=self.base_url, api_key=SIMULATOR_API_KEY, model=self.model, stop=lambda: None)
