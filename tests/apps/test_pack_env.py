"""scripts/pack-env.sh (``make pack``) refuses, before it builds anything, what would not work or would replace
something: tests/apps/test_cluster.py runs a standalone cluster from what it builds.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import REPO

PACK_ENV = REPO / "scripts" / "pack-env.sh"


@pytest.mark.parametrize(("arguments", "message"), [
    (["{tmp}/env.tar"], "OUTPUT {tmp}/env.tar must end in .tar.gz or .tgz (Spark unpacks other archives without their"
                        " executable bits)"),
    (["{tmp}/env.zip"], "OUTPUT {tmp}/env.zip must end in .tar.gz or .tgz"),
    (["--keep-env", "{tmp}/mine", "{tmp}/env.tar.gz"],
     "--keep-env {tmp}/mine exists; name a new directory (nothing is replaced)"),
    (["--compress-level", "9", "{tmp}/env.tar.gz"], "unknown option --compress-level (--keep-env DIR, then OUTPUT)"),
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
