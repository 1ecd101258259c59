"""Errors of the recording, replay, inspection and plotting tools.

Where it sits: the bottom of :mod:`jointbus.tools`; every tool module raises these, and the CLI
turns them into a one-line message and exit status 1 rather than a traceback.
"""

from __future__ import annotations


class ToolError(Exception):
    """Base class of every error raised by :mod:`jointbus.tools`."""


class BagError(ToolError):
    """A bag (MCAP file or rosbag2 directory) that cannot be opened or read; names the path."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot read bag {path!r}: {reason}")


class RecorderError(ToolError):
    """The recorder was misused (bad option, started twice) or its output could not be written."""


class PlaybackError(ToolError):
    """A replay option out of range, or a topic that cannot be republished."""


class PlotError(ToolError):
    """A plot request that does not match the bag: unknown topic, field or joint."""


__all__ = ["BagError", "PlaybackError", "PlotError", "RecorderError", "ToolError"]
