"""What the wheel carries: the CLI, the shim beside the module, the console
script, the metadata; the shim and CLI link only against glibc (libcupti and
libcuda are dlopened). usage: wheel_contents_check.py WHEEL UNPACK_DIR VERSION"""
import os
import shutil
import stat
import subprocess
import sys
import zipfile

ALLOWED = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
           "libgcc_s.so.1", "ld-linux-x86-64.so.2"}


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return {line.split("[", 1)[1].split("]", 1)[0] for line in out.splitlines() if "(NEEDED)" in line}


def main():
    wheel, dest, version = sys.argv[1:4]
    shutil.rmtree(dest, ignore_errors=True)
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        z.extractall(dest)
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
    for f in ["stallscope/bin/stallscope", "stallscope/libstallscope.so", "stallscope/__init__.py",
              "stallscope/__main__.py", "stallscope/torch.py"]:
        assert f in names, f"{f} is not in the wheel: {sorted(names)}"
    assert any(n.startswith("stallscope/_native") and n.endswith(".so") for n in names), names
    assert modes["stallscope/bin/stallscope"] & stat.S_IXUSR, "the CLI is not executable"
    info = f"stallscope-{version}.dist-info"
    with open(os.path.join(dest, info, "METADATA")) as f:
        meta = f.read()
    assert f"Version: {version}\n" in meta, "the version is not Cargo's"
    assert "License-Expression: MIT OR Apache-2.0" in meta, "no licence"
    assert "Description-Content-Type: text/markdown" in meta, "no README"
    with open(os.path.join(dest, info, "entry_points.txt")) as f:
        assert "stallscope=stallscope._cli:main" in f.read().replace(" ", "")
    for f in ["stallscope/bin/stallscope", "stallscope/libstallscope.so"]:
        libs = needed(os.path.join(dest, f))
        assert libs <= ALLOWED, f"{f} links {sorted(libs - ALLOWED)}"
        print(f"ok: {f} needs only {sorted(libs)}")
    sizes = {n: os.path.getsize(os.path.join(dest, n)) for n in names if not n.endswith("/")}
    for n, s in sorted(sizes.items(), key=lambda x: -x[1])[:4]:
        print(f"   {s / 1e6:6.1f} MB  {n}")


if __name__ == "__main__":
    main()
