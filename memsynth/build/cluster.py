"""`runner: dask`: shards on Dask workers (prefect-dask), the endpoint's limits split among them.

Each worker process builds its own engine from the shard's plan (see memsynth.build.shards), so
the limits a config sets for the build are divided: every worker gets `concurrency // W`
requests in flight and `rpm / W`, `tpm / W` (and `budget_usd / W`), where W is the number of workers. A 429 seen
by one worker halves its own ceiling and is announced on a Dask Variable; the others halve
theirs when they hear it, so the build backs off as one and no worker's full ceiling
undoes another's back-off.
"""

from __future__ import annotations

import contextlib
import logging
import math
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memsynth.build.shards import LimitShare
from memsynth.core.config import BuildConfig
from memsynth.core.errors import ConfigError

log = logging.getLogger("memsynth")


@dataclass
class DaskCluster:
    """A scheduler the build's shards go to, and how many workers share the limits."""

    address: str
    workers: int
    client: Any  # the build's own client: the back-off channel and closing its runtimes

    def open_channel(self, name: str) -> None:
        """Create the back-off channel empty, so workers' first reads answer at once."""
        import distributed

        distributed.Variable(name, client=self.client).set("")

    def close_build(self, build_id: str, channel: str | None) -> None:
        """Close the build's runtimes on every worker (their caches, loops, listeners)."""
        import distributed

        from memsynth.build.shards import close_runtime_off_loop

        with contextlib.suppress(Exception):  # a worker that died has nothing left to close
            self.client.run(close_runtime_off_loop, build_id)
        if channel:
            with contextlib.suppress(Exception):
                distributed.Variable(channel, client=self.client).delete()


@contextlib.contextmanager
def dask_cluster(config: BuildConfig) -> Iterator[DaskCluster]:
    """The config's cluster: joined at `dask.address`, or a LocalCluster for this build
    (closed with it)."""
    import dask
    import distributed

    # Dask's INFO lines (workers starting and stopping) would drown the build's own output.
    for name in ("distributed", "distributed.scheduler", "distributed.nanny", "distributed.core"):
        logging.getLogger(name).setLevel(logging.WARNING)
    with contextlib.ExitStack() as stack:
        if config.dask.address:
            address = config.dask.address
        else:
            workers = config.dask.workers or 2
            # The scheduler's and workers' scratch in a folder of the build's, removed after the
            # cluster closes: by default Dask leaves `dask-scratch-space` in the system's temp folder.
            scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="memsynth-dask-",
                                                                      ignore_cleanup_errors=True))
            stack.enter_context(dask.config.set({"temporary-directory": scratch}))
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=workers, threads_per_worker=max(1, math.ceil(config.max_workers / workers)),
                processes=True, dashboard_address=None, scheduler_kwargs={"dashboard": False},
                silence_logs=logging.WARNING, local_directory=scratch))
            address = cluster.scheduler_address
        try:
            client = stack.enter_context(distributed.Client(address, timeout="10s", set_as_default=False))
        except (OSError, TimeoutError) as exc:
            raise ConfigError(f"dask.address {address}: no scheduler answers ({exc})") from exc
        threads = client.nthreads()
        if not threads:
            raise ConfigError(f"dask.address {address}: the scheduler has no workers")
        yield DaskCluster(address, config.dask.workers or len(threads), client)


def limit_share(config: BuildConfig, workers: int, build_id: str) -> LimitShare:
    """Each worker's part of the config's limits, so that together they keep to them."""
    llm = config.llm
    if llm.concurrency < workers:
        raise ConfigError(f"llm.concurrency {llm.concurrency} is less than the {workers} Dask workers "
                          "that share it: each worker needs at least one request in flight")
    return LimitShare(concurrency=llm.concurrency // workers,
                      rpm=llm.rpm / workers if llm.rpm else None,
                      tpm=llm.tpm / workers if llm.tpm else None,
                      budget_usd=llm.budget_usd / workers if llm.budget_usd else None,
                      backoff_channel=f"memsynth-backoff-{build_id}", workers=workers)


def task_runner(cluster: DaskCluster) -> Any:
    from prefect_dask import DaskTaskRunner

    return DaskTaskRunner(address=cluster.address)
