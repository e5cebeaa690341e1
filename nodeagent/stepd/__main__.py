"""``python -m nodeagent.stepd``: see :mod:`nodeagent.stepd.main`.

Imports nodeagent.stepd.main.
"""

from __future__ import annotations

import os
import sys

from nodeagent.stepd.main import main

if __name__ == "__main__":
    status = main(sys.argv[1:])
    # No interpreter teardown: slurmd reports a step done when its stepd has exited,
    # and tearing down (psutil's modules included) took ~10 ms of every step.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
