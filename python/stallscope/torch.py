"""A ``torch.profiler`` handler: the trace TensorBoard expects, then stallscope's summary.

    from stallscope.torch import on_trace_ready
    with torch.profiler.profile(schedule=..., on_trace_ready=on_trace_ready("./tb")) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()

torch is not imported here: the handler only calls ``prof.export_chrome_trace``.
"""

import os
import socket
import time
from typing import Callable, Optional

from ._native import TraceError
from ._report import Report, analyze as _analyze


def on_trace_ready(
    dir_name: str,
    *,
    worker_name: Optional[str] = None,
    analyze: bool = True,
    use_gzip: bool = False,
) -> Callable[[object], Optional[Report]]:
    """Returns a handler for ``torch.profiler.profile(on_trace_ready=...)``.

    The trace is written exactly as ``torch.profiler.tensorboard_trace_handler``
    writes it: ``dir_name`` is created if needed, the file is
    ``{worker_name}.{time.time_ns()}.pt.trace.json`` (``.gz`` with ``use_gzip``),
    ``worker_name`` defaults to ``{hostname}_{pid}`` fixed at the first call,
    and torch's own exporter writes it (``distributedInfo`` and all), so
    TensorBoard, HTA and Perfetto open it as before. Then, with ``analyze``,
    the handler prints stallscope's short summary and returns the
    :class:`~stallscope.Report` (None without ``analyze``). A trace stallscope
    cannot read is reported in one line, never raised into the training loop.
    """
    name = worker_name

    def handler(prof) -> Optional[Report]:
        nonlocal name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not name:
            name = f"{socket.gethostname()}_{os.getpid()}"
        # Nanoseconds avoid name clashes between exports, as in torch.
        file_name = f"{name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        path = os.path.join(dir_name, file_name)
        prof.export_chrome_trace(path)
        if not analyze:
            return None
        try:
            report = _analyze(path)
        except TraceError as e:
            print(f"stallscope: cannot analyze {path}: {e}")
            return None
        print(report.summary())
        return report

    return handler
