"""Errors that reach the user as one clear line and a non-zero exit."""


class MemsynthError(Exception):
    """A user-facing failure: bad config, bad input file, refused query, failed build."""


class ConfigError(MemsynthError):
    """The build config or an input file is invalid."""


class BuildFailed(MemsynthError):
    """A build stopped before publishing (too many failed items, unreachable endpoint)."""
