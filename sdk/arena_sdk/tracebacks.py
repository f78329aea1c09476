"""What a bot author reads of an exception their bot raised: its type, message and the line of their own code it
came from, as the SDK's server answers it to the referee (the fault's detail ``arena play`` prints)."""

from __future__ import annotations

import os
import sysconfig
import traceback


def describe_exception(exc: BaseException) -> str:
    """``"IndexError: tuple index out of range (my_bot.py, line 12)"``: the exception and where in the bot's own code
    it was raised (``_where``), so that a bot author reading the referee's fault finds the line."""
    text = str(exc)
    where = _where(exc)
    return (f"{type(exc).__name__}: {text}" if text else type(exc).__name__) + (f" ({where})" if where else "")


_NOT_THE_BOTS = tuple(os.path.realpath(p) + os.sep for p in {
    os.path.dirname(__file__), sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"],
    sysconfig.get_paths()["platlib"]})


def _where(exc: BaseException) -> str:
    """The file name (no folder) and line of the innermost frame of ``exc``'s traceback in the bot's own code (not
    the SDK's, the standard library's nor an installed package's), e.g. "my_bot.py, line 12"; "" when none."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = os.path.realpath(frame.filename)
        if frame.filename.startswith("<") or path.startswith(_NOT_THE_BOTS):
            continue
        return f"{os.path.basename(path)}, line {frame.lineno}"
    return ""
