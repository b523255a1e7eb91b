"""`python -m stallscope ARGS` runs the bundled CLI, like `stallscope ARGS`."""

from ._cli import main

if __name__ == "__main__":
    main()
