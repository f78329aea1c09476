"""Generate the Python protocol code from proto/ (``make proto``).

Usage: python tools/gen_proto.py OUT_DIR

Runs grpcio-tools' protoc (messages, gRPC stubs, mypy-protobuf type stubs) over every ``proto/arena/v1/*.proto``
and writes ``OUT_DIR/arena/v1/...``. protoc emits absolute imports (``from arena.v1 import bot_pb2``) that would
collide with our ``arena`` platform package, so they are rewritten to relative imports. The output depends only
on the proto files and the pinned generator versions, so ``tests/test_proto_fresh.py`` can regenerate into a
temporary folder and compare byte for byte.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PACKAGE = "arena/v1"
BIN = Path(sys.executable).parent  # mypy-protobuf's plugins live beside the venv's python
ABSOLUTE_IMPORT = re.compile(r"^from arena\.v1 import ", re.MULTILINE)
PACKAGE_DOC = '"""Generated from proto/{path} by `make proto` (tools/gen_proto.py). Do not edit."""\n'


def generate(out_dir: Path) -> list[Path]:
    """Write the generated package under ``out_dir``; returns the files written. Raises RuntimeError on failure."""
    sources = sorted((PROTO_ROOT / PACKAGE).glob("*.proto"))
    if not sources:
        raise RuntimeError(f"no .proto files under {PROTO_ROOT / PACKAGE}")
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            "protoc",
            f"--proto_path={PROTO_ROOT}",
            f"--proto_path={Path(protoc.__file__).parent / '_proto'}",
            f"--plugin=protoc-gen-mypy={BIN / 'protoc-gen-mypy'}",
            f"--plugin=protoc-gen-mypy_grpc={BIN / 'protoc-gen-mypy_grpc'}",
            f"--python_out={tmp}",
            f"--grpc_python_out={tmp}",
            f"--mypy_out={tmp}",
            f"--mypy_grpc_out={tmp}",
            *(str(s.relative_to(PROTO_ROOT)) for s in sources),
        ]
        if protoc.main(args) != 0:
            raise RuntimeError("protoc failed: " + " ".join(args))
        target = out_dir / PACKAGE
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        written = []
        for path in sorted((Path(tmp) / PACKAGE).iterdir()):
            text = ABSOLUTE_IMPORT.sub("from . import ", path.read_text())
            (target / path.name).write_text(text)
            written.append(target / path.name)
        for pkg_dir, rel in ((out_dir, ""), (out_dir / "arena", "arena"), (target, PACKAGE)):
            init = pkg_dir / "__init__.py"
            init.write_text(PACKAGE_DOC.format(path=rel or "."))
            written.append(init)
        (out_dir / "py.typed").write_text("")
        return written


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    for path in generate(Path(argv[1])):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
