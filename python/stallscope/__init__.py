"""stallscope: why is my GPU idle, and what is each fix worth?

    import stallscope
    r = stallscope.analyze("trace.pt.trace.json.gz")   # a Kineto trace or a recording
    print(r.text())
    r.findings                                         # a DataFrame when pandas is installed

The analysis is the Rust analyzer of the `stallscope` CLI (the extension
module ``stallscope._native``); the CLI itself and the recorder shim
(``libstallscope.so``) ship inside this package.
"""

from ._native import TraceError, __version__
from ._record import record
from ._report import (
    ROW_FIELDS,
    Report,
    analyze,
    analyze_bytes,
    analyze_many,
    failed_row,
    headline,
)

__all__ = [
    "ROW_FIELDS",
    "Report",
    "TraceError",
    "__version__",
    "analyze",
    "analyze_bytes",
    "analyze_many",
    "failed_row",
    "headline",
    "record",
]
