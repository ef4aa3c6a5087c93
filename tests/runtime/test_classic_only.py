"""One code path for classic and Spark Connect sessions: nothing but sparktc/runtime/classic.py touches what a Connect
session lacks (a SparkContext, py4j's gateway, RDDs, the status tracker, job groups, broadcast variables).
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

#: Attributes and names only a classic session's driver has (Spark Connect raises JVM_ATTRIBUTE_NOT_SUPPORTED or has
#: none). A task's TaskContext is the same under both and is not among them.
CLASSIC_ONLY = {"sparkContext", "SparkContext", "_jvm", "_jsc", "_sc", "rdd", "RDD", "parallelize", "treeAggregate",
                "statusTracker", "setJobGroup", "setLocalProperty", "unpersist", "hadoopConfiguration"}
ALLOWED = REPO / "sparktc" / "runtime" / "classic.py"


def classic_uses(path: Path) -> list[str]:
    """Each use of a :data:`CLASSIC_ONLY` name in ``path`` as "file:line name" (comments and strings are no use)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else (
            node.name if isinstance(node, ast.alias) else None)
        if isinstance(node, ast.alias):
            name = node.name.rsplit(".", 1)[-1]
        if name in CLASSIC_ONLY:
            found.append(f"{path.relative_to(REPO)}:{node.lineno if hasattr(node, 'lineno') else '?'} {name}")
    return found


def test_only_the_classic_module_touches_a_classic_sessions_parts() -> None:
    sources = [path for folder in ("sparktc", "jobs") for path in sorted((REPO / folder).rglob("*.py"))]
    assert len(sources) > 50 and ALLOWED in sources
    found = [use for path in sources if path != ALLOWED for use in classic_uses(path)]
    assert found == []


def test_the_check_finds_a_use(tmp_path: Path) -> None:
    module = REPO / "tests" / "runtime" / "_classic_use_probe.py"
    module.write_text("def f(spark):\n    # spark.sparkContext in a comment is no use\n"
                      "    return spark.sparkContext.parallelize([1]).collect()\n")
    try:
        assert classic_uses(module) == ["tests/runtime/_classic_use_probe.py:3 parallelize",
                                        "tests/runtime/_classic_use_probe.py:3 sparkContext"]
    finally:
        module.unlink()
