"""Every code block of README.md and docs/ runs as written, and shows what it prints.

The rules (docs/architecture.md, "Writing docs", states them for writers):

- A ```python block runs in the installed package; the blocks of one page share one namespace,
  in order. With `<!-- run: script -->` on the line before it, the block runs alone as a script
  in a fresh interpreter instead (for `if __name__ == "__main__"` code, multiprocessing, Ray).
- A ```sh block runs in bash (-e -u -o pipefail) with the virtual environment's bin/ on PATH.
- A page whose blocks name http://127.0.0.1:8080 gets a strata-server of its own for them
  (tests/server_process.py), with the Qdrant door too when they name 127.0.0.1:6333; the
  addresses in the blocks are rewritten to the server's free ports.
- `<!-- output -->` before a block makes it the expected standard output of the block before it
  (STRATA_UPDATE_DOC_OUTPUTS=1 rewrites these blocks from what the code printed).
- `<!-- no-run: reason -->` before a block skips it; the reason is required.
- Any other block fails the test: an unmarked block is one nobody checks.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import RAY_STARTUP_TIMED_OUT
from server_process import free_port, running_server

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
NATIVE_URL, QDRANT_URL = "http://127.0.0.1:8080", "http://127.0.0.1:6333"
FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)[ \t]*$")
MARKER = re.compile(r"^<!--\s*(.*?)\s*-->$")
RUNNABLE = {"python", "sh"}
# STRATA_UPDATE_DOC_OUTPUTS=1 rewrites the output blocks with what the code printed (then read
# the diff: the test cannot tell a wrong output from a changed one).
UPDATE = os.environ.get("STRATA_UPDATE_DOC_OUTPUTS") == "1"


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    marker: str | None  # the HTML comment on the line before, if any

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks_of(page: Path) -> list[Block]:
    lines = page.read_text().splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            if lines[i].lstrip().startswith("```"):
                raise AssertionError(f"{page.relative_to(REPO)}:{i + 1}: an indented or "
                                     "annotated fence: code blocks start at column 0")
            i += 1
            continue
        start = i
        i += 1
        body = []
        while i < len(lines) and lines[i] != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise AssertionError(f"{page.relative_to(REPO)}:{start + 1}: unclosed code block")
        prev = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.match(prev.strip())
        out.append(Block(page, start + 1, m.group(1), "\n".join(body) + "\n",
                         marker.group(1) if marker else None))
        i += 1
    return out


def check_marks(blocks: list[Block]) -> None:
    """Each block is runnable, an output, or skipped with a reason."""
    for n, b in enumerate(blocks):
        if b.marker is not None and b.marker.startswith("no-run"):
            reason = b.marker[len("no-run"):].lstrip(":").strip()
            assert reason, f"{b.where}: no-run needs a reason (<!-- no-run: why -->)"
        elif b.marker == "output":
            before = blocks[n - 1] if n else None
            assert before is not None and before.lang in RUNNABLE and not (
                before.marker or "").startswith("no-run"), (
                f"{b.where}: an output block must follow a block that runs")
        elif b.lang not in RUNNABLE:
            pytest.fail(f"{b.where}: a ```{b.lang or '(no language)'} block that is neither "
                        "run, an <!-- output --> nor <!-- no-run: reason -->")
        else:
            assert b.marker in (None, "run: script"), f"{b.where}: unknown marker {b.marker!r}"


def needs_server(blocks: list[Block]) -> tuple[bool, bool]:
    live = [b.code for b in blocks if b.lang in RUNNABLE and not (b.marker or "").startswith(
        "no-run")]
    return any(NATIVE_URL in c for c in live), any(QDRANT_URL in c for c in live)


def rewrite_outputs(page: Path, updates: list[tuple[Block, str]]) -> None:
    lines = page.read_text().splitlines()
    for b, got in sorted(updates, key=lambda u: -u[0].line):
        end = b.line + len(b.code.rstrip("\n").splitlines())  # index of the closing fence
        lines[b.line:end] = got.splitlines()
    page.write_text("\n".join(lines) + "\n")


def run_page(page: Path, tmp_path: Path, native: str | None, qdrant: str | None) -> None:
    blocks = blocks_of(page)
    check_marks(blocks)
    namespace: dict = {"__name__": "__docs__"}
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    printed: str | None = None
    updates: list[tuple[Block, str]] = []
    for b in blocks:
        if (b.marker or "").startswith("no-run"):
            printed = None
            continue
        if b.marker == "output":
            assert printed is not None
            got = "\n".join(line.rstrip() for line in printed.rstrip("\n").splitlines())
            want = "\n".join(line.rstrip() for line in b.code.rstrip("\n").splitlines())
            if got != want and UPDATE:
                updates.append((b, got))
            else:
                assert got == want, f"{b.where}: the block above printed\n{printed}"
            printed = None
            continue
        code = b.code
        if native:
            code = code.replace(NATIVE_URL, native)
        if qdrant:
            code = code.replace(QDRANT_URL, qdrant)
        if b.lang == "sh":
            r = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, f"{b.where}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
            printed = r.stdout
        elif b.marker == "run: script":
            script = tmp_path / f"block_{b.line}.py"
            script.write_text(code)
            for _ in range(5):
                r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                                   capture_output=True, text=True, timeout=600)
                # The Ray blocks start Ray first: one whose start Ray itself gave up on
                # (a loaded machine) has done nothing else yet, so it runs again.
                if r.returncode == 0 or RAY_STARTUP_TIMED_OUT not in r.stderr:
                    break
            assert r.returncode == 0, f"{b.where}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
            printed = r.stdout
        else:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, b.where, "exec"), namespace)
            printed = out.getvalue()
    if updates:
        rewrite_outputs(page, updates)


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_code_blocks_run_as_written(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    native, qdrant = needs_server(blocks_of(page))
    if not native and not qdrant:
        run_page(page, tmp_path, None, None)
        return
    args: tuple[str, ...] = ()
    qdrant_url = None
    if qdrant:
        port = free_port()
        args, qdrant_url = ("--qdrant-addr", f"127.0.0.1:{port}"), f"http://127.0.0.1:{port}"
    data = tmp_path / "server-data"
    data.mkdir()
    with running_server(data, *args) as server:
        run_page(page, tmp_path, server.url, qdrant_url)


def test_pages_have_blocks_the_suite_runs():
    """A page parsed into nothing would pass silently: the fences must be found."""
    counts = {p.name: len(blocks_of(p)) for p in PAGES}
    assert counts["README.md"] >= 5 and counts["index-api.md"] >= 8, counts


def test_benchmarks_page_is_regenerated_from_the_results():
    r = subprocess.run([sys.executable, str(REPO / "bench" / "report.py"), "--check"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr + r.stdout


def test_every_result_file_follows_the_layout():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import runinfo
    finally:
        sys.path.remove(str(REPO / "bench"))
    files = sorted((REPO / "bench" / "results").rglob("*"))
    assert files
    for f in files:
        if f.is_dir():
            assert f.parent == REPO / "bench" / "results", f"{f}: one directory level only"
            continue
        name = runinfo.parse_result_name(f.name)
        assert f.parent.name == name.benchmark, f"{f}: not in its benchmark's directory"
