"""`stallscope.record`: run a command under the recorder (the bundled CLI)."""

import shlex
import subprocess
import time
from pathlib import Path
import os
from typing import Optional, Sequence, Union

from ._cli import binary


def _flags(options: dict) -> list:
    """``min_span_us=50`` -> ``--min-span-us 50``; ``flight=True`` -> ``--flight``."""
    out = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        elif value is False or value is None:
            continue
        else:
            out += [flag, str(value)]
    return out


def record(
    cmd: Union[str, Sequence[str]],
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    *,
    check: bool = True,
    **options,
) -> Path:
    """Runs ``cmd`` under ``stallscope record`` and returns the recording directory.

    ``cmd`` is an argument list, or a string split like a shell would.
    ``out`` is the output directory (default ``stallscope-<date>-<time>`` in the
    current directory, as the CLI names it). Other keyword arguments are
    ``stallscope record`` options: ``sample_hz=200``, ``no_gpu=True``,
    ``max_mb=64``, ``flight=True``. With ``check`` (the default), a command that
    fails raises ``subprocess.CalledProcessError``; the recording is kept.
    """
    argv = shlex.split(cmd) if isinstance(cmd, str) else [str(a) for a in cmd]
    if not argv:
        raise ValueError("record needs a command to run")
    if out is None:
        out = time.strftime("stallscope-%Y%m%d-%H%M%S")
    full = [str(binary()), "record", "-o", str(out), *_flags(options), "--", *argv]
    done = subprocess.run(full)
    if check and done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, full)
    return Path(out)
