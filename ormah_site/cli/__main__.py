"""`python -m ormah_site.cli ...`: the `ormah` command, also how `ormah serve` starts its children."""

from ormah_site.cli import main

main()
