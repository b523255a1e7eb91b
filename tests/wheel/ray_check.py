"""The Ray recipe's Parquet rows against `stallscope analyze --json`, trace by trace.
usage: ray_check.py ROWS_DIR BAD_TRACE TRACE..."""
import json
import subprocess
import sys

import pyarrow.parquet as pq

import stallscope


def main():
    rows_dir, bad, traces = sys.argv[1], sys.argv[2], sys.argv[3:]
    rows = pq.read_table(rows_dir).to_pylist()
    by_path = {}
    for row in rows:
        assert row["path"] not in by_path, f"two rows for {row['path']}"
        by_path[row["path"]] = row
    assert sorted(by_path) == sorted([*traces, bad]), (sorted(by_path), traces)
    assert len(rows) == len(traces) + 1

    failed = by_path[bad]
    try:
        stallscope.analyze(bad)
    except stallscope.TraceError as e:
        msg = str(e)
    else:
        raise AssertionError("the bad trace did not raise TraceError")
    assert failed["error"] and "invalid Kineto trace at byte" in failed["error"], failed
    assert msg.split(": ", 1)[1] in failed["error"], (msg, failed["error"])
    assert failed["wall_ns"] is None and failed["name"] is None

    for t in traces:
        row = by_path[t]
        c = subprocess.run(["stallscope", "analyze", "--quiet", "--json", "-", t],
                           capture_output=True, text=True)
        assert c.returncode == 0, c.stderr
        j = json.loads(c.stdout)
        top = j["findings"][0] if j["findings"] else {}
        want = {
            "error": None,
            "name": j["name"],
            "source": j["source"],
            "wall_ns": j["wall_ns"],
            "steps": j["steps"]["count"],
            "step_mean_ns": j["steps"]["mean_ns"],
            "step_median_ns": j["steps"]["median_ns"],
            "devices": len(j["devices"]),
            "findings": len(j["findings"]),
            "top_cause": top.get("cause"),
            "top_saving_ns": top.get("est_saving_ns"),
        }
        got = {k: row[k] for k in want}
        assert got == want, f"{t}:\n got  {got}\n want {want}"
        assert stallscope.headline(j) == {**row, "path": None}, t
        print(f"ok: {j['name']}: {row['steps']} steps, top {row['top_cause']}")
    print(f"ok: {len(rows)} rows, one per trace; the bad trace is one failed row")


if __name__ == "__main__":
    main()
