"""CSV exports a spreadsheet opens safely: a text cell beginning with ``=``, ``+``, ``-``,
``@`` (or a tab or carriage return) is read by Excel, LibreOffice and Google Sheets as a
formula (CSV injection: ``=HYPERLINK(...)`` in an arm's name or a unit's key runs when an
analyst opens the export), so such a cell is written with a leading ``'``, which those
programs show as text. Numbers are left alone (``-0.5`` is a number, not a formula); the
cells of text columns, the index included, are neutralised whatever their content.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["FORMULA_START", "neutral", "to_csv"]

#: First characters a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutral(value: Any) -> Any:
    """``value``, with ``'`` before it when it is text a spreadsheet would read as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def to_csv(frame: pd.DataFrame, *, index: bool = False) -> str:
    """``frame.to_csv(index=index)``, its text cells neutralised (see the module docstring)."""
    frame = frame.copy(deep=False)
    for column in frame.columns:
        if frame[column].dtype == object or isinstance(frame[column].dtype, pd.StringDtype):
            frame[column] = frame[column].map(neutral)
    if index and (frame.index.dtype == object or isinstance(frame.index.dtype,
                                                              pd.StringDtype)):
        frame.index = frame.index.map(neutral)
    return frame.to_csv(index=index)
