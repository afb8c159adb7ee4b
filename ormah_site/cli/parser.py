"""The `ormah` command line: Ormah's commands only, each option with its help (argparse, standard library).

Django's own commands (migrate, dbshell, flush, ...) are reachable only under `ormah admin ...`.
"""

from __future__ import annotations

import argparse

from memory.domain.enums import EdgeType, NodeType, Tier

PACK_POLICIES = ["auto", "task", "workspace"]  # memory.domain.packing.PackPolicy (a test keeps them equal)
TYPES = [t.value for t in NodeType]
TIERS = [t.value for t in Tier]
EDGES = [e.value for e in EdgeType]


def _json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the answer as JSON instead of text")


def _memory_commands(sub) -> None:
    p = sub.add_parser("remember", help="remember something (a markdown file, indexed and auto-linked)",
                       description="Remember something: writes a markdown file citing an explicit_memory evidence "
                                   "event, indexes it and links it to similar memories.")
    p.add_argument("content", help="what to remember; '-' reads it from stdin")
    p.add_argument("--title", help="a short title (default: none; lists show the content's start)")
    p.add_argument("--type", default="fact", choices=TYPES, metavar="TYPE",
                   help=f"the kind of memory, one of: {', '.join(TYPES)} (default: fact)")
    p.add_argument("--tier", default="working", choices=TIERS, metavar="TIER",
                   help=f"priority, one of: {', '.join(TIERS)} (core: always relevant; default: working)")
    p.add_argument("--space", help="the project this memory belongs to (default: global)")
    p.add_argument("--tags", default="", help="comma-separated tags, e.g. 'db,staging'")
    p.add_argument("--about-self", action="store_true", help="a memory about you: links it to the self node")
    p.add_argument("--confidence", type=float, default=1.0, help="how sure you are, 0 to 1 (default: 1)")
    p.add_argument("--source", default="cli", help="who wrote it (default: cli)")
    p.add_argument("--session", help="the session this memory comes from (its evidence event's session)")
    _json(p)

    p = sub.add_parser("recall", help="search memories (hybrid: words, meaning, graph)",
                       description="Search memories with the same pipeline as the API; searching never counts "
                                   "as use.")
    p.add_argument("query", help="what to look for, in your own words")
    p.add_argument("--limit", type=int, default=10, help="how many results at most (default: 10)")
    p.add_argument("--types", help=f"comma-separated types to keep, from: {', '.join(TYPES)}")
    p.add_argument("--tiers", help=f"comma-separated tiers to keep, from: {', '.join(TIERS)}")
    p.add_argument("--spaces", help="comma-separated spaces to keep ('global' for global memories)")
    p.add_argument("--tags", help="comma-separated tags (a memory with any of them is kept)")
    p.add_argument("--after", help="created on or after (ISO date or datetime)")
    p.add_argument("--before", help="created before (ISO date or datetime)")
    p.add_argument("--space", help="the current project: its memories rank first (default: ORMAH_SPACE)")
    p.add_argument("--history", action="store_true", help="include memories marked outdated")
    p.add_argument("--full", action="store_true", help="--json: each hit's full content, not a snippet")
    _json(p)

    p = sub.add_parser("show", help="show one memory by id or unique id prefix")
    p.add_argument("node_id", help="the memory's id or a unique prefix of it (8 characters usually do)")
    p.add_argument("--markdown", action="store_true", help="print the markdown file as stored")
    _json(p)

    p = sub.add_parser("forget", help="forget a memory (soft delete, restorable)",
                       description="Forget a memory: its file moves to deleted/ and can be restored with --restore.")
    p.add_argument("node_id", help="the memory's id or a unique prefix of it")
    p.add_argument("--restore", action="store_true", help="bring a forgotten memory back (its id or a unique prefix of it)")

    p = sub.add_parser("connect", help="connect two memories with a typed edge")
    p.add_argument("source_id", help="the memory the edge starts from (id or prefix); the edge is stored in it")
    p.add_argument("target_id", help="the memory the edge points to (id or prefix)")
    p.add_argument("--edge", default="related_to", choices=EDGES, metavar="EDGE",
                   help=f"the relation, one of: {', '.join(EDGES)} (default: related_to)")
    p.add_argument("--weight", type=float, default=0.5, help="strength of the relation, 0 to 1 (default: 0.5)")
    p.add_argument("--reason", help="why the two are connected")

    p = sub.add_parser("outdated", help="mark a memory as no longer true (search then skips it)")
    p.add_argument("node_id", help="the memory's id or a unique prefix of it")
    p.add_argument("--reason", help="why it no longer holds (appended to its content)")

    p = sub.add_parser("self", help="show the self node and the memories that define you")
    p.add_argument("--space", help="keep identity memories of this project and global ones")
    p.add_argument("--limit", type=int, default=50, help="how many identity memories at most (default: 50)")
    _json(p)

    p = sub.add_parser("context-pack", help="a budgeted, cited context pack for an agent")
    p.add_argument("query", nargs="?", default="", help="what the agent is about to work on (optional)")
    p.add_argument("--budget", type=int, default=1200, help="token budget (default: 1200)")
    p.add_argument("--policy", choices=PACK_POLICIES, default="auto", metavar="POLICY",
                   help=f"what to favour, one of: {', '.join(PACK_POLICIES)} (default: auto)")
    p.add_argument("--scope", help="global, user, project:NAME, workspace:/PATH or session:ID")
    p.add_argument("--workspace", help="the agent's workspace folder: drift warnings against it")
    p.add_argument("--session", help="the session whose active state to pack")
    p.add_argument("--space", help="the current project: its memories rank first (default: ORMAH_SPACE)")
    _json(p)


def _store_commands(sub) -> None:
    p = sub.add_parser("init", help="prepare ORMAH_HOME (model, database, index, self node, API token)",
                       description="Prepare ORMAH_HOME: the model, the database, the index of the memory files, the "
                                   "self node, the API token and the web UI account. Safe to run again: it keeps "
                                   "your memories, token and password (`make run` runs it before each serve).")
    p.add_argument("--name", help="your name, for the self node")
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    p.add_argument("--password", action="store_true", help="set the web UI password of the 'ormah' account")
    p.add_argument("--new-password", action="store_true", help="generate a new web UI password")

    p = sub.add_parser("serve", help="serve the API and UI, the job cluster and the file watcher")
    p.add_argument("--host", help="address to bind (default: ORMAH_HOST or 127.0.0.1)")
    p.add_argument("--port", type=int, help="port to bind (default: ORMAH_PORT or 8787)")
    p.add_argument("--no-cluster", action="store_true", help="do not start the job cluster")
    p.add_argument("--no-watch", action="store_true", help="do not watch the node folder for edits")

    p = sub.add_parser("import", help="import notes: an Ormah export, an Ormah folder or a markdown folder")
    p.add_argument("path", help="an `ormah export` archive, an Ormah memory folder or a folder of markdown notes")
    p.add_argument("--space", help="space for plain notes (Ormah node files keep their own)")
    _json(p)

    p = sub.add_parser("export", help="export every memory to a .tar.gz or .zip archive")
    p.add_argument("path", help="the archive to create, ending in .tar.gz, .tgz or .zip")
    _json(p)

    p = sub.add_parser("sync", help="reconcile a folder of memory files (a git checkout, say) with the store",
                       description="Reconcile PATH/nodes/*.md with the store, both ways: what changed on one side "
                                   "since the last sync goes to the other; a memory changed on both sides keeps "
                                   "the store's version and the folder's in conflicts/. Exit status 1 when a "
                                   "conflict, an error or a malformed file needs a look (docs/team-server.md).")
    p.add_argument("path", help="the folder to sync (created when missing; its nodes/ holds the memories)")
    p.add_argument("--dry-run", action="store_true", help="print the plan; write nothing")
    _json(p)

    p = sub.add_parser("rebuild", help="rebuild the index from the markdown and evidence files")
    p.add_argument("--incremental", action="store_true", help="only index what changed")
    p.add_argument("--verify", action="store_true", help="trust no hash: rewrite every row from its file")
    _json(p)

    p = sub.add_parser("backup", help="back up the memory files and the index")
    p.add_argument("--list", action="store_true", help="list backups, newest first")
    p.add_argument("--reason", default="manual", help="a note stored with the backup (default: manual)")
    _json(p)

    p = sub.add_parser("restore", help="restore a backup (the current memory is kept as a backup first)")
    p.add_argument("name", help="a name from `ormah backup --list`, or a backup folder's path")
    _json(p)

    p = sub.add_parser("doctor", help="check the model, extensions, files and index; --heal repairs drift")
    p.add_argument("--heal", action="store_true", help="run an incremental sync first to repair drift")
    _json(p)

    p = sub.add_parser("tasks", help="maintenance jobs: list, run NAME, run-all, pause NAME, resume NAME, sync")
    p.add_argument("action", choices=["list", "run", "run-all", "pause", "resume", "sync"],
                   help="what to do with the jobs")
    p.add_argument("name", nargs="?", help="the job, for run, pause and resume")
    _json(p)

    p = sub.add_parser("token", help="API tokens in the database, for every host: create NAME, list, revoke NAME",
                       description="Named API tokens kept in the database (only their sha256), accepted by every "
                                   "host that serves it beside ORMAH_API_TOKEN and the api_token file.")
    p.add_argument("action", choices=["create", "list", "revoke"],
                   help="create: make a token and print its secret once; list; revoke: refuse it from now on")
    p.add_argument("name", nargs="?", help="the token's name, for create and revoke (e.g. ci-bot)")
    _json(p)


def _agent_commands(sub) -> None:
    p = sub.add_parser("whisper", help="the agent hook client (inject, store) and the legacy hook setup")
    p.add_argument("action", choices=["inject", "store", "setup"],
                   help="inject/store: read the hook's JSON on stdin; setup: the whisper hooks alone in "
                        "Claude Code's settings (`ormah setup claude` adds the MCP server too)")
    p.add_argument("--global", dest="global_", action="store_true", help="setup: the user-wide settings")
    p.add_argument("--path", help="setup: write this settings file instead")

    p = sub.add_parser("setup", help="plug Ormah into an agent: MCP server and hooks (claude, codex)",
                       description="Register Ormah's MCP server with the agent and, for Claude Code, the whisper "
                                   "hooks. Each command written carries ORMAH_URL and the token file; every file "
                                   "touched is backed up first; running it again changes nothing.")
    p.add_argument("agent", choices=["claude", "codex"], help="which agent: claude (Claude Code) or codex")
    p.add_argument("--project", action="store_true",
                   help="claude: this project only (.mcp.json, .claude/settings.local.json) instead of user-wide")
    p.add_argument("--print", dest="print_only", action="store_true", help="show what would be written; write nothing")
    p.add_argument("--check", action="store_true",
                   help="self-test the installed setup: files, server, token, and what the hook returns for a prompt")
    p.add_argument("--prompt", default=None, help="--check: the sample prompt to feed the hook")

    sub.add_parser("mcp", help="serve Ormah's MCP tools over stdio (for an agent; the server must run)",
                   description="Serve Ormah's MCP tools over stdio: it reads JSON-RPC from the agent on stdin and "
                               "prints nothing for a person, so an agent starts it (`ormah setup claude|codex` "
                               "writes the entry; docs/agents.md). It calls the running server (`ormah serve`) at "
                               "ORMAH_URL, else http://ORMAH_HOST:ORMAH_PORT, with the token of ORMAH_TOKEN_FILE.")

    sub.add_parser("admin", help="Django's management commands (migrate, createsuperuser, ...): ormah admin help",
                   add_help=False)


def build_parser(version: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ormah",
        description="Ormah: local-first long-term memory for AI agents. Memories are markdown files under "
                    "ORMAH_HOME (default ~/.local/share/ormah); the commands talk to the running server when "
                    "there is one.",
        epilog="Start with `ormah init`, then `ormah serve`. `ormah COMMAND --help` explains each command.",
    )
    parser.add_argument("--version", action="version", version=f"ormah {version}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    _memory_commands(sub)
    _store_commands(sub)
    _agent_commands(sub)
    for name, command in sub.choices.items():  # a command without its own description shows its one-line help
        if command.description is None and name != "admin":
            command.description = _sentence(sub_help(sub, name))
    return parser


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def sub_help(sub, name: str) -> str:
    """The one-line help `ormah --help` shows for the command `name`."""
    return next(a.help for a in sub._choices_actions if a.dest == name)


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's own parser, by name."""
    return dict(next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices)


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """`parser.parse_args(argv)`, except that an unknown option is reported with its command's usage
    (`ormah remember: error: unrecognized arguments: --bogus`), not with `ormah`'s (argparse's default)."""
    options, extra = parser.parse_known_args(argv)
    if extra:
        subcommands(parser).get(options.command, parser).error(f"unrecognized arguments: {' '.join(extra)}")
    return options
