"""The ``ewr`` command installed with the package: the command line's own Rust code.

``pip install`` puts an ``ewr`` script on PATH that calls :func:`main`; ``python -m ewr``
does the same. Exit codes as the binary's: 0 success, 1 failure while working, 2 bad input.
"""

import sys


def main() -> None:
    """Run ``ewr`` with this process's arguments and exit with its code."""
    from ewr._ewr import cli_main

    # A child started to read user files first (crash-safe HDF5 reads) runs this interpreter
    # again on this module.
    relaunch = [sys.executable, "-m", "ewr"]
    sys.exit(cli_main(["ewr", *sys.argv[1:]], relaunch))
