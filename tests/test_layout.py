"""The library's layout as docs/design.md lists it: concern folders, each with a
docstring and ``__all__`` naming its modules, and imports that only run down the layers.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

PACKAGE = REPO / "sparktc"
#: From the top down: a module may import from its own folder and from the layers below it.
LAYERS = ["apps", "tracking", "ml", "stages", "experiment", "models", "evaluation", "features", "corpora", "runtime"]
#: The folders that are a library's public face: their ``__all__`` lists the classes users import from the folder
#: (``from sparktc.ml import OneVsRestClassifier``), each defined in one of its modules, which the docstring names.
EXPORTING = ("ml",)
#: Modules every layer may use; they import nothing of sparktc but each other's neighbours below.
SHARED = ["errors", "validation", "filesystem", "schemas", "integer_sets", "packaged"]
#: The folders of pure maths and formats over numpy, scipy and pyarrow: usable, and tested, without Spark.
SPARK_FREE = LAYERS[LAYERS.index("models"):LAYERS.index("runtime")]


def folder_modules(folder: str) -> list[str]:
    """The modules of ``folder`` (a path under sparktc/), a package inside it counting as one module."""
    modules = [path.stem for path in (PACKAGE / folder).glob("*.py") if path.stem != "__init__"]
    return sorted(modules + [path.parent.name for path in (PACKAGE / folder).glob("*/__init__.py")])


#: The packages inside a concern folder (the train stage, one module per way of fitting): their ``__init__``
#: exports their entry, and its docstring describes every module.
SUBPACKAGES = sorted(str(path.parent.relative_to(PACKAGE)) for path in PACKAGE.glob("*/*/__init__.py"))


def imported(path: Path) -> set[str]:
    """The top-level parts of sparktc (folders or shared modules) that ``path`` imports."""
    parts = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "sparktc":
            names = node.module.split(".")[1:2] or [alias.name for alias in node.names]
            parts.update(names)
        elif isinstance(node, ast.Import):
            parts.update(alias.name.split(".")[1] for alias in node.names if alias.name.startswith("sparktc."))
    return parts - {"__version__"}


def test_the_top_level_is_the_concern_folders_and_the_shared_modules() -> None:
    folders = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()}
    modules = {path.stem for path in PACKAGE.glob("*.py")} - {"__init__", "__main__"}  # python -m sparktc
    assert folders == set(LAYERS)
    assert modules == set(SHARED)


@pytest.mark.parametrize("folder", LAYERS)
def test_each_folder_says_what_it_is_for_and_lists_its_modules(folder: str) -> None:
    tree = ast.parse((PACKAGE / folder / "__init__.py").read_text())
    docstring = ast.get_docstring(tree)
    assert docstring and len(docstring.split()) >= 20, f"sparktc/{folder}/__init__.py needs a paragraph"
    [names] = [ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
               and [target.id for target in node.targets if isinstance(target, ast.Name)] == ["__all__"]]
    if folder in EXPORTING:
        defined = {node.name for module in folder_modules(folder)
                   for node in ast.parse((PACKAGE / folder / f"{module}.py").read_text()).body
                   if isinstance(node, ast.ClassDef | ast.FunctionDef)}
        assert set(names) <= defined, f"sparktc/{folder}/__init__.py exports what none of its modules defines"
        names = folder_modules(folder)
    assert sorted(names) == folder_modules(folder)
    for module in names:  # the docstring names every module it lists
        assert f"``{module}``" in docstring, f"sparktc/{folder}/__init__.py does not describe {module}"


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_each_package_inside_a_folder_describes_its_modules(package: str) -> None:
    docstring = ast.get_docstring(ast.parse((PACKAGE / package / "__init__.py").read_text()))
    assert docstring and len(docstring.split()) >= 20, f"sparktc/{package}/__init__.py needs a paragraph"
    for module in folder_modules(package):
        assert f"``{module}``" in docstring, f"sparktc/{package}/__init__.py does not describe {module}"


@pytest.mark.parametrize("folder", LAYERS)
def test_imports_only_run_down_the_layers(folder: str) -> None:
    below = set(LAYERS[LAYERS.index(folder):]) | set(SHARED)
    upward = {f"{path.relative_to(PACKAGE)} imports sparktc.{part}" for path in (PACKAGE / folder).rglob("*.py")
              for part in imported(path) - below}
    assert not upward


def test_the_shared_modules_import_no_folder() -> None:
    for module in SHARED:
        assert imported(PACKAGE / f"{module}.py") <= set(SHARED), module


def test_the_design_page_lists_every_folder_from_the_top_down() -> None:
    section = (REPO / "docs" / "design.md").read_text().split("\n## The folders\n", 1)[1].split("\n## ", 1)[0]
    firsts = [re.findall(r"`([\w.]+?)/?`", row.split(" | ")[0]) for row in re.findall(r"^\| `.*$", section, re.M)]
    assert firsts == [[name] for name in LAYERS] + [[f"{module}.py" for module in SHARED]]


def test_the_maths_folders_and_the_shared_modules_import_no_pyspark() -> None:
    """Every module of the Spark-free folders imports, pyspark made unimportable, in a fresh interpreter: what
    they import, however indirectly, never reaches Spark.
    """
    modules = [f"sparktc.{folder}.{name}" for folder in SPARK_FREE for name in folder_modules(folder)]
    modules += [f"sparktc.{name}" for name in SHARED]
    script = ("import importlib, sys\n"
              "sys.modules['pyspark'] = None  # importing pyspark, or anything under it, raises ImportError\n"
              f"for name in {modules!r}:\n"
              "    importlib.import_module(name)\n"
              "assert not any(name.startswith('pyspark') for name, module in sys.modules.items() if module)\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


def test_the_references_the_code_cites_resolve_inside_the_repository() -> None:
    """Every "REFERENCE.md section N" in the code, the jobs, the benchmarks and the configurations names a section
    of docs/REFERENCE.md, the digest of the papers kept in the repository.
    """
    sections = set(re.findall(r"^## (\d+)\. ", (REPO / "docs" / "REFERENCE.md").read_text(), re.MULTILINE))
    cited = {}
    for folder in ("sparktc", "jobs", "benchmarks", "conf"):
        for path in (REPO / folder).rglob("*"):
            if path.suffix in (".py", ".toml"):
                for section in re.findall(r"REFERENCE\.md,? sections? (\d+)", path.read_text()):
                    cited.setdefault(section, path.relative_to(REPO))
    assert len(cited) == 7 and not {section: path for section, path in cited.items() if section not in sections}


def test_runtime_is_domain_free() -> None:
    """``runtime`` (storage, tasks, manifests, the runner) knows nothing of text categorization: it imports no
    other folder, only the shared modules.
    """
    for path in (PACKAGE / "runtime").rglob("*.py"):
        assert imported(path) <= set(SHARED) | {"runtime"}, path.name


#: The most lines a module of sparktc may have: a longer one holds more than one concern, to be split by them.
MOST_LINES = 600
#: The folders whose modules may not import another module's private names.
CODE_FOLDERS = ("sparktc", "benchmarks", "jobs", "tests")


def long_modules(root: Path) -> list[str]:
    """The modules under ``root`` longer than :data:`MOST_LINES`, with their lengths."""
    lengths = {path.relative_to(root.parent): len(path.read_text().splitlines()) for path in root.rglob("*.py")}
    return sorted(f"{path}: {lines} lines" for path, lines in lengths.items() if lines > MOST_LINES)


def private_imports(path: Path, root: Path = REPO) -> list[str]:
    """Each ``from X import _name`` in ``path`` (however many lines the import spans, wherever it stands), a
    private name taken from another module, where ``path`` is under ``root``; ``from __future__`` and dunders
    (``__version__``) are no one's secret.
    """
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            names = [alias.name for alias in node.names
                     if alias.name.startswith("_") and not (alias.name.startswith("__") and alias.name.endswith("__"))]
            found += [f"{path.relative_to(root)}:{node.lineno}: from {'.' * node.level}{node.module or ''} import "
                      f"{name}" for name in names]
    return found


def nested_lambdas(path: Path, root: Path = REPO) -> list[str]:
    """Each ``lambda`` in ``path`` (under ``root``) whose body holds another ``lambda``: a function to name instead."""
    return [f"{path.relative_to(root)}:{node.lineno}" for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Lambda) and any(isinstance(inner, ast.Lambda) for inner in ast.walk(node.body))]


def test_no_module_is_over_600_lines() -> None:
    found = long_modules(PACKAGE)
    assert not found, "\n".join(found)


def test_no_module_imports_another_modules_private_names() -> None:
    found = [found for folder in CODE_FOLDERS for path in sorted((REPO / folder).rglob("*.py"))
             for found in private_imports(path)]
    assert not found, "\n".join(found)


def test_no_lambda_in_the_models_holds_another() -> None:
    found = [found for path in sorted((PACKAGE / "models").rglob("*.py")) for found in nested_lambdas(path)]
    assert not found, "\n".join(found)


def test_the_house_checks_catch_what_they_forbid(tmp_path: Path) -> None:
    """Each check above fails on a planted violation: a module of 601 lines, a private name imported over several
    lines, a lambda in a lambda's body; and passes what it allows.
    """
    package = tmp_path / "sparktc"
    package.mkdir()
    (package / "long.py").write_text("x = 1\n" * (MOST_LINES + 1))
    (package / "short.py").write_text("x = 1\n" * MOST_LINES)
    assert long_modules(package) == [f"sparktc/long.py: {MOST_LINES + 1} lines"]
    module = tmp_path / "planted.py"
    module.write_text("from __future__ import annotations\n\nfrom sparktc import __version__\n"
                      "from sparktc.stages.synthesize import (\n    LIST_FILES,\n    _join,\n)\n\n\n"
                      "def f():\n    return lambda a: (lambda b: a + b)\n\n\nsum_of = lambda a, b: a + b\n")
    assert private_imports(module, tmp_path) == ["planted.py:4: from sparktc.stages.synthesize import _join"]
    assert nested_lambdas(module, tmp_path) == ["planted.py:11"]
