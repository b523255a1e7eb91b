"""Reports, and analyzing one trace or many.

A :class:`Report` wraps the analyzer's own report (schema
``stallscope.report.v1``, the JSON of ``stallscope analyze --json``):
``to_dict()`` is that JSON, and the tables (``findings``, ``devices``,
``steps``) are views of it, so nothing here redefines the schema.
"""

import copy
import json
import multiprocessing
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from . import _native
from ._native import TraceError

PathLike = Union[str, "os.PathLike[str]"]

_FINDING_COLUMNS = [
    "trace",
    "cause",
    "sub_cause",
    "share_pct",
    "est_saving_ns",
    "est_step_ns_after",
    "assumption",
    "evidence",
    "fix",
    "kernels",
]
_STEP_COLUMNS = ["trace", "index", "start_ns", "end_ns", "dur_ns", "outlier"]

# A row of analyze_many (and of the Ray recipe): name and type of each
# column. A failed trace has them all, None but `path` and `error`, so a
# Parquet table of rows has one schema.
ROW_FIELDS = [
    ("path", str),
    ("error", str),
    ("name", str),
    ("source", str),
    ("ranks", int),
    ("wall_ns", int),
    ("steps", int),
    ("step_mean_ns", int),
    ("step_median_ns", int),
    ("step_p90_ns", int),
    ("step_source", str),
    ("devices", int),
    ("gpu_idle_pct", float),
    ("findings", int),
    ("top_cause", str),
    ("top_sub_cause", str),
    ("top_share_pct", float),
    ("top_saving_ns", int),
    ("combined_saving_ns", int),
]
ROW_COLUMNS = [name for name, _ in ROW_FIELDS]


def _table(rows: List[Dict[str, Any]], columns: Optional[List[str]] = None):
    """A pandas DataFrame when pandas is installed, else the list of rows."""
    try:
        import pandas
    except ImportError:
        return rows
    if not rows and columns:
        return pandas.DataFrame(columns=columns)
    return pandas.DataFrame.from_records(rows, columns=columns)


def _dur(ns: int) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns} ns"


def _idle_pct(rank: Dict[str, Any]) -> float:
    """Idle share of the window averaged over devices, in percent
    (Report::total_idle_pct in the analyzer, which `stallscope check` uses)."""
    devices = rank.get("devices") or []
    if not devices:
        return 0.0
    wall = max(rank.get("wall_ns") or 0, 1)
    return sum(100.0 * d["idle_ns"] / wall for d in devices) / len(devices)


class Report:
    """The diagnosis of one trace (or of the rank traces of one job)."""

    def __init__(self, native: "_native.NativeReport"):
        self._native = native
        self._dict = json.loads(native.json())

    def to_dict(self) -> Dict[str, Any]:
        """The report JSON (``stallscope.report.v1``; ``...v1.multi`` for ranks)."""
        return copy.deepcopy(self._dict)

    @property
    def ranks(self) -> List[Dict[str, Any]]:
        """One ``stallscope.report.v1`` dict per trace."""
        if self._dict.get("schema", "").endswith(".multi"):
            return copy.deepcopy(self._dict["ranks"])
        return [self.to_dict()]

    @property
    def findings(self):
        """Ranked findings: what idled the GPU, and what each fix saves."""
        rows = [
            {"trace": r["name"], **{k: f.get(k) for k in _FINDING_COLUMNS[1:]}}
            for r in self.ranks
            for f in r["findings"]
        ]
        for row in rows:
            row["kernels"] = row["kernels"] or []
        return _table(rows, _FINDING_COLUMNS)

    @property
    def devices(self):
        """One row per GPU: busy and idle time, idle by cause, busy by precision."""
        rows = []
        for r in self.ranks:
            wall = max(r["wall_ns"], 1)
            for d in r["devices"]:
                row = {
                    "trace": r["name"],
                    "id": d["id"],
                    "name": d["name"],
                    "arch": d["arch"],
                    "busy_ns": d["busy_ns"],
                    "idle_ns": d["idle_ns"],
                    "idle_pct": 100.0 * d["idle_ns"] / wall,
                }
                row.update({f"idle_{k}_ns": v for k, v in d["idle_by_cause_ns"].items()})
                row.update({f"busy_{k}_ns": v for k, v in d["busy_by_precision_ns"].items()})
                rows.append(row)
        return _table(rows)

    @property
    def steps(self):
        """One row per GPU-side step (the JSON holds only their summary)."""
        names = [r["name"] for r in self.ranks]
        rows = [
            dict(zip(_STEP_COLUMNS, (names[t], *rest))) for t, *rest in self._native.steps()
        ]
        return _table(rows, _STEP_COLUMNS)

    def text(self) -> str:
        """The text report of ``stallscope analyze``."""
        return self._native.text()

    def to_markdown(self) -> str:
        """The Markdown report of ``stallscope analyze --markdown``."""
        return self._native.markdown()

    def to_perfetto(self, path: PathLike):
        """Writes the Perfetto trace; returns its path (a list of per-rank
        paths, ``x.rank0.pftrace``..., for several traces)."""
        written = self._native.write_perfetto(os.fspath(path))
        return written[0] if len(written) == 1 else written

    def summary(self) -> str:
        """A few lines: idle share, steps, and the top fix."""
        lines = []
        for r in self.ranks:
            steps = r["steps"]
            line = f"stallscope: {r['name']}: GPU idle {_idle_pct(r):.1f}% of {_dur(r['wall_ns'])}"
            if steps["count"]:
                line += f"; {steps['count']} steps, mean {_dur(steps['mean_ns'])}"
            lines.append(line)
            if r["findings"]:
                f = r["findings"][0]
                cause = f["cause"] + (f"/{f['sub_cause']}" if f["sub_cause"] else "")
                lines.append(
                    f"  top fix ({cause}, saves ~{_dur(f['est_saving_ns'])}): {f['fix']}"
                )
            else:
                lines.append("  no finding worth a fix")
        return "\n".join(lines)

    def __len__(self) -> int:
        return len(self._native)

    def __repr__(self) -> str:
        names = ", ".join(r["name"] for r in self.ranks)
        return f"<stallscope.Report {names}>"

    def __str__(self) -> str:
        return self.summary()


def analyze(path_or_paths: Union[PathLike, Sequence[PathLike]], *, hta_compat: bool = False) -> Report:
    """Analyzes a trace as ``stallscope analyze`` does: a recording directory
    (``stallscope record``), a PyTorch-profiler (Kineto) trace ``.json`` or
    ``.json.gz``, several of them, or a directory of per-rank traces.

    Raises :class:`TraceError` with the reader's message when a trace cannot be read.
    """
    if isinstance(path_or_paths, (str, bytes, os.PathLike)):
        paths = [os.fsdecode(path_or_paths)]
    else:
        paths = [os.fsdecode(p) for p in path_or_paths]
    return Report(_native.analyze_paths(paths, hta_compat))


def analyze_bytes(data, name: str = "trace.json", *, hta_compat: bool = False) -> Report:
    """Analyzes a Kineto trace held in memory (JSON, or gzip-compressed JSON,
    told apart by its bytes); ``name`` labels the report and the errors."""
    if not isinstance(data, bytes):
        data = bytes(data)
    return Report(_native.analyze_bytes(data, str(name), hta_compat))


def headline(report: Union[Report, Dict[str, Any]]) -> Dict[str, Any]:
    """The row of a trace in a batch: its headline figures, from the report
    JSON (the first rank's for a multi-rank report; ``ranks`` counts them)."""
    d = report.to_dict() if isinstance(report, Report) else report
    ranks = d["ranks"] if d.get("schema", "").endswith(".multi") else [d]
    r = ranks[0]
    top = r["findings"][0] if r["findings"] else {}
    combined = r.get("combined") or {}
    return {
        "path": None,
        "error": None,
        "name": r["name"],
        "source": r["source"],
        "ranks": len(ranks),
        "wall_ns": r["wall_ns"],
        "steps": r["steps"]["count"],
        "step_mean_ns": r["steps"]["mean_ns"],
        "step_median_ns": r["steps"]["median_ns"],
        "step_p90_ns": r["steps"]["p90_ns"],
        "step_source": r["steps"]["source"],
        "devices": len(r["devices"]),
        "gpu_idle_pct": _idle_pct(r),
        "findings": len(r["findings"]),
        "top_cause": top.get("cause"),
        "top_sub_cause": top.get("sub_cause"),
        "top_share_pct": top.get("share_pct"),
        "top_saving_ns": top.get("est_saving_ns"),
        "combined_saving_ns": combined.get("est_saving_ns"),
    }


def failed_row(path: str, error: BaseException) -> Dict[str, Any]:
    """The row of a trace that could not be analyzed."""
    row = dict.fromkeys(ROW_COLUMNS)
    row["path"] = path
    row["error"] = str(error) if isinstance(error, TraceError) else f"{type(error).__name__}: {error}"
    return row


def _row_of_path(path: str, hta_compat: bool) -> Dict[str, Any]:
    try:
        row = headline(analyze(path, hta_compat=hta_compat))
    except Exception as e:  # one failed row, never a failed batch
        return failed_row(path, e)
    row["path"] = path
    return row


def _init_worker(threads: int) -> None:
    # Each worker's analyzer would otherwise start one thread per core.
    os.environ.setdefault("RAYON_NUM_THREADS", str(threads))


def analyze_many(
    paths: Iterable[PathLike], processes: Optional[int] = None, *, hta_compat: bool = False
) -> List[Dict[str, Any]]:
    """Analyzes each trace on its own, in ``processes`` worker processes
    (default: one per CPU, at most one per trace), and returns one row per
    trace in order: its headline figures (:func:`headline`), or ``error`` set
    to the reader's message. ``pandas.DataFrame(rows)`` makes it a table.

    Workers are spawned, not forked (a fork after the analyzer has started its
    threads could deadlock): call it under ``if __name__ == "__main__":`` in a
    script, as with any spawning ``multiprocessing`` code.
    """
    paths = [os.fsdecode(p) for p in paths]
    cpus = os.cpu_count() or 1
    if processes is None:
        processes = cpus
    processes = max(1, min(processes, len(paths)))
    if processes == 1:
        return [_row_of_path(p, hta_compat) for p in paths]
    ctx = multiprocessing.get_context("spawn")
    threads = max(1, cpus // processes)
    with ctx.Pool(processes, initializer=_init_worker, initargs=(threads,)) as pool:
        return pool.starmap(_row_of_path, [(p, hta_compat) for p in paths], chunksize=1)
