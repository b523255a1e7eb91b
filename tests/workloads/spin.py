"""Burns CPU in a thread named 'spinner' (also its OS name) for argv[1] seconds
of its own CPU time (not wall time: the tests run on loaded machines)."""
import ctypes
import sys
import threading
import time

PR_SET_NAME = 15


def spin(seconds):
    ctypes.CDLL(None).prctl(PR_SET_NAME, b"spinner", 0, 0, 0)
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        x += 1


t = threading.Thread(target=spin, args=(float(sys.argv[1]),), name="spinner")
t.start()
t.join()
