"""Stage manifests: what a stage's outputs were computed from, and whether they still stand.

A stage's *identity* is a SHA-256 over everything its results depend on: the stage, the sparktc
version, the settings of the configuration sections it reads, the identities and output digests
of the earlier stages whose outputs it reads, and the (path, size, modification time) of the files outside the run it reads
(the corpus, the hierarchy, the stop list). Its *outputs digest* is a SHA-256 over the files it
published (relative path and size). A stage downstream is therefore recomputed whenever an
upstream stage's settings or inputs change or its outputs are rewritten, and only then.

A manifest is current when it was written by this sparktc version, its identity is the one the
stage would have now, and the files under each output are exactly the ones it lists.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

#: (path relative to the output, size in bytes) of every file under one published output.
Listing = list[tuple[str, int]]


def _sha256(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def identity(stage: str, version: str, settings: Mapping[str, Any], inputs: Mapping[str, Any],
             files: Mapping[str, list]) -> str:
    """The digest of what ``stage``'s results depend on: settings, upstream output digests, outside files."""
    return _sha256({"stage": stage, "version": version, "settings": settings, "inputs": inputs, "files": files})


def outputs_digest(outputs: Mapping[str, Listing]) -> str:
    """The digest of the published files, as downstream stages record it among their inputs."""
    return _sha256({name: sorted(map(list, listing)) for name, listing in outputs.items()})


def stale_reason(manifest: Mapping[str, Any] | None, version: str, expected_identity: str,
                 listings: Mapping[str, Listing | None]) -> str | None:
    """Why ``manifest`` does not stand for the outputs as they are (None when it does).

    ``listings`` are the files under each output the manifest names, as found now (None: missing).
    """
    if manifest is None:
        return "no manifest"
    if manifest.get("sparktc_version") != version:
        return f"written by sparktc {manifest.get('sparktc_version')}, this is {version}"
    if manifest.get("identity") != expected_identity:
        return "settings or inputs changed"
    for name, recorded in manifest.get("outputs", {}).items():
        found = listings.get(name)
        if found is None:
            return f"output {name} is missing"
        if sorted(map(list, found)) != sorted(map(list, recorded["files"])):
            return f"output {name} differs from the files its manifest lists"
    return None
