"""Starts the installed strata-server binary on a free loopback port, for tests."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import strata

BINARY = Path(strata.__file__).resolve().parent / "bin" / "strata-server"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    def __init__(self, data_dir: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = data_dir.parent / f"server-{self.port}.log"
        self._log_file = self.log.open("wb")
        self.proc = subprocess.Popen(
            [str(BINARY), "--data-dir", str(data_dir), "--addr", f"127.0.0.1:{self.port}", *args],
            stdout=self._log_file, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"strata-server did not start: {self.log.read_text()}")
            time.sleep(0.05)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._log_file.close()
        return rc


@contextlib.contextmanager
def running_server(
    data_dir: Path, *args: str, env: dict[str, str] | None = None
) -> Iterator[ServerProcess]:
    server = ServerProcess(data_dir, *args, env=env)
    try:
        yield server
    finally:
        server.stop()
