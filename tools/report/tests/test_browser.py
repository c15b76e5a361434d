"""Open the report in headless Chromium: images decode, tables render, the page is not blank.

Chromium is required: without it this test FAILS (install Debian's package,
``apt-get install -y chromium``), unless FIBERSYNC_SKIP_BROWSER=1 is set, in
which case it is skipped with that reason shown.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from support import PNG_MAGIC

CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
)


def find_chromium() -> str:
    """The browser's path; fails the test (or skips it when allowed) if there is none."""
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("FIBERSYNC_SKIP_BROWSER") == "1":
        pytest.skip(
            "headless browser check skipped: FIBERSYNC_SKIP_BROWSER=1 and no chromium found"
        )
    pytest.fail(
        f"chromium not found (looked for {', '.join(CANDIDATES)}): install it with "
        "'apt-get install -y chromium', or set FIBERSYNC_SKIP_BROWSER=1 to skip the "
        "browser check",
        pytrace=False,
    )


def run_chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}"
    return proc


def test_report_renders_in_headless_chromium(request, tmp_path):
    chromium = find_chromium()  # before drawing the report: fail fast without a browser
    report_dir: Path = request.getfixturevalue("report_dir")
    page = report_dir / "report.html"
    url = page.resolve().as_uri()
    n_images = page.read_text(encoding="utf-8").count("<img ")
    n_tables = page.read_text(encoding="utf-8").count("<table")
    assert n_images == 10 and n_tables >= 5

    dom = run_chromium(
        chromium, tmp_path / "profile-dom", "--virtual-time-budget=10000", "--dump-dom", url
    ).stdout
    body = re.search(r"<body([^>]*)>", dom)
    assert body, "no <body> in the dumped DOM"
    loaded = re.search(r'data-images-loaded="(\d+)"', body.group(1))
    total = re.search(r'data-images-total="(\d+)"', body.group(1))
    assert loaded and total, f"the page script did not run: <body{body.group(1)}>"
    assert int(total.group(1)) == n_images
    assert int(loaded.group(1)) == n_images, "some embedded images did not decode"
    assert dom.count("<table") == n_tables
    assert dom.count("<tr>") > 100  # the summary tables have their rows

    shot = tmp_path / "screenshot.png"
    run_chromium(
        chromium,
        tmp_path / "profile-shot",
        f"--screenshot={shot}",
        "--window-size=1280,2200",
        "--virtual-time-budget=10000",
        url,
    )
    assert shot.exists() and shot.read_bytes().startswith(PNG_MAGIC)
    with Image.open(shot) as im:
        assert im.size == (1280, 2200)
        colours = im.convert("RGB").getcolors(maxcolors=1280 * 2200)
    assert len(colours) > 100, "screenshot is (nearly) a single colour: nothing rendered"
    background = max(colours)[0] / (1280 * 2200)
    assert background < 0.95, "screenshot is almost entirely background"
