"""`python -m odh.training.cli ARGS`: the same as `odh training ARGS`."""

from odh.training.cli import main_exit

if __name__ == "__main__":
    main_exit()
