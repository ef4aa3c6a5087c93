"""Canonical decimal strings (no sign, no leading zero: LYRL2004's doc ids) recognised in Arrow string arrays from
their offsets and bytes, with no regular expression and no Python string per value: for the 10.4M doc ids of
3,217,656 documents' qrels, 0.11 CPU-s against a regular expression's 0.35.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["canonical_decimal_mask", "canonical_decimals"]


def canonical_decimals(strings: pa.Array | pa.ChunkedArray, max_digits: int = 0) -> bool:
    """Whether every one of ``strings`` is a canonical decimal (``0``, or digits not starting with ``0``) of at most
    ``max_digits`` digits (0: any number), checked over all their bytes at once.
    """
    chunks = strings.chunks if isinstance(strings, pa.ChunkedArray) else [strings]
    return all(_all_decimal(chunk, max_digits) for chunk in chunks)


def canonical_decimal_mask(strings: pa.Array | pa.ChunkedArray, max_digits: int = 0) -> np.ndarray:
    """Per one of ``strings``, whether it is a canonical decimal of at most ``max_digits`` digits (0: any number; a
    null is not one).
    """
    chunks = strings.chunks if isinstance(strings, pa.ChunkedArray) else [strings]
    return np.concatenate([_mask(chunk, max_digits) for chunk in chunks]) if chunks else np.zeros(0, dtype=bool)


def _pattern(max_digits: int) -> str:
    return rf"^(0|[1-9][0-9]{{0,{max_digits - 1}}})$" if max_digits else r"^(0|[1-9][0-9]*)$"


def _is_string(chunk: pa.Array) -> bool:
    return pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)


def _all_decimal(chunk: pa.Array, max_digits: int) -> bool:
    if not _is_string(chunk) or chunk.null_count:
        return bool(_mask(chunk, max_digits).all())
    if not len(chunk):
        return True
    offsets, data = _string_buffers(chunk)
    lengths = np.diff(offsets)
    if lengths.min() < 1 or (max_digits and lengths.max() > max_digits):
        return False
    if (np.subtract(data[offsets[0]:offsets[-1]], ord("0"), dtype=np.uint8) > 9).any():  # a byte that is no digit
        return False
    return not ((data[offsets[:-1]] == ord("0")) & (lengths > 1)).any()


def _mask(chunk: pa.Array, max_digits: int) -> np.ndarray:
    if not _is_string(chunk):
        return pc.match_substring_regex(chunk, _pattern(max_digits)).fill_null(False).to_numpy(zero_copy_only=False)
    if not len(chunk):
        return np.zeros(0, dtype=bool)
    offsets, data = _string_buffers(chunk)
    starts, lengths = offsets[:-1], np.diff(offsets)
    decimal = (lengths >= 1) & ((lengths <= max_digits) if max_digits else True)
    if decimal.any():
        no_digit = np.subtract(data[offsets[0]:offsets[-1]], ord("0"), dtype=np.uint8) > 9
        filled = np.flatnonzero(lengths > 0)  # their starts ascend strictly: one segment of bytes each
        decimal[filled] &= ~np.logical_or.reduceat(no_digit, starts[filled] - offsets[0])
        decimal &= (data[np.minimum(starts, len(data) - 1)] != ord("0")) | (lengths == 1)
    if chunk.null_count:
        decimal &= chunk.is_valid().to_numpy(zero_copy_only=False)
    return decimal


def _string_buffers(chunk: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A string array's offsets (int64, its own ``len + 1``) and its data buffer's bytes."""
    _, offsets_buffer, data_buffer = chunk.buffers()
    offsets = np.frombuffer(offsets_buffer, np.int64 if pa.types.is_large_string(chunk.type) else np.int32)
    data = np.frombuffer(data_buffer, np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    return offsets[chunk.offset:chunk.offset + len(chunk) + 1].astype(np.int64), data
