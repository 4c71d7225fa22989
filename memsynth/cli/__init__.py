"""The `memsynth` command line: one module per command group, registered on one group here.

The top layer: it may import every package below it.
"""

from __future__ import annotations

import gc
import sys

import click

from memsynth.cli import answers, build, cache, catalog, data, quality, recipe_new, release, simulator
from memsynth.cli.output import err, error_line
from memsynth.core.errors import MemsynthError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="memsynth")
def cli() -> None:
    """memsynth: synthesize memory-augmented, persona-grounded dialogue benchmarks.

    Build a dataset from a YAML config, query its versions with SQL, and run the
    built-in OpenAI-compatible simulator for dry runs and tests.
    """


for command in (build.build, build.serve, data.recipes, data.datasets, data.versions, data.runs, data.query,
                quality.review_command, quality.agreement_command, quality.report_command, release.release,
                cache.cache, data.personas, data.import_release, quality.eval_task, quality.annotate,
                simulator.simulator, answers.check_answers, catalog.catalog, recipe_new.recipe):
    cli.add_command(command)


def main() -> None:
    """Entry point: one error line and a non-zero exit for anything the user can fix."""
    try:
        cli.main(standalone_mode=False)
        # What is left is freed at exit; a build leaves millions of objects, and the
        # collector's passes over them at shutdown took 0.7 s after the work was done.
        gc.freeze()
    except click.exceptions.Abort:
        err.print("aborted")
        sys.exit(130)
    except click.UsageError as exc:  # a mistyped command line: one line, and exit 2 as Unix tools do
        where = exc.ctx.command_path if exc.ctx else "memsynth"
        err.print(error_line(f"{exc.format_message()} (see `{where} --help`)"))
        sys.exit(2)
    except click.ClickException as exc:
        err.print(error_line(exc.format_message()))
        sys.exit(exc.exit_code)
    except MemsynthError as exc:
        err.print(error_line(exc))
        code = getattr(exc, "exit_code", 1)
        if code >= 128:  # a build stopped by a signal (130/143): no wait for what its flow left
            from memsynth.build.interrupt import leave

            leave(code)
        sys.exit(code)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except OSError as exc:  # a file where a folder should be, no permission, a full disk
        err.print(error_line(_os_error(exc)))
        sys.exit(1)
    except BaseException as exc:  # a memsynth error wrapped by Prefect, for instance
        cause = _memsynth_cause(exc) or _missing_file(exc)
        if cause is None:
            raise
        err.print(error_line(cause))
        sys.exit(1)


def _os_error(exc: OSError) -> str:
    """'<path>: <what the system said>', without the errno."""
    where = " → ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
    return f"{where}: {exc.strerror or exc}" if where else str(exc.strerror or exc)


def _missing_file(exc: BaseException) -> MemsynthError | None:
    """A read of a data file the store lost (a bucket emptied or restored from an old backup),
    wherever it happened: one line naming the file."""
    if not type(exc).__module__.startswith(("duckdb", "_duckdb")):
        return None
    from memsynth.warehouse.missing import missing_error

    return missing_error(exc, "the dataset's catalog", "DATASET")


def _memsynth_cause(exc: BaseException) -> MemsynthError | None:
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, MemsynthError):
            return exc
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
        seen += 1
    return None
