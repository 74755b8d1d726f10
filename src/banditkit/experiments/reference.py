"""Reference numbers: what the papers (or their authors' results and code) say a figure shows,
kept as data with their sources, for ``banditkit reproduce``'s comparison.

A :class:`Reference` is one number at one sweep point of one figure: a value of a metric for one
algorithm (``versus=None``), or the difference or ratio of one algorithm's metric to another's
(the papers' claims "A is never worse than B", "A's regret is about 2.5 times B's"). Its
``relation`` says whether the paper states the number itself (``"="``) or a bound (``"<="``,
``">="``: a theorem's "ρ-replicable" is non-replication ≤ ρ). Every reference carries its source
kind (:data:`SOURCE_KINDS`) and where in the source it is; one of the authors' code rerun here
also the command and date; one where ours is known to differ, the docs paragraph explaining why
(``explained = "docs/page.md#anchor"``).

:func:`validate_reference` checks one against the figure registry and the docs; the test suite
runs it over every reference, so a number without a source cannot be committed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .numbers import short_number

__all__ = ["METRICS", "RELATIONS", "SOURCE_KINDS", "Reference", "ReferenceError",
           "heading_anchors", "validate_reference", "validate_references"]

#: Source kinds, with the words the report prints for each.
SOURCE_KINDS: dict[str, str] = {
    "paper-text": "paper text",
    "paper-plot": "read off the paper's plot",
    "authors-results": "authors' stored results",
    "authors-code": "authors' code rerun here",
}
#: How our number is compared with the reference value.
RELATIONS = ("=", "<=", ">=")
#: Metrics a reference can name: per-trial summaries of the run (:mod:`.results`), trial facts,
#: and the replicability of the pairs (``non_replication``: differing pairs / pairs with its
#: Clopper–Pearson interval; ``differing_rounds``: rounds in which the two executions of a pair
#: pull different arms, min–max over the pairs), and ``failure_rate_spread``: the highest error
#: rate of the algorithm over every point of the figure minus its lowest (a claim about a whole
#: sweep, "its error ranges from near 0 to 1"; the reference's ``point`` is 0).
METRICS = ("n_pulls", "final_regret", "final_violation", "failure_rate", "any_unsafe",
           "non_replication", "differing_rounds", "failure_rate_spread")


class ReferenceError(ValueError):
    """A reference that cannot be true: no source, an unknown figure, point or algorithm."""


@dataclass(frozen=True)
class Reference:
    """One reference number of one figure at one sweep point.

    Attributes
    ----------
    figure : str
        Registered figure name (``"rage:fig1a"``).
    point : int
        Index of the sweep point in the full figure spec's ``points``.
    algorithm : str
        Algorithm name as in the spec.
    metric : str
        One of :data:`METRICS`.
    value : float
        The reference number.
    kind : str
        Source kind, a key of :data:`SOURCE_KINDS`.
    where : str
        Where in the source (section, figure, table, file, sentence quoted).
    relation : str
        ``"="`` (the source states the value), ``"<="`` or ``">="`` (a bound).
    versus : str, optional
        Compare ``algorithm``'s metric to this algorithm's (same point) instead of alone.
    by : str
        With ``versus``: ``"difference"`` (a − b) or ``"ratio"`` (a / b).
    tolerance : float
        The reference's own uncertainty, in the metric's units: half the spread of a range the
        paper gives (26208–28002), a plot's reading precision, the rounding of "roughly".
    command : str, optional
        For ``kind="authors-code"``: the command that ran the authors' code here.
    date : str, optional
        For ``kind="authors-code"``: when (ISO date).
    explained : str, optional
        ``"docs/page.md#anchor"``: the paragraph explaining why ours differs, when it does.
    cannot_fail : str, optional
        Why this reference holds by construction on our runs (a comparison whose outcome no
        implementation error could change, such as "identical pairs" for an algorithm that
        takes no data-dependent decision at the figure's constants). The report prints it
        beside the verdict, so a "within noise" that tests nothing is not counted as evidence.
    """

    figure: str
    point: int
    algorithm: str
    metric: str
    value: float
    kind: str
    where: str
    relation: str = "="
    versus: str | None = None
    by: str = "difference"
    tolerance: float = 0.0
    command: str | None = None
    date: str | None = None
    explained: str | None = None
    cannot_fail: str | None = None

    @property
    def source(self) -> str:
        """The source in words: kind and where, and for a rerun the command and date."""
        text = f"{SOURCE_KINDS.get(self.kind, self.kind)}: {self.where}"
        if self.command:
            text += f" (`{self.command}`, {self.date})"
        return text

    @property
    def quantity(self) -> str:
        """What is compared: ``metric`` of the algorithm, or its difference/ratio to another."""
        if self.versus is None:
            return self.metric
        op = "−" if self.by == "difference" else "/"
        return f"{self.metric}: {self.algorithm} {op} {self.versus}"

    @property
    def stated(self) -> str:
        """The reference as the report prints it (``≤ 0.3``, ``27105 ± 897``)."""
        rel = {"=": "", "<=": "≤ ", ">=": "≥ "}.get(self.relation, self.relation)
        text = f"{rel}{short_number(self.value)}"
        if self.tolerance:
            text += f" ± {short_number(self.tolerance)}"
        return text


def validate_reference(ref: Reference, docs: Path | None = None) -> None:
    """Refuse a reference that cannot be true, with one message naming the field.

    Checks that the source is complete (a known kind, a non-empty ``where``, a command and an
    ISO date for a rerun of the authors' code), that the figure, point, algorithm and
    ``versus`` exist in the registry, that metric, relation and ``by`` are known, the value
    and tolerance finite (tolerance ≥ 0), and that ``explained`` names an existing heading of
    a docs page (checked when ``docs``, the docs folder, is given).

    Raises
    ------
    ReferenceError
    """
    from .figures import figure_names, get_figure

    name = f"reference {ref.figure!r} point {ref.point} {ref.algorithm!r} {ref.metric!r}"
    if ref.kind not in SOURCE_KINDS:
        raise ReferenceError(f"{name}: kind must be one of {', '.join(SOURCE_KINDS)}, "
                             f"got {ref.kind!r}")
    if not isinstance(ref.where, str) or not ref.where.strip():
        raise ReferenceError(f"{name}: where must say where in the source the number is")
    if ref.kind == "authors-code":
        if not ref.command or not ref.command.strip():
            raise ReferenceError(f"{name}: command is required for the authors' code rerun")
        if not ref.date or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", ref.date):
            raise ReferenceError(f"{name}: date must be an ISO date (YYYY-MM-DD) for the "
                                 f"authors' code rerun, got {ref.date!r}")
    if ref.figure not in figure_names():
        raise ReferenceError(f"{name}: figure is not a registered figure")
    spec = get_figure(ref.figure)
    if isinstance(ref.point, bool) or not isinstance(ref.point, int) \
            or not 0 <= ref.point < len(spec.points):
        raise ReferenceError(f"{name}: point must be an index in [0, {len(spec.points)})")
    algorithms = [a.name for a in spec.algorithms]
    for field in ("algorithm", "versus"):
        value = getattr(ref, field)
        if (field == "algorithm" or value is not None) and value not in algorithms:
            raise ReferenceError(f"{name}: {field} {value!r} is not an algorithm of the "
                                 f"figure ({', '.join(algorithms)})")
    if ref.metric not in METRICS:
        raise ReferenceError(f"{name}: metric must be one of {', '.join(METRICS)}")
    if ref.relation not in RELATIONS:
        raise ReferenceError(f"{name}: relation must be one of {', '.join(RELATIONS)}")
    if ref.by not in ("difference", "ratio"):
        raise ReferenceError(f"{name}: by must be 'difference' or 'ratio', got {ref.by!r}")
    if ref.versus is not None and ref.metric in ("non_replication", "differing_rounds"):
        raise ReferenceError(f"{name}: versus is only for per-trial metrics")
    if ref.metric == "failure_rate_spread" and (ref.point != 0 or ref.by != "difference"):
        raise ReferenceError(f"{name}: a failure_rate_spread spans every point: point must be "
                             "0 and by 'difference'")
    try:
        value, tolerance = float(ref.value), float(ref.tolerance)
    except (TypeError, ValueError):
        raise ReferenceError(f"{name}: value and tolerance must be numbers") from None
    if not (_finite(value) and _finite(tolerance)) or tolerance < 0:
        raise ReferenceError(f"{name}: value must be finite and tolerance finite and >= 0")
    if ref.cannot_fail is not None and (not isinstance(ref.cannot_fail, str)
                                        or not ref.cannot_fail.strip()):
        raise ReferenceError(f"{name}: cannot_fail must say why the reference holds by "
                             f"construction, got {ref.cannot_fail!r}")
    if ref.explained is not None:
        page, _, anchor = ref.explained.partition("#")
        if not page.startswith("docs/") or not page.endswith(".md") or not anchor:
            raise ReferenceError(f"{name}: explained must be 'docs/<page>.md#<anchor>', got "
                                 f"{ref.explained!r}")
        if docs is not None:
            path = docs / page[len("docs/"):]
            if not path.exists():
                raise ReferenceError(f"{name}: explained names {page}, which does not exist")
            if anchor not in heading_anchors(path.read_text(encoding="utf-8")):
                raise ReferenceError(f"{name}: explained names #{anchor}, not a heading of "
                                     f"{page}")


def validate_references(refs: Iterable[Reference], docs: Path | None = None) -> int:
    """:func:`validate_reference` over ``refs``; returns how many were checked."""
    n = 0
    for ref in refs:
        validate_reference(ref, docs)
        n += 1
    return n


def heading_anchors(markdown: str) -> set[str]:
    """The anchors MkDocs gives a page's headings (lower case, punctuation dropped, spaces to
    hyphens: the ``toc`` extension's default slugify), for checking ``explained`` links."""
    import unicodedata

    anchors = set()
    in_code = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        text = line.lstrip("#").strip()
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
        text = re.sub(r"[^\w\s-]", "", text).strip().lower()
        anchors.add(re.sub(r"[-\s]+", "-", text))
    return anchors


def _finite(x: float) -> bool:
    return x == x and x not in (float("inf"), float("-inf"))


def by_figure(refs: Sequence[Reference]) -> dict[str, list[Reference]]:
    """References grouped by figure, in the given order."""
    out: dict[str, list[Reference]] = {}
    for ref in refs:
        out.setdefault(ref.figure, []).append(ref)
    return out
