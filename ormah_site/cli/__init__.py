"""The `ormah` command: Ormah's own command line (argparse; Django is imported only by commands that need it).

`ormah --help` lists Ormah's commands; Django's are under `ormah admin`. The everyday commands (remember, recall,
show, forget, connect, outdated, self, context-pack, whisper inject) talk to the running server without loading
Django or the model, and run the same API in-process when no server answers (ormah_site/cli/client.py).
"""

from __future__ import annotations

import os
import re
import sys

from ormah_site import __version__

NO_HOME_CHECK = {"init", "admin", "setup", "mcp"}  # mcp only speaks HTTP to the server


# Control characters but tab and newline: ESC, CR, BEL, DEL and the C1 range (0x9b is CSI on some terminals).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown(text: str) -> str:
    """Text for the terminal: a control character from a memory is printed as its \\u001b-style escape, so no memory
    moves the cursor, erases a line, retitles the window or writes the clipboard (OSC 52) when it is recalled or
    shown (session 23, review11). In --json output that escape is valid JSON for the same character."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _fail(message: str) -> int:
    print(f"ormah: {shown(message)}", file=sys.stderr)
    return 1


def _run(argv: list[str]) -> int:
    from ormah_site.cli.client import ApiError
    from ormah_site.cli.env import home_problem, ormah_home
    from ormah_site.cli.parser import build_parser, parse

    parser = build_parser(__version__)
    if not argv:
        parser.print_help()
        return 0
    if argv[0] == "admin":
        if not ormah_home().is_dir():
            return _fail(f"ORMAH_HOME {ormah_home()} does not exist: check ORMAH_HOME, or run `ormah init`")
        from ormah_site.cli.django_boot import run_admin

        run_admin(argv[1:])
        return 0
    options = parse(parser, argv)
    command = options.command
    if command == "whisper" and options.action in ("inject", "store"):
        from whisper import hook  # the hook client: standard library only, never blocks the agent

        hook.main([options.action])
        return 0
    if command not in NO_HOME_CHECK:
        problem = home_problem()
        if problem:
            return _fail(problem)
    if command == "serve":
        from ormah_site.cli.serving import port_problem

        problem = port_problem(options.host, options.port)
        if problem:
            return _fail(problem)
    if command == "setup":
        from ormah_site.cli.setup_command import run_setup

        return run_setup(options)
    from ormah_site.cli.thin import COMMANDS

    if command in COMMANDS and not getattr(options, "markdown", False):
        try:
            print(shown(COMMANDS[command](options)))
        except ApiError as exc:
            return _fail(exc.message)
        return 0
    from ormah_site.cli.django_boot import run_command

    run_command(command.replace("-", "_"), argv[1:])
    return 0


def _reader_gone() -> int:
    """The reader of the output went away (`ormah recall x | head -1`): what was done stays done, nothing more is
    printed, and the exit code is a shell's for a program the pipe's SIGPIPE ended (128 + 13). Python ignores SIGPIPE,
    so the write raised instead, and printed a traceback. The output's descriptor now points at /dev/null, so the
    flush at exit does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real descriptor behind stdout (a test's capture)
        pass
    return 141


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `ormah` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        code = _run(args)
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        code = _reader_gone()
    except Exception as exc:  # an index without tables after all (a home half-initialised by hand)
        if "no such table" not in str(exc):
            raise
        code = _fail("Ormah is not initialised here (the index lacks its tables): run `ormah init`")
    sys.exit(code)


if __name__ == "__main__":
    main()
