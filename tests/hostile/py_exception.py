"""An uncaught exception: traceback on stderr, exit status 1; atexit runs."""
import atexit

atexit.register(lambda: print("atexit ran", flush=True))
print("before", flush=True)


def f():
    raise ValueError("hostile")


f()
