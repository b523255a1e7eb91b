"""The Python API in a fresh venv (no pandas): it agrees with the CLI it ships.
usage: api_check.py OUT_DIR BAD_TRACE WORKLOAD TRACE..."""
import json
import os
import shutil
import subprocess
import sys

import stallscope


def cli(*args):
    return subprocess.run(["stallscope", *map(str, args)], capture_output=True, text=True)


def cli_json(*paths):
    c = cli("analyze", "--quiet", "--json", "-", *paths)
    assert c.returncode == 0, c.stderr
    return json.loads(c.stdout)


def expect_trace_error(f, *args):
    try:
        f(*args)
    except stallscope.TraceError as e:
        return str(e)
    raise AssertionError(f"{f.__name__}{args!r} did not raise TraceError")


def main():
    out, bad, workload, traces = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    try:
        import pandas  # noqa: F401
    except ImportError:
        pass
    else:
        raise AssertionError("pandas is installed in the fresh venv")

    for t in traces:
        r = stallscope.analyze(t)
        d = r.to_dict()
        assert d == cli_json(t), f"{t}: to_dict() is not `stallscope analyze --json`"
        assert d["schema"] == "stallscope.report.v1"
        assert r.text() == cli("analyze", t).stdout, f"{t}: text() is not the CLI's text"
        md = cli("analyze", "--quiet", "--markdown", "-", t).stdout
        assert r.to_markdown() == md, f"{t}: to_markdown() is not the CLI's Markdown"
        assert isinstance(r.findings, list) and isinstance(r.devices, list)
        assert [f["cause"] for f in r.findings] == [f["cause"] for f in d["findings"]]
        assert [x["id"] for x in r.devices] == [x["id"] for x in d["devices"]]
        assert isinstance(r.steps, list) and len(r.steps) == d["steps"]["count"], t
        pf = r.to_perfetto(os.path.join(out, "r.pftrace"))
        assert os.path.getsize(pf) > 0
        with open(t, "rb") as f:
            data = f.read()
        rb = stallscope.analyze_bytes(data, os.path.basename(t))
        assert rb.to_dict() == d, f"{t}: analyze_bytes differs from analyze"
        assert stallscope.analyze_bytes(bytearray(data), os.path.basename(t)).to_dict() == d
        print(f"ok: {os.path.basename(t)}: {len(d['findings'])} findings, as the CLI")

    h = stallscope.analyze(traces[0], hta_compat=True).to_dict()
    assert h == cli_json("--hta-compat", traces[0]) and h.get("hta_compat"), "hta_compat"
    multi = stallscope.analyze(traces[:2])
    assert len(multi) == 2 and multi.to_dict() == cli_json(*traces[:2]), "two traces"
    assert {f["trace"] for f in multi.findings} <= {r["name"] for r in multi.ranks}
    print("ok: hta_compat and several traces, as the CLI")

    # Reader errors: TraceError with the reader's message (the CLI's too).
    assert issubclass(stallscope.TraceError, Exception)
    assert stallscope.TraceError.__module__ == "stallscope"
    msg = expect_trace_error(stallscope.analyze, bad)
    c = cli("analyze", bad)
    assert c.returncode != 0 and msg in c.stderr, (msg, c.stderr)
    assert "invalid Kineto trace at byte" in msg, msg
    with open(bad, "rb") as f:
        bmsg = expect_trace_error(stallscope.analyze_bytes, f.read(), "bad.json")
    assert "bad.json" in bmsg and "invalid Kineto trace" in bmsg, bmsg
    gz = expect_trace_error(stallscope.analyze_bytes, b"\x1f\x8b\x08\x00junk", "junk.json.gz")
    assert "gzip" in gz, gz
    missing = expect_trace_error(stallscope.analyze, os.path.join(out, "nope.json"))
    assert "no such file" in missing, missing
    print(f"ok: TraceError: {msg}")

    # Many traces, two worker processes: one row per trace, in order.
    rows = stallscope.analyze_many([*traces, bad], processes=2)
    assert len(rows) == len(traces) + 1
    for t, row in zip(traces, rows):
        want = stallscope.headline(cli_json(t))
        want["path"] = t
        assert row == want, (row, want)
    assert rows[-1]["path"] == bad and msg in rows[-1]["error"], rows[-1]
    assert list(rows[-1]) == [n for n, _ in stallscope.ROW_FIELDS]
    assert all(v is None for k, v in rows[-1].items() if k not in ("path", "error"))
    assert stallscope.analyze_many([*traces[:2]], processes=1) == rows[:2]
    print(f"ok: analyze_many: {len(rows)} rows, the bad one failed alone")

    # record(): the bundled CLI and shim, from Python.
    rec = stallscope.record([sys.executable, workload], out=os.path.join(out, "rec"), sample_hz=50)
    rr = stallscope.analyze(rec)
    assert rr.to_dict()["source"] == "native" and rr.to_dict()["processes"]["count"] >= 2
    try:
        stallscope.record([sys.executable, "-c", "raise SystemExit(3)"], out=os.path.join(out, "rec3"))
    except subprocess.CalledProcessError as e:
        assert e.returncode == 3
    else:
        raise AssertionError("record(check=True) of a failing command did not raise")
    print(f"ok: record: {rec}")


if __name__ == "__main__":
    main()
