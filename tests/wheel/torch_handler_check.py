"""stallscope.torch.on_trace_ready with a stand-in for torch.profiler.profile.
usage: torch_handler_check.py TB_DIR SOURCE_TRACE"""
import contextlib
import gzip
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys

import stallscope
from stallscope.torch import on_trace_ready


class FakeProf:
    """Has what the handler may use of a torch profiler: export_chrome_trace,
    which (like torch's) writes the Chrome JSON, gzip when the name ends .gz."""

    def __init__(self, source):
        opener = gzip.open if source.endswith(".gz") else open
        with opener(source, "rt") as f:
            self.doc = json.load(f)
        self.paths = []

    def export_chrome_trace(self, path):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "wt") as f:
            json.dump(self.doc, f)
        self.paths.append(path)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def call(handler, prof):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        r = handler(prof)
    return r, buf.getvalue()


def cli_json(path):
    c = subprocess.run(["stallscope", "analyze", "--quiet", "--json", "-", path],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr
    return json.loads(c.stdout)


def main():
    tb, source = sys.argv[1], sys.argv[2]
    shutil.rmtree(tb, ignore_errors=True)
    prof = FakeProf(source)
    assert "distributedInfo" in prof.doc, "the source trace should carry distributedInfo"

    handler = on_trace_ready(tb)
    r, printed = call(handler, prof)
    path = prof.paths[-1]
    assert os.path.dirname(path) == tb and os.path.isdir(tb)
    worker = f"{socket.gethostname()}_{os.getpid()}"
    assert re.fullmatch(re.escape(worker) + r"\.\d+\.pt\.trace\.json", os.path.basename(path)), path
    doc = load(path)
    assert doc["distributedInfo"] == prof.doc["distributedInfo"]
    assert isinstance(r, stallscope.Report)
    assert printed.startswith("stallscope: ") and printed.strip() == r.summary(), printed
    assert r.to_dict() == cli_json(path), "the handler's report is not the CLI's"
    print(f"ok: {os.path.basename(path)}: json.load and stallscope analyze read it")
    print(printed.rstrip())

    r2, _ = call(handler, prof)
    assert prof.paths[-1] != path and os.path.basename(prof.paths[-1]).startswith(worker + ".")

    gz = on_trace_ready(tb, worker_name="rank0", use_gzip=True)
    r3, _ = call(gz, prof)
    p3 = prof.paths[-1]
    assert re.fullmatch(r"rank0\.\d+\.pt\.trace\.json\.gz", os.path.basename(p3)), p3
    assert load(p3)["distributedInfo"] == prof.doc["distributedInfo"]
    assert r3.to_dict() == cli_json(p3)
    print(f"ok: {os.path.basename(p3)}: gzip, worker_name")

    quiet = on_trace_ready(tb, analyze=False)
    r4, printed4 = call(quiet, prof)
    assert r4 is None and printed4 == "" and os.path.isfile(prof.paths[-1])

    prof.doc = {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "x", "pid": 0, "tid": 1}]}
    r5, printed5 = call(handler, prof)
    assert r5 is None and printed5.startswith("stallscope: cannot analyze"), printed5
    print("ok: analyze=False writes only; an unreadable trace is one line, not an exception")


if __name__ == "__main__":
    main()
