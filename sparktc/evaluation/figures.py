"""The house figure style: what every plot sparktc draws shares, whoever draws it (a run's plots in
:mod:`sparktc.evaluation.report`, the comparison's curves in :mod:`sparktc.evaluation.comparison_report`, the
run history's trend in :mod:`sparktc.apps.history_gate`).

Plots are deterministic: fixed figure size and dpi, matplotlib's default style (a user's ``matplotlibrc`` is
ignored), the Agg canvas used directly (pyplot and its global state are never touched), no software or date in any
file's metadata and SVG ids from a fixed salt, so two calls give identical bytes in each format. The PNG is what
Markdown reports and notebooks show; the SVG (text kept as text) and the PDF (TrueType fonts, which publishers
accept where they refuse Type 3) are for papers.

A plot is drawn as::

    with style():
        figure = new_figure()
        ax = figure.add_subplot()
        ...
        return rendered(figure, title(what, label))   # or png(figure)
"""

from __future__ import annotations

import io
import math
import os
import textwrap
import traceback
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "FIGURE_DPI",
    "FIGURE_FORMATS",
    "FIGURE_SIZE",
    "MAX_STACK_AREA",
    "drawn_together",
    "figure_file",
    "figure_markdown",
    "new_figure",
    "preload",
    "png",
    "rendered",
    "scatter_stacks",
    "style",
    "title",
]

#: The formats each plot is written in, by file suffix: the PNG first (a report links it), then the vector forms.
FIGURE_FORMATS = ("png", "svg", "pdf")
#: Every plot is FIGURE_SIZE inches, about a page's text width (a figure spanning both columns of a two-column paper),
#: so its 10-point text prints at 10 points there; its PNG is FIGURE_DPI dots per inch: 1400 x 880 pixels.
FIGURE_SIZE = (7.0, 4.4)
FIGURE_DPI = 200
#: Points drawn at one place make one marker whose area grows with their number up to this many single markers'
#: areas (:func:`scatter_stacks`); the number is written beside it.
MAX_STACK_AREA = 16
#: Per format, the metadata entries matplotlib would fill with its version or the date: left out, so the bytes
#: depend on the plot only.
_NO_STAMPS = {"png": {"Software": None}, "svg": {"Creator": None, "Date": None},
              "pdf": {"Creator": None, "Producer": None, "CreationDate": None}}


def figure_file(png: str, fmt: str) -> str:
    """The name of the plot whose PNG is ``png`` in format ``fmt`` (one of :data:`FIGURE_FORMATS`)."""
    return f"{png.removesuffix('.png')}.{fmt}"


def figure_markdown(alt: str, png: str) -> list[str]:
    """A plot in Markdown, ``alt`` its text: its PNG shown, its vector files linked below it."""
    vectors = ", ".join(f"[{fmt.upper()}]({figure_file(png, fmt)})" for fmt in FIGURE_FORMATS if fmt != "png")
    return [f"![{alt}]({png})", "", f"For papers: {vectors}.", ""]


def style() -> AbstractContextManager[None]:
    """The context every plot is drawn in: matplotlib's default style, SVG ids from a fixed salt, SVG text kept as
    text (searchable, editable) and TrueType fonts in PDFs (not Type 3).
    """
    import matplotlib.style

    # ps.fonttype too: matplotlib's PDF writer groups a font's glyphs into subsets of the size ps.fonttype allows
    # (256 for its default Type 3), so a TrueType PDF embedded DejaVu Sans twice, each subset cut by fontTools:
    # 42 gives one subset per font, 0.55 -> 0.32 CPU-s and 14.0 -> 10.5 kB per plot (matplotlib 3.11, 2026-12-02).
    return matplotlib.style.context(["default", {"svg.hashsalt": "sparktc", "svg.fonttype": "none",
                                                 "pdf.fonttype": 42, "ps.fonttype": 42}])


def preload() -> None:
    """Import what drawing and saving a plot in every format needs (matplotlib's figure, style, Agg, SVG and PDF
    backends, fontTools' subsetter) and load the default font, so that a thread can do it while the driver waits
    on Spark (evaluate, while it scores): 0.6 CPU-s the plots would otherwise spend first, on the driver alone.
    """
    import fontTools.subset  # noqa: F401  (the PDF backend's font subsetting)
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.backends.backend_pdf  # noqa: F401
    import matplotlib.backends.backend_svg  # noqa: F401
    import matplotlib.figure  # noqa: F401
    import matplotlib.style  # noqa: F401
    from matplotlib import font_manager

    font_manager.get_font(font_manager.findfont(font_manager.FontProperties()))


def drawn_together(plots: Sequence[Callable[[], dict[str, bytes]]]) -> list[dict[str, bytes]]:
    """Each of ``plots`` (a plot's files by format) drawn, in order, all but the last in a process forked for it while
    this one draws the last, where the process may run on more than one core (``os.sched_getaffinity``) and can fork;
    one after the other otherwise. A plot is drawn on the driver alone once the Spark work is done: evaluate's two,
    each in three formats, were 1.5 CPU-s there, serial. A plot's error is raised here with its child's trace.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if len(plots) < 2 or cores < 2 or not hasattr(os, "fork"):
        return [plot() for plot in plots]
    children = []
    for plot in plots[:-1]:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: draws, hands the files back and ends without running the parent's exit handlers
            try:
                os.close(read)
                with os.fdopen(write, "wb") as pipe:
                    try:
                        files = plot()
                    except BaseException:  # noqa: BLE001 (told to the parent, which raises it)
                        _send(pipe, {_FAILED: traceback.format_exc().encode()})
                    else:
                        _send(pipe, files)
            finally:
                os._exit(0)
        os.close(write)
        children.append((pid, read))
    try:
        last = plots[-1]()
    finally:
        drawn = []
        for pid, read in children:
            with os.fdopen(read, "rb") as pipe:
                drawn.append(_received(pipe))
            os.waitpid(pid, 0)
    for files in drawn:
        if _FAILED in files:
            raise RuntimeError(f"drawing a plot failed in the process forked for it:\n{files[_FAILED].decode()}")
    return [*drawn, last]


#: The name a child's trace is sent under, where its plot's files would be (no format is named so).
_FAILED = "\0failed"


def _send(pipe: BinaryIO, files: dict[str, bytes]) -> None:
    """``files`` framed: per file, its name's and its data's lengths (8 bytes each, little-endian) and the two."""
    for name, data in files.items():
        encoded = name.encode()
        pipe.write(len(encoded).to_bytes(8, "little") + len(data).to_bytes(8, "little") + encoded)
        pipe.write(data)


def _received(pipe: BinaryIO) -> dict[str, bytes]:
    """The files :func:`_send` framed, read to the end of the pipe; a child gone before it could say is a failure."""
    files: dict[str, bytes] = {}
    while head := _exactly(pipe, 16):
        name_length, data_length = int.from_bytes(head[:8], "little"), int.from_bytes(head[8:], "little")
        name = _exactly(pipe, name_length).decode()  # read before the data (an assignment reads its value first)
        files[name] = _exactly(pipe, data_length)
    return files or {_FAILED: b"the process drawing the plot ended without its files"}


def _exactly(pipe: BinaryIO, size: int) -> bytes:
    """``size`` bytes of ``pipe`` (a pipe's read may return fewer), or fewer only at its end."""
    chunks, left = [], size
    while left and (chunk := pipe.read(left)):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def new_figure() -> Figure:
    """A :data:`FIGURE_SIZE` figure at :data:`FIGURE_DPI` on its own Agg canvas, laid out by matplotlib's
    constrained layout; pyplot is never touched.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=FIGURE_SIZE, dpi=FIGURE_DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _saved(figure: Figure, fmt: str, name: str = "") -> bytes:
    """``figure`` as ``fmt`` bytes, with ``name`` as the document's title (SVG and PDF; PNG: its ``Title`` text)."""
    buffer = io.BytesIO()
    metadata = {**_NO_STAMPS[fmt], **({"Title": name} if name else {})}
    figure.savefig(buffer, format=fmt, dpi=FIGURE_DPI, metadata=metadata)
    return buffer.getvalue()


def png(figure: Figure) -> bytes:
    """``figure`` as PNG bytes, without stamps."""
    return _saved(figure, "png")


def rendered(figure: Figure, name: str) -> dict[str, bytes]:
    """``figure`` in every one of :data:`FIGURE_FORMATS`, by format, ``name`` its documents' title, laid out once
    (by the first).
    """
    files = {}
    for fmt in FIGURE_FORMATS:
        files[fmt] = _saved(figure, fmt, name)
        # The constrained layout is fixed now. No engine at all (not "none", a placeholder engine): with one,
        # savefig draws the figure twice per format, once only to lay it out; the bytes are the same.
        figure.set_layout_engine(None)
    return files


def title(what: str, label: str) -> str:
    """A plot's title: what it shows, then ``label`` (the run: corpus, category set, method), wrapped to fit."""
    return "\n".join([what, *textwrap.wrap(label, 90)])


def scatter_stacks(ax: Axes, x: np.ndarray, y: np.ndarray, size: float, label: str = "", numbered: bool = True,
                   **marker: Any) -> int:
    """Points at one place drawn as one marker whose area is ``size`` times their number (at most
    :data:`MAX_STACK_AREA`), that number written above it when it is 2 or more (and ``numbered``), and ``label``'s
    legend entry (if any) with one point's marker; ``marker`` is passed to ``ax.scatter``. The largest number.
    """
    points, counts = np.unique(np.column_stack([x, y]), axis=0, return_counts=True)
    px, py = points[:, 0], points[:, 1]
    areas = size * np.minimum(counts, MAX_STACK_AREA)
    ax.scatter(px, py, s=areas, **marker)
    if label:
        ax.scatter([], [], s=size, label=label, **marker)  # the legend's marker: one point's
    for xi, yi, n, area in zip(px, py, counts, areas):
        if numbered and n >= 2:
            ax.annotate(str(n), (xi, yi), xytext=(0, math.sqrt(area) / 2 + 1), textcoords="offset points",
                        ha="center", va="bottom", fontsize=7, color="0.2")
    return int(counts.max(initial=0))
