"""Ids as the doors that carry both kinds take and give them: integers and strings.

A point's id is an integer in [0, 2**63) or a str (1-512 bytes of UTF-8); both kinds
live in one collection. The engine checks the values (range, length, UTF-8); these
helpers only turn Python arguments into a list of ints and strs and answers back into
arrays: an answer holding only integer ids is an int64 array exactly as before string
ids, one holding a string id an object array of ints and strs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from strata._index import _id_list


def id_values(ids: object, name: str) -> list[int | str]:
    """ids (an id, a sequence of ints and strs, or a NumPy integer or str array) as a
    list of ints and strs; TypeError for any other element, ValueError for a negative
    integer or a shape that is not 1-D."""
    if isinstance(ids, (str, int, np.integer)) and not isinstance(ids, bool):
        ids = [ids]
    if isinstance(ids, np.ndarray) and ids.dtype.kind in "iu":
        return _id_list(ids, name).tolist()  # type: ignore[no-any-return]
    if isinstance(ids, np.ndarray):
        if ids.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {ids.shape}")
        ids = ids.tolist()
    if not isinstance(ids, (list, tuple)):
        raise TypeError(f"{name} must be ids (ints or strs), got {type(ids).__name__}")
    out: list[int | str] = []
    for i, v in enumerate(ids):
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
            if v < 0:
                raise ValueError(f"{name} must be non-negative, got {name}[{i}] = {v}")
            out.append(int(v))
        else:
            raise TypeError(f"{name}[{i}] must be an int or a str, got {type(v).__name__}")
    return out


def id_array(values: list[Any], shape: tuple[int, ...] | None = None) -> npt.NDArray[Any]:
    """The ids of an answer as an array of shape (padded with -1 for integer-only
    answers, None otherwise): int64 when every id is an integer, else object."""
    shape = (len(values),) if shape is None else shape
    if all(isinstance(v, int) for v in values):
        out = np.full(shape, -1, dtype=np.int64)
    else:
        out = np.full(shape, None, dtype=object)
    out.reshape(-1)[: len(values)] = values
    return out
