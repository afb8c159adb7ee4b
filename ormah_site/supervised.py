"""`python -m ormah_site.supervised <module> [args...]`: run `python -m <module> args...` as a part of the serve tree.

The part's own forks inherit the death signal (ormah_site.lifeline), so nothing it starts outlives it.
"""

from __future__ import annotations

import runpy
import sys

from ormah_site.lifeline import install_for_descendants


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: python -m ormah_site.supervised <module> [args...]")
    module = sys.argv[1]
    sys.argv = [module, *sys.argv[2:]]
    install_for_descendants()
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
