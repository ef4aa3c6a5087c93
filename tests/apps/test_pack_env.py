"""scripts/pack-env.sh (``make pack``) refuses, before it builds anything, what would not work or would replace
something: tests/apps/test_cluster.py runs a standalone cluster from what it builds.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import REPO
from docs_examples import example

PACK_ENV = REPO / "scripts" / "pack-env.sh"


@pytest.mark.parametrize(("arguments", "message"), [
    (["{tmp}/env.tar"], "OUTPUT {tmp}/env.tar must end in .tar.gz or .tgz (Spark unpacks other archives without their"
                        " executable bits)"),
    (["{tmp}/env.zip"], "OUTPUT {tmp}/env.zip must end in .tar.gz or .tgz"),
    (["--keep-env", "{tmp}/mine", "{tmp}/env.tar.gz"],
     "{tmp}/mine exists; name a new directory for --keep-env and --keep-wheel (nothing is replaced)"),
    (["--keep-wheel", "{tmp}/mine", "{tmp}/env.tar.gz"],
     "{tmp}/mine exists; name a new directory for --keep-env and --keep-wheel (nothing is replaced)"),
    (["--level", "9", "{tmp}/env.tar.gz"],
     "unknown option --level (--keep-env DIR, --keep-wheel DIR, --compress-level N, then OUTPUT)"),
    (["--compress-level", "fast", "{tmp}/env.tar.gz"],
     "--compress-level fast is not a gzip level; give 0 (fastest) to 9 (smallest)"),
])
def test_refused_before_anything_is_built(tmp_path: Path, arguments: list[str], message: str) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "kept").write_text("not the script's")
    before = sorted(tmp_path.rglob("*"))
    run = subprocess.run([str(PACK_ENV), *(argument.format(tmp=tmp_path) for argument in arguments)],
                         capture_output=True, text=True, timeout=30)
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.startswith("pack-env.sh: " + message.format(tmp=tmp_path)), run.stderr
    assert len(run.stderr.splitlines()) == 1
    assert sorted(tmp_path.rglob("*")) == before and (tmp_path / "mine" / "kept").read_text() == "not the script's"


def test_make_pack_runs_the_script_the_suites_packed_environment_runs() -> None:
    """docs/clusters.md's ``make pack`` is this script into build/env.tar.gz: the suite's ``packed_env`` (conftest.py)
    builds its environment with the same script, which tests/apps/test_cluster.py then runs a cluster from.
    """
    [target] = example("make-pack").split()[1:]
    recipe = re.search(rf"^{target}:\n((?:\t.*\n)+)", (REPO / "Makefile").read_text(), re.M)[1]
    assert recipe.split() == ["./scripts/pack-env.sh", "build/env.tar.gz"]
    assert '"scripts" / "pack-env.sh"' in (REPO / "tests" / "conftest.py").read_text()
