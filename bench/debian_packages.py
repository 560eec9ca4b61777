"""The test and benchmark servers' Debian packages (PostgreSQL, MariaDB), installed when root."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable

def apt_install(package: str, error: type[Exception]) -> None:
    """`apt-get install` `package` (after `apt-get update`), or raise `error` saying why it cannot be.

    Raises:
        error: not root, no apt-get, or apt-get failed (its last lines of stderr).
    """
    if os.geteuid() != 0:
        raise error(f"{package} is not installed and this is not root, so it cannot be installed here "
                    f"(apt-get install {package})")
    if shutil.which("apt-get") is None:
        raise error(f"{package} is not installed and there is no apt-get to install it")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-q"],
                    ["apt-get", "install", "-y", "-q", "--no-install-recommends", package]):
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise error(f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}")


def install_command(argv: list[str], module: str, ensure_installed: Callable[[], object], error: type[Exception],
                    engine: str) -> int:
    """A server module's `install` command (for `make test`): install when missing; never fails the build."""
    if argv[:1] != ["install"]:
        print(f"usage: python -m {module} install", file=sys.stderr)
        return 2
    try:
        print(f"{engine} binaries: {ensure_installed()}")
    except error as exc:
        print(f"{engine} tests will be skipped: {exc}")
    return 0
