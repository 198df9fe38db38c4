"""The strata-server console script: replaces this process with the server binary.

os.execv, not subprocess: the Go server becomes this process, so SIGTERM and
SIGINT from a supervisor (systemd, Docker, Ctrl-C) reach it directly and it
shuts down cleanly (finishes requests, checkpoints, exits 0).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

BINARY = Path(__file__).resolve().parent / "bin" / "strata-server"


def main() -> None:
    if not BINARY.is_file():
        sys.exit(f"strata-server: {BINARY} is missing; install strata from a wheel built with Go")
    os.execv(BINARY, [str(BINARY), *sys.argv[1:]])


if __name__ == "__main__":
    main()
