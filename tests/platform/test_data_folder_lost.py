"""An `arena serve` whose data folder is deleted (or deleted and made again) while it runs: it stops with a message
saying so, instead of running on and later restarting its private redis-server in a folder that another `arena
serve` may hold by then (a review: the second serve started on the recreated folder, the first one's watch
restarted its Redis there, and both servers wrote one appendonly file). A real `arena serve` process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from arena.core.folder_lock import FolderLock


def test_a_lock_says_when_its_file_was_removed_or_replaced(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    lock = FolderLock(folder)
    lock.acquire("test")
    try:
        assert lock.lost() is None
        shutil.rmtree(folder)
        assert "was removed" in (lock.lost() or "")
        FolderLock(folder).acquire("another serve")  # the folder made again: a new lock file, free to take
        assert "is another file now" in (lock.lost() or "")
    finally:
        lock.release()
    assert lock.lost() is None  # not held: nothing to lose


def test_serve_stops_when_its_data_folder_is_deleted(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    serve = subprocess.Popen([sys.executable, "-m", "arena", "serve", "--listen", "127.0.0.1:0", "--workers", "0",
                              "--data-dir", str(folder)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env)
    try:
        assert serve.stdout is not None
        lines: list[str] = []
        for line in serve.stdout:
            lines.append(line)
            if "listening on" in line:
                break
        assert any("listening on" in line for line in lines), lines
        rest: list[str] = []
        reader = threading.Thread(target=lambda: rest.extend(serve.stdout or []), daemon=True)
        reader.start()
        shutil.rmtree(folder)
        code = serve.wait(timeout=60)
        reader.join(timeout=10)
        err = serve.stderr.read() if serve.stderr is not None else ""
    finally:
        if serve.poll() is None:  # it ran on: stopped as an operator would, so its Redis stops too
            serve.terminate()
            try:
                serve.wait(timeout=60)
            except subprocess.TimeoutExpired:
                serve.kill()
                serve.wait()
    assert code == 1, (code, err)
    assert f"the data folder {folder} of this arena serve is gone" in " ".join(err.split()), err
    assert "serve.lock was removed" in err and "move it back" in err
    assert "arena serve stopping: its data folder is gone" in "".join(rest)
