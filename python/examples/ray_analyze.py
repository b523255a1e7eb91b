"""Analyze many PyTorch-profiler (Kineto) traces with Ray Data: one row per
trace (stallscope's headline figures, or the reader's error), written as Parquet.

    python ray_analyze.py OUT_DIR TRACE_OR_DIR... [--address auto] [--num-cpus 2]

Ray reads the files (local paths, or s3://... with the right filesystem), and
each worker calls stallscope.analyze_bytes on a file's bytes: nothing needs
a shared filesystem, and a trace stallscope cannot read is one row with
`error` set, not a failed job. Without --address, a local Ray cluster starts
with --num-cpus worker slots; with --address auto, the running cluster is used.
"""

import argparse
import os

import pyarrow as pa
import ray

import stallscope

ARROW_TYPES = {str: pa.string(), int: pa.int64(), float: pa.float64()}
SCHEMA = pa.schema([(name, ARROW_TYPES[t]) for name, t in stallscope.ROW_FIELDS])


def analyze_one(path: str, data: bytes) -> dict:
    try:
        row = stallscope.headline(stallscope.analyze_bytes(data, os.path.basename(path)))
    except stallscope.TraceError as e:
        return stallscope.failed_row(path, e)
    row["path"] = path
    return row


def analyze_batch(batch: dict) -> pa.Table:
    rows = [analyze_one(str(p), bytes(b)) for p, b in zip(batch["path"], batch["bytes"])]
    # An explicit schema: a batch of failed rows alone would otherwise have
    # null-typed columns, which Parquet readers cannot merge with the others.
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="output directory for the Parquet files")
    ap.add_argument("traces", nargs="+", help="trace files or directories of traces")
    ap.add_argument("--address", default=None, help="a Ray cluster to join (e.g. auto)")
    ap.add_argument("--num-cpus", type=int, default=None, help="CPUs of a local cluster")
    args = ap.parse_args()

    ray.init(
        address=args.address,
        num_cpus=None if args.address else args.num_cpus,
        include_dashboard=False,
        # One analysis per worker slot: the analyzer's own threads would
        # otherwise oversubscribe the cores Ray already divides.
        runtime_env={"env_vars": {"RAYON_NUM_THREADS": "1"}},
    )
    ds = ray.data.read_binary_files(args.traces, include_paths=True)
    # One trace per batch: a file is analyzed as soon as it is read.
    rows = ds.map_batches(analyze_batch, batch_format="numpy", batch_size=1)
    rows.write_parquet(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
