"""Entry script for the PyInstaller bundle (the same as ``python -m desktop_app``)."""

import multiprocessing
import sys

from desktop_app.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()  # the engine runs in a spawned child process
    sys.exit(main())
