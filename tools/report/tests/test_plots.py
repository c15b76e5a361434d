"""Figures: the files exist, are real PNG/SVG images and are not blank."""

from __future__ import annotations

from xml.etree import ElementTree

import numpy as np
import pytest
from PIL import Image

from fibersync_report import plot
from support import PNG_MAGIC

EXPECTED_STEMS = {
    "throughput-paper-coop",
    "throughput-high-contention",
    "fairness-paper-coop",
    "fairness-high-contention",
    "speedup-poisson-hold",
    "speedup-poisson-rate",
    "gauss-speedup",
    "java-high-contention-thrpt",
    "java-low-contention-thrpt",
    "java-text-stats-avgt",
}


def test_every_figure_written_as_png_and_svg(report_dir):
    pngs = {p.stem for p in report_dir.glob("*.png")}
    svgs = {p.stem for p in report_dir.glob("*.svg")}
    assert pngs == EXPECTED_STEMS
    assert svgs == EXPECTED_STEMS


@pytest.mark.parametrize("stem", sorted(EXPECTED_STEMS))
def test_png_is_a_real_non_blank_image(report_dir, stem):
    data = (report_dir / f"{stem}.png").read_bytes()
    assert len(data) > 10_000 and data.startswith(PNG_MAGIC)
    with Image.open(report_dir / f"{stem}.png") as im:
        w, h = im.size
        colours = im.convert("RGB").getcolors(maxcolors=w * h)
    assert w >= 500 and h >= 300
    assert len(colours) > 50  # lines, markers, anti-aliased text, bands
    background = max(colours)[0] / (w * h)
    assert background < 0.97  # mostly white, but not blank
    root = ElementTree.parse(report_dir / f"{stem}.svg").getroot()  # well-formed XML
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert float(root.get("width").removesuffix("pt")) > 300


def test_panel_layout_follows_the_data(results):
    plots = {p.stem: p for p in plot.all_plots(results.runs, results.java)}
    # one panel per runtime: paper-coop has three, high-contention two
    assert len([a for a in plots["throughput-paper-coop"].figure.axes if a.get_visible()]) == 3
    assert len([a for a in plots["throughput-high-contention"].figure.axes if a.get_visible()]) == 2
    ax = plots["throughput-paper-coop"].figure.axes[0]
    assert (
        ax.get_xscale() == "log"
        and "LTs" in ax.get_xlabel()
        and "acquisitions/ms" in ax.get_ylabel()
    )
    assert len(ax.get_lines()) == 5  # one median line per mutex
    assert len(ax.collections) == 5  # and one IQR band each
    # fairness: runtimes x (Jain, bypass p99, same-node hand-overs)
    assert len(plots["fairness-paper-coop"].figure.axes) == 3 * 3
    # Gaussian elimination: forward, back, total
    assert [a.get_title() for a in plots["gauss-speedup"].figure.axes] == [
        "forward elimination",
        "back substitution",
        "total",
    ]


def test_speedup_derived_when_the_harness_left_it_empty(results):
    rate = [r for r in results.runs if r["scenario"] == "poisson-rate"]
    assert all(r["speedup_vs_1"] is None for r in rate)
    filled = plot.with_speedup(rate, "lock_rate_per_ms")
    # carriers follow the thread count on OS threads: the reference is still found
    assert all(r["speedup_vs_1"] is not None for r in filled)
    ones = [r["speedup_vs_1"] for r in filled if r["lts"] == 1]
    assert np.median(ones) == pytest.approx(1.0, abs=0.02)
    fig = next(
        p for p in plot.speedup_plots(results.runs) if p.stem == "speedup-poisson-rate"
    ).figure
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert "mcs, 4 LTs" in labels and len(labels) == 9  # 3 mutexes x 3 thread counts


def test_split_only_on_keys_that_vary_independently():
    runs = []
    for pinning in ("compact", "scatter"):
        for lts in (1, 2, 4):
            runs.append(
                {
                    "scenario": "default",
                    "runtime": "os_threads",
                    "mutex": "mcs",
                    "lts": lts,
                    "carriers": lts,
                    "pinning": pinning,
                    "throughput_per_ms": 10.0 * lts,
                }
            )
    stems = sorted(p.stem for p in plot.throughput_plots(runs))
    assert stems == ["throughput-default-pinning-compact", "throughput-default-pinning-scatter"]
