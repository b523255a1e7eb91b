#!/bin/sh
# sh execs python, which execs sh, which execs env, which execs echo.
exec python3 -c '
import os, sys
print("python", flush=True)
os.execvp("sh", ["sh", "-c", "echo sh; exec env echo done"])
'
