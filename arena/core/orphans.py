"""A child process of ours that must not outlive its parent (a ``kill -9`` of the parent runs no clean-up)."""

from __future__ import annotations

import os
import threading
import time

PARENT_CHECK_S = 1.0  # how often a child looks whether its parent is still there


def exit_with_parent(parent: int | None = None, every_s: float = PARENT_CHECK_S) -> None:
    """Start a daemon thread that ends this process (``os._exit(3)``, no clean-up) within ``every_s`` seconds once
    its parent ``parent`` (a pid; default: the current parent) is gone, i.e. it was re-parented. Returns at once."""
    expected = os.getppid() if parent is None else parent

    def watch() -> None:
        while True:
            if os.getppid() != expected:
                os._exit(3)
            time.sleep(every_s)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
