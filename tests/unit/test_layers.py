"""Imports run one way: text <- compaction <- memory; importing the compaction rules loads no LLM client."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import turnstream

pytestmark = pytest.mark.unit

PACKAGE = Path(turnstream.__file__).parent
ALLOWED = {
    "text": ("turnstream.text",),
    "compaction": ("turnstream.text", "turnstream.compaction"),
}


def runtime_imports(path: Path) -> set[str]:
    """Modules a file imports at run time (imports under `if TYPE_CHECKING:` are for the type checker only)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_a_layer_imports_only_itself_and_the_layers_beneath(layer: str) -> None:
    wrong = {
        f"{path.relative_to(PACKAGE)}: {module}"
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        for module in runtime_imports(path)
        if module.split(".")[0] == "turnstream" and not module.startswith(ALLOWED[layer])
    }
    assert not wrong


def test_importing_the_compaction_rules_loads_no_llm_client_and_no_pydantic() -> None:
    for check in (
        "import turnstream.compaction, sys; assert 'openai' not in sys.modules",
        "import turnstream.compaction, sys; assert 'pydantic' not in sys.modules",
    ):
        subprocess.run([sys.executable, "-c", check], check=True, timeout=60)
