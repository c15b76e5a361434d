"""The one-page HTML report.

:func:`build_report` draws every figure, writes ``STEM.png`` and ``STEM.svg``
for each and a single self-contained ``report.html`` (figures embedded as
base64 PNG, styles and the one script inline: nothing is fetched when the
page is viewed). Files are first written to a private temporary directory
and moved into place only when everything succeeded, each by an atomic
rename, ``report.html`` last.

The page's script sets ``data-images-loaded`` on ``<body>`` to the number of
``<img>`` elements that decoded (``complete && naturalWidth > 0``) and
``data-images-total`` to the number of images, once the page has loaded;
tests read them back from a headless browser.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html as _html
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from . import __version__, plot, stats, tables
from .load import Results

REPORT_NAME = "report.html"


class ReportError(Exception):
    """The report cannot be written (nothing to show, output path unusable)."""


def esc(text: Any) -> str:
    return _html.escape(str(text), quote=True)


# --------------------------------------------------------------------------


def build_report(
    results: Results,
    outdir: str | Path,
    title: str = "fibersync benchmark report",
    now: _dt.datetime | None = None,
) -> Path:
    """Write the report and its figures into ``outdir``; return the report's path."""
    if results.empty:
        raise ReportError("no benchmark runs in the input: nothing to report")
    outdir = Path(outdir)
    if outdir.exists() and not outdir.is_dir():
        raise ReportError(f"{outdir}: exists and is not a directory")
    plots = plot.all_plots(results.runs, results.java)
    with tempfile.TemporaryDirectory(prefix="fibersync-report-") as tmp:
        tmpdir = Path(tmp)
        figures: dict[str, list[tuple[plot.Plot, bytes]]] = {}
        for p in plots:
            png, _ = plot.save(p, tmpdir)
            figures.setdefault(p.section, []).append((p, png.read_bytes()))
        page = render(results, figures, title, now or _dt.datetime.now().astimezone())
        (tmpdir / REPORT_NAME).write_text(page, encoding="utf-8")
        _publish(tmpdir, outdir)
    return outdir / REPORT_NAME


def _publish(tmpdir: Path, outdir: Path) -> None:
    """Move the finished files into ``outdir``, one atomic rename each, the report last."""
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportError(f"{outdir}: cannot create directory: {exc.strerror or exc}") from None
    names = sorted(p.name for p in tmpdir.iterdir() if p.name != REPORT_NAME) + [REPORT_NAME]
    for name in names:
        staged = outdir / f".{name}.part"
        shutil.copyfile(tmpdir / name, staged)
        os.replace(staged, outdir / name)


# --------------------------------------------------------------------------
# Rendering

_CSS = """
:root { --fg:#1b1f24; --muted:#57606a; --line:#d0d7de; --head:#f3f5f7; --accent:#0b5cad; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: var(--fg); margin: 0 auto; padding: 1.2em 2em 3em; max-width: 1500px;
       background: #fff; }
h1 { font-size: 1.7em; margin: 0.2em 0 0.1em; }
h2 { font-size: 1.35em; margin-top: 2em; padding-bottom: 0.2em;
     border-bottom: 2px solid var(--line); }
h3 { font-size: 1.08em; margin: 1.4em 0 0.4em; }
.meta { color: var(--muted); margin: 0 0 1em; }
nav ul { columns: 3; margin: 0.3em 0 0; padding-left: 1.2em; }
a { color: var(--accent); }
table { border-collapse: collapse; margin: 0.4em 0 0.3em; font-size: 0.88em; }
th, td { border: 1px solid var(--line); padding: 0.22em 0.6em; vertical-align: top; }
th { background: var(--head); text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.best { font-weight: 600; }
caption { caption-side: bottom; text-align: left; color: var(--muted); font-size: 0.92em;
          padding-top: 0.3em; max-width: 70em; }
.scroll { overflow-x: auto; max-height: 32em; overflow-y: auto; }
figure { margin: 1em 0 1.6em; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 0.92em; max-width: 70em; }
table.kv th { width: 12em; }
table.kv td { min-width: 24em; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.9em; }
pre { white-space: pre-wrap; margin: 0; }
details { margin: 0.5em 0; }
"""

_SCRIPT = """
(function () {
  function count() {
    var imgs = document.images, n = 0;
    for (var i = 0; i < imgs.length; i++) {
      if (imgs[i].complete && imgs[i].naturalWidth > 0) { n++; }
    }
    document.body.setAttribute('data-images-total', String(imgs.length));
    document.body.setAttribute('data-images-loaded', String(n));
  }
  if (document.readyState === 'complete') { count(); }
  else { window.addEventListener('load', count); }
})();
"""


def render(
    results: Results,
    figures: dict[str, list[tuple[plot.Plot, bytes]]],
    title: str,
    now: _dt.datetime,
) -> str:
    sections: list[tuple[str, str, str]] = []  # (anchor, heading, body html)

    best_rows = tables.best_mutex_summary(results.runs)
    scenarios = sorted(
        {s for s in (r.get("scenario") for r in tables.mutex_runs(results.runs)) if s},
        key=stats.order_key(stats.SCENARIO_ORDER),
    )
    for scenario in scenarios:
        parts = []
        rows = [r for r in best_rows if r.scenario == scenario]
        if rows:
            parts.append(
                render_table(
                    tables.best_mutex_table(rows, unit=_short_unit(scenario)),
                    highlight_col="best mutex",
                )
            )
        parts.extend(render_figure(p, png) for p, png in figures.get(scenario, []))
        sections.append((plot.slug(f"s-{scenario}"), f"Scenario {scenario}", "\n".join(parts)))

    gauss_rows = tables.gauss_summary(results.runs)
    if gauss_rows or figures.get("gauss"):
        parts = [render_figure(p, png) for p, png in figures.get("gauss", [])]
        if gauss_rows:
            parts.append(render_table(tables.gauss_table(gauss_rows)))
        sections.append(
            ("gauss", "Gaussian elimination (native scheduler, A0/A1/A2)", "\n".join(parts))
        )

    if results.java:
        parts = []
        jrows = tables.java_summary(results.java)
        if jrows:
            parts.append(render_table(tables.java_table(jrows), highlight_col="best lock"))
        parts.extend(render_figure(p, png) for p, png in figures.get("java", []))
        sections.append(("java", "Java (virtual threads, JMH)", "\n".join(parts)))

    sections.append(("machine", "Machine, build and command", render_contexts(results)))

    nav = "".join(f'<li><a href="#{esc(a)}">{esc(h)}</a></li>' for a, h, _ in sections)
    body = "\n".join(
        f'<section id="{esc(a)}">\n<h2>{esc(h)}</h2>\n{b}\n</section>' for a, h, b in sections
    )
    n_runs, n_java = len(results.runs), len(results.java)
    inputs = ", ".join(f"<code>{esc(f)}</code>" for f in results.files)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="fibersync-report {esc(__version__)}">
<title>{esc(title)}</title>
<style>{_CSS}</style>
</head>
<body>
<header>
<h1>{esc(title)}</h1>
<p class="meta">{n_runs} C++ runs, {n_java} Java rows, from {inputs}.<br>
Generated {esc(now.strftime("%Y-%m-%d %H:%M %Z").strip())} by fibersync-report {esc(__version__)}.
Medians are over repetitions; bands and quartiles are the 25th–75th percentiles.</p>
<nav><strong>Contents</strong><ul>{nav}</ul></nav>
</header>
<main>
{body}
</main>
<script>{_SCRIPT}</script>
</body>
</html>
"""


def _short_unit(scenario: str) -> str:
    return "lines/ms" if scenario == "text-stats" else "acq/ms"


def render_table(table: tables.Table, highlight_col: str | None = None) -> str:
    numeric = table.numeric or [False] * len(table.columns)
    hi = table.columns.index(highlight_col) if highlight_col in table.columns else -1
    head = "".join(f"<th>{esc(c)}</th>" for c in table.columns)
    body = []
    for row in table.rows:
        cells = []
        for i, cell in enumerate(row):
            cls = " ".join(c for c in ("num" if numeric[i] else "", "best" if i == hi else "") if c)
            cells.append(f'<td class="{cls}">{esc(cell)}</td>' if cls else f"<td>{esc(cell)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    caption = f"<caption>{esc(table.caption)}</caption>" if table.caption else ""
    return (
        f'<h3>{esc(table.title)}</h3>\n<div class="scroll"><table>{caption}'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def render_figure(p: plot.Plot, png: bytes) -> str:
    w, h = (int(round(v * plot.DPI)) for v in p.figure.get_size_inches())
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure id="{esc(p.stem)}">\n<h3>{esc(p.title)}</h3>\n'
        f'<img src="data:image/png;base64,{data}" alt="{esc(p.title)}" width="{w}" height="{h}">\n'
        f'<figcaption>{esc(p.caption)} Files: <a href="{esc(p.stem)}.png">PNG</a>, '
        f'<a href="{esc(p.stem)}.svg">SVG</a>.</figcaption>\n</figure>'
    )


_CONTEXT_ORDER = (
    "host",
    "cpu_model",
    "cores",
    "numa_nodes",
    "kernel",
    "compiler",
    "build_type",
    "git_revision",
    "command",
    "date",
    "topology",
    "calibration",
)
_CONTEXT_LABELS = {
    "cpu_model": "CPU model",
    "numa_nodes": "NUMA nodes",
    "build_type": "build type",
    "git_revision": "git revision",
}


def _fmt_context_value(value: Any) -> str:
    if isinstance(value, dict):
        return "\n".join(f"{k}: {_fmt_context_value(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_fmt_context_value(v) for v in value)
    if value is None:
        return "—"
    return str(value)


def render_contexts(results: Results) -> str:
    if not results.contexts:
        return (
            "<p>No JSON result file was given, so no machine or build information is known "
            "(the CSV files do not carry it).</p>"
        )
    # One column per JSON file; identical contexts (same machine, build and
    # command) share a column.
    groups: list[tuple[dict[str, Any], list[Path]]] = []
    for path, ctx in results.contexts:
        for known, paths in groups:
            if known == ctx:
                paths.append(path)
                break
        else:
            groups.append((ctx, [path]))
    all_keys: list[str] = []
    for ctx, _ in groups:
        all_keys += [k for k in ctx if k not in all_keys]
    keys = [k for k in _CONTEXT_ORDER if k in all_keys] + sorted(
        k for k in all_keys if k not in _CONTEXT_ORDER
    )
    head = "".join(
        "<th>" + "<br>".join(f"<code>{esc(p.name)}</code>" for p in paths) + "</th>"
        for _, paths in groups
    )
    rows = "".join(
        f"<tr><th>{esc(_CONTEXT_LABELS.get(k, k))}</th>"
        + "".join(f"<td><pre>{esc(_fmt_context_value(ctx.get(k)))}</pre></td>" for ctx, _ in groups)
        + "</tr>"
        for k in keys
    )
    parts = [
        f'<table class="kv"><thead><tr><th>from</th>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    ]
    for path, scenario in results.scenarios:
        parts.append(
            f"<details><summary>Scenario definition in <code>{esc(path)}</code></summary>"
            f"<pre>{esc(json.dumps(scenario, indent=2, sort_keys=True))}</pre></details>"
        )
    return "\n".join(parts)
