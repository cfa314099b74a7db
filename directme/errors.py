"""Exceptions with messages that say what went wrong and how to fix it."""
from __future__ import annotations


class DirectmeError(Exception):
    """Base class of every error raised by directme."""


class InvalidInputError(DirectmeError, ValueError):
    """Input data (frames, poses, depth, masks, annotations, questions) is malformed."""


class CorruptInputError(InvalidInputError):
    """An input file is damaged (truncated, garbled); the message names the file, where it breaks and
    how to repair it (or, for videos, how to skip the damaged part)."""


class InvalidSaveError(InvalidInputError):
    """A saved agent or memory cannot be loaded: damaged (checksum), incomplete, edited into an inconsistent
    state, or of a format this version does not read; the message names the file, the problem and what to do."""


class SaveFailedError(DirectmeError, OSError):
    """A save could not be written (disk full, file too large, read-only or failing disk); the message names the
    directory, the cause and what became of the previous save there (left intact). ``errno`` is the cause's."""


class MissingDependencyError(DirectmeError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


class MissingWeightsError(DirectmeError, FileNotFoundError):
    """Model weights were not found locally; the message names the file and where to put it."""


class BackendError(DirectmeError, RuntimeError):
    """A model backend failed at run time (bad config, server down, malformed reply)."""
