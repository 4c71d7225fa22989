"""`runner: dask`: shards on Dask workers (prefect-dask), the endpoint's limits split among them.

Each worker process builds its own engine from the shard's plan (see memsynth.shards), so
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
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memsynth.config import BuildConfig
from memsynth.errors import ConfigError
from memsynth.llm.limits import AdaptiveConcurrency
from memsynth.llm.loop import LoopThread
from memsynth.shards import WORKER_ID, LimitShare

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

        from memsynth.shards import close_runtime

        with contextlib.suppress(Exception):  # a worker that died has nothing left to close
            self.client.run(close_runtime, build_id)
        if channel:
            with contextlib.suppress(Exception):
                distributed.Variable(channel, client=self.client).delete()


@contextlib.contextmanager
def dask_cluster(config: BuildConfig) -> Iterator[DaskCluster]:
    """The config's cluster: joined at `dask.address`, or a LocalCluster for this build
    (closed with it)."""
    import distributed

    # Dask's INFO lines (workers starting and stopping) would drown the build's own output.
    for name in ("distributed", "distributed.scheduler", "distributed.nanny", "distributed.core"):
        logging.getLogger(name).setLevel(logging.WARNING)
    with contextlib.ExitStack() as stack:
        if config.dask.address:
            address = config.dask.address
        else:
            workers = config.dask.workers or 2
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=workers, threads_per_worker=max(1, math.ceil(config.max_workers / workers)),
                processes=True, dashboard_address=None, scheduler_kwargs={"dashboard": False},
                silence_logs=logging.WARNING))
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
                      backoff_channel=f"memsynth-backoff-{build_id}")


def task_runner(cluster: DaskCluster) -> Any:
    from prefect_dask import DaskTaskRunner

    return DaskTaskRunner(address=cluster.address)


class BackoffListener:
    """Tells the other workers when this one backs off, and backs off when they do.

    The announcement is a Dask Variable holding "<worker> <count>"; every worker polls it
    a few times a second. Polling and writing happen on this object's thread, never on
    the event loop.
    """

    POLL_S = 0.2

    def __init__(self, channel: str, concurrency: AdaptiveConcurrency, loop: LoopThread, client: Any,
                 *, identity: str = WORKER_ID):
        import distributed

        self.identity = identity
        self._variable = distributed.Variable(channel, client=client)
        self._concurrency = concurrency
        self._loop = loop
        self._announced = 0
        self._pending = threading.Event()
        self._stop = threading.Event()
        self._seen: str | None = None
        self.heard = 0  # back-offs of other workers applied here
        concurrency.on_backoff = self._pending.set
        self._thread = threading.Thread(target=self._run, name="memsynth-backoff", daemon=True)
        self._thread.start()

    @classmethod
    def start(cls, channel: str, concurrency: AdaptiveConcurrency, loop: LoopThread) -> BackoffListener | None:
        """A listener on the current Dask worker's client; None outside a worker."""
        import distributed

        try:
            client = distributed.get_client()
        except ValueError:
            log.warning("not on a Dask worker: this process's back-off is not shared")
            return None
        return cls(channel, concurrency, loop, client)

    def _run(self) -> None:
        while not self._stop.wait(self.POLL_S):
            try:
                if self._pending.is_set():
                    self._pending.clear()
                    self._announced += 1
                    self._seen = f"{self.identity} {self._announced}"
                    self._variable.set(self._seen)
                    continue
                value = self._variable.get(timeout=self.POLL_S)
            except TimeoutError:  # nobody has backed off yet
                continue
            except Exception as exc:  # noqa: BLE001 - the scheduler went away: the build is ending
                log.debug("back-off channel: %s", exc)
                continue
            if value != self._seen:
                self._seen = value
                if value and not str(value).startswith(f"{self.identity} "):
                    self.heard += 1
                    self._loop.loop.call_soon_threadsafe(self._concurrency.peer_backed_off)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)
