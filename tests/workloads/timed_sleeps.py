"""Sleeps of known length, each timed by the program itself right around the
call, as soon as the interpreter is up: relative sleeps (nanosleep) and
absolute-deadline sleeps (clock_nanosleep with TIMER_ABSTIME, what
time.sleep uses). Writes JSON to argv[1]: the calls with their request
and the CLOCK_MONOTONIC interval the program saw around each."""
import ctypes
import json
import sys
import time


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


libc = ctypes.CDLL(None, use_errno=True)
nanosleep = libc.nanosleep
clock_nanosleep = libc.clock_nanosleep
CLOCK_MONOTONIC = 1
TIMER_ABSTIME = 1
now = time.monotonic_ns
calls = []
for rep in range(3):
    for ms in (2, 4, 8):
        req = Timespec(0, ms * 1_000_000)
        a = now()
        nanosleep(ctypes.byref(req), None)
        b = now()
        calls.append({"kind": "relative", "ns": ms * 1_000_000, "a": a, "b": b})
        a = now()
        deadline = a + ms * 1_000_000
        ts = Timespec(deadline // 1_000_000_000, deadline % 1_000_000_000)
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ctypes.byref(ts), None)
        b = now()
        calls.append({"kind": "absolute", "ns": ms * 1_000_000, "a": a, "b": b,
                      "deadline": deadline})
with open(sys.argv[1], "w") as f:
    json.dump({"tid": __import__("threading").get_native_id(), "calls": calls}, f)
