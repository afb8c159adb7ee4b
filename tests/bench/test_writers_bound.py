"""Every bench that writes its docs block can reach `write_block` (session 15: three called it unimported).

The name must be bound where it is called: imported at module level (so the imported module has it) or by an
import inside the calling function. A miss used to surface only as a NameError after the whole run.
"""

import ast
import importlib
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _local_imports(func: ast.AST) -> set[str]:
    return {alias.asname or alias.name for node in ast.walk(func) if isinstance(node, ast.ImportFrom | ast.Import)
            for alias in node.names}


def _callers(tree: ast.Module) -> list[ast.FunctionDef]:
    return [func for func in ast.walk(tree) if isinstance(func, ast.FunctionDef)
            and any(isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "write_block"
                    for call in ast.walk(func))]


def test_every_bench_that_calls_write_block_binds_it():
    unbound, writers = [], 0
    for path in sorted(BENCH.glob("*.py")):
        if path.name == "_common.py":
            continue
        callers = _callers(ast.parse(path.read_text()))
        if not callers:
            continue
        writers += 1
        module = importlib.import_module(f"bench.{path.stem}")
        unbound += [f"{path.stem}.{func.name}" for func in callers
                    if not hasattr(module, "write_block") and "write_block" not in _local_imports(func)]
    assert writers >= 10
    assert unbound == []
