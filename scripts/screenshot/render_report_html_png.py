"""Make docs/img/report-html.png: the top of report.html as a browser shows it.

The page is the real one: ``render_html`` of a ``report.json`` (or a ``report.html`` as it
is), photographed by Debian's headless Chromium with the same offline flags as
render_comment_png.py (every background service off, every host name resolved to
nothing; the page's own Content-Security-Policy forbids every fetch), then cropped to the
page's content and stored with a 256-colour palette by Pillow.

Set-up (once) and the exact commands that made the committed image (make_reports.sh makes
a failing report from real runs, with a recorded history)::

    apt-get install -y chromium fonts-noto-core fonts-noto-color-emoji fonts-liberation
    bash scripts/screenshot/make_reports.sh /tmp/shots
    .venv/bin/python scripts/screenshot/render_report_html_png.py /tmp/shots/fail/report.json
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from render_comment_png import REPO, chromium_command, run_chromium, save_small_png

WIDTH_PX = 1000
# The verdict, the summary table and the failing dataset's charts; the rest is below.
HEIGHT_PX = 1750


def page_text(report: Path) -> str:
    if report.suffix == ".json":
        from retrieval_eval.render.report_html import render_html
        from retrieval_eval.results import RunReport

        return render_html(RunReport.model_validate_json(report.read_text(encoding="utf-8")))
    return report.read_text(encoding="utf-8")


def crop_to_content(shot: Path) -> None:
    """Cut the empty page background below the content."""
    from PIL import Image, ImageChops

    with Image.open(shot) as image:
        rgb = image.convert("RGB")
    background = Image.new("RGB", rgb.size, rgb.getpixel((rgb.width - 1, rgb.height - 1)))
    box = ImageChops.difference(rgb, background).getbbox()
    if box is not None:
        rgb = rgb.crop((0, 0, rgb.width, min(rgb.height, box[3] + 16)))
    rgb.save(shot)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("report", type=Path, help="report.json (rendered) or a report.html")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "img" / "report-html.png")
    parser.add_argument("--height", type=int, default=HEIGHT_PX)
    args = parser.parse_args(argv)
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("chromium is not installed: apt-get install -y chromium")
    with tempfile.TemporaryDirectory(prefix="report-html-shot-") as work_dir:
        work = Path(work_dir)
        page = work / "report.html"
        page.write_text(page_text(args.report), encoding="utf-8")
        shot = work / "shot.png"
        command = chromium_command(
            chromium,
            work / "profile",
            f"--window-size={WIDTH_PX},{args.height}",
            f"--screenshot={shot}",
            page.as_uri(),
        )
        # One device pixel per CSS pixel: a page of charts stays legible and the PNG small.
        command = [c for c in command if not c.startswith("--force-device-scale-factor")]
        run_chromium([*command[:-1], "--force-device-scale-factor=1", command[-1]])
        crop_to_content(shot)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        temporary = args.out.with_name(f".{args.out.name}.tmp")
        save_small_png(shot, temporary)
        os.replace(temporary, args.out)  # never a half-written image in docs/
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
