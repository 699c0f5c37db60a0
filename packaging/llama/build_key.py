"""Print the build key of the patched llama-cpp-python wheel: a hash of everything that goes into
it (the version, the CMake arguments and the bytes of every patch, in order).

The Makefile keeps the built wheel under this key, so a change to any of them builds afresh on
the next ``make`` instead of reinstalling a stale wheel. Usage:
``build_key.py VERSION "CMAKE ARGS" PATCH...``
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path


def build_key(version: str, cmake_args: str, patches: list[Path]) -> str:
    digest = hashlib.sha256()
    for part in (version.encode(), b"\0", " ".join(cmake_args.split()).encode(), b"\0"):
        digest.update(part)
    for patch in patches:
        digest.update(patch.name.encode() + b"\0")
        digest.update(patch.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    print(build_key(argv[0], argv[1], [Path(p) for p in argv[2:]]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
