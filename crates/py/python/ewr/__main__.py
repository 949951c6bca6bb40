"""``python -m ewr ...`` runs the ``ewr`` command line (see :mod:`ewr._cli`)."""

from ewr._cli import main

if __name__ == "__main__":
    main()
