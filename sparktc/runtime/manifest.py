"""Stage manifests: what a stage's outputs were computed from, and whether they still stand.

A stage's *identity* is a SHA-256 over everything its results depend on: the stage, the digest of
sparktc's code (:func:`code_digest`: every module of the package, so an upgrade or a local edit
recomputes), the settings of the configuration sections it reads, the identities and output
digests of the earlier stages whose outputs it reads, and the content (relative path, size,
SHA-256) of the files outside the run it reads (the corpus, the hierarchy, the stop list). Its
*outputs digest* is a SHA-256 over the files it published (relative path, size, SHA-256). A stage
downstream is therefore recomputed whenever an upstream stage's settings, code or inputs change or
its outputs are rewritten, and only then.

A manifest is current when its identity is the one the stage would have now and the files under
each output are exactly the ones it lists: same paths and sizes, and, for a file whose modification
time is not the recorded one, the same SHA-256 (so a same-size corruption is found, and a file
only touched or copied back is not taken for changed). Hashes are computed once, when a file is
published or first read, and kept with its size and modification time.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

#: (path relative to the output, size in bytes, modification time in ms) of a file found now.
Found = list[tuple[str, int, int]]
#: (relative path, size, modification time in ms, SHA-256) of every file under one published output.
Listing = list[list]


def json_sha256(value: Any) -> str:
    """The SHA-256 of a JSON value written canonically (keys sorted, no spaces): equal values, equal digests."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


@lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 over the source of every module of the sparktc package (read from a checkout or a zip)."""
    sources: dict[str, str] = {}

    def walk(folder: Any, prefix: str) -> None:
        for entry in folder.iterdir():
            if entry.is_dir() and entry.name != "__pycache__":
                walk(entry, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".py"):
                sources[prefix + entry.name] = hashlib.sha256(entry.read_bytes()).hexdigest()

    walk(importlib.resources.files("sparktc"), "")
    return json_sha256(sources)


def identity(stage: str, code: str, settings: Mapping[str, Any], inputs: Mapping[str, Any],
             files: Mapping[str, list]) -> str:
    """The digest of what ``stage``'s results depend on: code, settings, upstream output digests, outside files."""
    return json_sha256({"stage": stage, "code": code, "settings": settings, "inputs": inputs, "files": files})


def outputs_digest(outputs: Mapping[str, Listing]) -> str:
    """The digest of the published files' content, as downstream stages record it among their inputs."""
    return json_sha256({name: sorted([path, size, digest] for path, size, _, digest in listing)
                    for name, listing in outputs.items()})


def changed_file(recorded: Listing, found: Found, digest: Callable[[str], str]) -> str | None:
    """The first file of one output that is not as recorded, described (None when all are).

    ``digest(relative path)`` hashes a file now; it is called only for files whose size matches
    the record but whose modification time does not.
    """
    now = {path: (size, mtime) for path, size, mtime in found}
    then = {path: (size, mtime, sha) for path, size, mtime, sha in recorded}
    unmatched = sorted(now.keys() ^ then.keys())
    if unmatched:
        path = unmatched[0]
        return f"{path or 'the file'} is {'missing' if path in then else 'not among the files it lists'}"
    for path, (size, mtime, sha) in sorted(then.items()):
        if now[path][0] != size:
            return f"{path or 'the file'} changed size ({size:,} bytes recorded, {now[path][0]:,} now)"
        if now[path][1] != mtime and digest(path) != sha:
            return f"{path or 'the file'} changed content (its SHA-256 is not the recorded one)"
    return None


def stale_reason(manifest: Mapping[str, Any] | None, expected_identity: str,
                 found: Mapping[str, Found | None], digest: Callable[[str, str], str]) -> str | None:
    """Why ``manifest`` does not stand for the outputs as they are (None when it does).

    ``found`` holds the files under each output the manifest names, as listed now (None: missing);
    ``digest(output, relative path)`` hashes one of them.
    """
    if manifest is None:
        return "no manifest"
    if manifest.get("code") != code_digest():
        return (f"written by other code (sparktc {manifest.get('sparktc_version')}, code "
                f"{str(manifest.get('code'))[:12]}; this is code {code_digest()[:12]})")
    if manifest.get("identity") != expected_identity:
        return "settings or inputs changed"
    for name, recorded in manifest.get("outputs", {}).items():
        listing = found.get(name)
        if listing is None:
            return f"output {name} is missing"
        change = changed_file(recorded["files"], listing, lambda path, name=name: digest(name, path))
        if change is not None:
            return f"output {name}: {change}"
    return None
