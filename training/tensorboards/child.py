"""`python -m training.tensorboards.child <dashboard pid> <tensorboard's arguments>`: a
local TensorBoard that ends by itself when the dashboard process that started it is gone
(killed, or ended without stopping it), so none outlives the dashboard. It imports nothing
of the dashboard: TensorBoard's own `run_main` with a watch on its parent."""

from __future__ import annotations

import os
import sys
import threading
import time


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(0)


def main() -> None:
    parent = int(sys.argv[1])
    sys.argv = ["tensorboard", *sys.argv[2:]]
    threading.Thread(target=_watch, args=(parent,), daemon=True).start()
    from tensorboard.main import run_main

    run_main()


if __name__ == "__main__":
    main()
