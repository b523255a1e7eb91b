"""The `stallscope` CLI bundled in the package.

The wheel carries the Rust binary at ``stallscope/bin/stallscope`` and the
recorder shim at ``stallscope/libstallscope.so``, beside this module (as
scalene and filprofiler ship their preload libraries). The binary finds the
shim there by itself (src/cli/shim_path.rs: ``../libstallscope.so`` from the
executable), so the console script only has to exec it.
"""

import os
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent


def binary() -> Path:
    """The bundled CLI executable."""
    return _HERE / "bin" / "stallscope"


def shim() -> Path:
    """The bundled recorder shim (LD_PRELOAD / CUDA_INJECTION64_PATH library)."""
    return _HERE / "libstallscope.so"


def main() -> None:
    """Console-script entry point: become the CLI (same pid, signals, exit status)."""
    exe = binary()
    if not os.access(exe, os.X_OK):
        sys.exit(f"stallscope: the bundled CLI is missing at {exe}; reinstall the wheel")
    args = [str(exe), *sys.argv[1:]]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, args)
