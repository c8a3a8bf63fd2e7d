"""Make docs/img/pr-comment.png: the PR comment as a reviewer sees it on GitHub.

The picture in the README has to be the real thing, not a mock-up, so every step
uses what GitHub itself uses, offline:

* the comment body is built exactly as the Action posts it (``render_markdown`` capped
  to the comment limit, behind the hidden sticky-comment marker) when given a
  ``report.json``; a ``report.md`` is taken as the body as it is;
* cmark-gfm (GitHub's Markdown renderer) turns it into HTML with GitHub's extensions
  (tables, strikethrough, autolinks, task lists, tagfilter). Raw HTML is kept, as
  GitHub keeps it before sanitizing, so ``<details>``/``<summary>``/``<sub>`` render;
  tagfilter still neutralises ``<script>``, ``<style>``, ``<iframe>`` and friends. GitHub's
  own sanitizer is not reproduced: the report escapes all user text itself;
* the npm package github-markdown-css (light theme) styles it inside a
  ``.markdown-body`` box as wide as a comment on a PR page;
* the ```` ```mermaid ```` chart is drawn by mermaid.js from the npm package, loaded
  from disk, because GitHub draws mermaid in comments. Without mermaid.js
  (``--no-mermaid``) the chart stays a code block, which is what GitHub shows when
  its renderer cannot run;
* Debian's Chromium takes the screenshot headless, twice: once to measure the
  comment's height, once at exactly that height, so the image ends where the
  comment ends; Pillow then stores it with a 256-colour palette.

Nothing touches the network: CSS and JavaScript are inlined, the page's
Content-Security-Policy forbids every fetch, Chromium's background services are off
and its host resolver maps every name to nothing.

Set-up (once) and the exact commands that made the committed images (make_reports.sh
makes a passing and a failing report from real runs, with a recorded history)::

    apt-get install -y chromium fonts-noto-core fonts-noto-color-emoji fonts-liberation
    npm ci --prefix scripts/screenshot
    bash scripts/screenshot/make_reports.sh /tmp/shots
    .venv/bin/python scripts/screenshot/render_comment_png.py /tmp/shots/pass/report.json
    .venv/bin/python scripts/screenshot/render_comment_png.py /tmp/shots/fail/report.json \
        --out docs/img/pr-comment-failing.png

``--html FILE`` also keeps the page that was photographed, for a browser.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import cmarkgfm
from cmarkgfm.cmark import Options

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
NODE_MODULES = HERE / "node_modules"
MARKDOWN_CSS = NODE_MODULES / "github-markdown-css" / "github-markdown-light.css"
MERMAID_JS = NODE_MODULES / "mermaid" / "dist" / "mermaid.min.js"

COMMENT_ID = "default"  # the Action's default `comment-id` input
# A PR conversation column leaves a comment body about this wide on a desktop screen.
COMMENT_WIDTH_PX = 800
MARGIN_PX = 16
SCALE = 2  # crisp on high-density screens, still small: the image is mostly flat colour

# cmark-gfm with GITHUB_PRE_LANG writes ```mermaid as <pre lang="mermaid"><code>…</code></pre>.
_MERMAID_BLOCK = re.compile(r'<pre lang="mermaid"><code>(.*?)</code></pre>', re.DOTALL)

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; font-src data:"
)

# Runs after mermaid (if any) has drawn; the height pass reads it back from the DOM.
_MEASURE_JS = """
window.commentDrawn.then(() => {
  const box = document.querySelector('.comment').getBoundingClientRect();
  document.body.dataset.height = String(Math.ceil(box.bottom));
}, (error) => { document.body.dataset.error = String(error && error.message || error); });
"""

_MERMAID_RUN_JS = """
mermaid.initialize({startOnLoad: false, securityLevel: 'strict', theme: 'default'});
window.commentDrawn = mermaid.run({querySelector: 'pre.mermaid'});
"""


def markdown_to_github_html(markdown: str) -> str:
    """cmark-gfm as GitHub calls it for comments: GFM extensions, raw HTML kept."""
    rendered: str = cmarkgfm.github_flavored_markdown_to_html(
        markdown, options=Options.CMARK_OPT_UNSAFE
    )
    return rendered


def _mermaid_for_js(match: re.Match[str]) -> str:
    # mermaid reads textContent, so the escaped chart source can stay escaped.
    return f'<pre class="mermaid">{match.group(1)}</pre>'


def open_sections(body: str, summaries: Sequence[str]) -> str:
    """Expand the <details> whose summary starts with one of ``summaries``, as a reviewer
    who clicked them would see them; GitHub shows every section collapsed at first."""
    for summary in summaries:
        start = re.escape(html.escape(summary, quote=False))
        body = re.sub(rf"<details>(\s*<summary>{start})", r"<details open>\1", body)
    return body


def build_comment_html(
    markdown: str, *, css: str, mermaid_js: str | None, opened: Sequence[str] = ()
) -> str:
    """A self-contained page: the comment in a `.markdown-body` box, nothing fetched."""
    body = open_sections(markdown_to_github_html(markdown), opened)
    scripts = "<script>window.commentDrawn = Promise.resolve();</script>"
    if mermaid_js is not None and _MERMAID_BLOCK.search(body):
        body = _MERMAID_BLOCK.sub(_mermaid_for_js, body)
        # "</script" inside the library would end the inline script early.
        safe_js = mermaid_js.replace("</script", "<\\/script")
        scripts = f"<script>{safe_js}</script>\n<script>{_MERMAID_RUN_JS}</script>"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{html.escape(_CSP, quote=False)}">
<title>retrieval-eval PR comment</title>
<style>
{css}
</style>
<style>
html, body {{ margin: 0; background: #ffffff; }}
.comment {{
  box-sizing: border-box; width: {COMMENT_WIDTH_PX}px; margin: {MARGIN_PX}px;
  border: 1px solid #d1d9e0; border-radius: 6px;
}}
.comment > .markdown-body {{ padding: 16px; }}
pre.mermaid {{ background: transparent; text-align: center; }}
</style>
</head>
<body>
<div class="comment"><div class="markdown-body">
{body}
</div></div>
{scripts}
<script>{_MEASURE_JS}</script>
</body>
</html>
"""


def comment_markdown(report: Path) -> str:
    """The body the Action would post for this report."""
    if report.suffix == ".json":
        # Imported here so the HTML step (and its test) need only cmarkgfm.
        from retrieval_eval.action.comment import compose_body, room_for_report
        from retrieval_eval.render.markdown import render_markdown
        from retrieval_eval.results import RunReport

        run_report = RunReport.model_validate_json(report.read_text(encoding="utf-8"))
        body = render_markdown(run_report, max_chars=room_for_report(COMMENT_ID))
        return compose_body(COMMENT_ID, body)
    return report.read_text(encoding="utf-8")


def chromium_command(chromium: str, profile: Path, *extra: str) -> list[str]:
    return [
        chromium,
        "--headless",
        "--no-sandbox",  # we run as root in a container; the page is our own file
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-default-apps",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--hide-scrollbars",
        f"--force-device-scale-factor={SCALE}",
        f"--user-data-dir={profile}",
        # Virtual time runs the page's timers (mermaid's layout) to completion, then stops.
        "--virtual-time-budget=20000",
        *extra,
    ]


def run_chromium(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise SystemExit(f"chromium failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


def page_height(chromium: str, page: Path, work: Path) -> int:
    dom = run_chromium(
        chromium_command(
            chromium, work / "profile-measure", "--window-size=900,600", "--dump-dom", page.as_uri()
        )
    )
    error = re.search(r'<body[^>]*\bdata-error="([^"]*)"', dom)
    if error:
        raise SystemExit(f"mermaid could not draw the chart: {html.unescape(error.group(1))}")
    height = re.search(r'<body[^>]*\bdata-height="(\d+)"', dom)
    if height is None:
        raise SystemExit("the page never reported its height (did its scripts run?)")
    return int(height.group(1)) + MARGIN_PX


def screenshot(chromium: str, page: Path, png: Path, work: Path) -> None:
    width = COMMENT_WIDTH_PX + 2 * MARGIN_PX
    height = page_height(chromium, page, work)
    shot = work / "shot.png"
    run_chromium(
        chromium_command(
            chromium,
            work / "profile-shot",
            f"--window-size={width},{height}",
            f"--screenshot={shot}",
            page.as_uri(),
        )
    )
    png.parent.mkdir(parents=True, exist_ok=True)
    temporary = png.with_name(f".{png.name}.tmp")
    save_small_png(shot, temporary)
    os.replace(temporary, png)  # never a half-written image in docs/


def save_small_png(shot: Path, target: Path) -> None:
    """Chromium's PNG is full-colour RGB; a page of text needs far fewer colours, and a
    256-colour palette makes the image less than half the size with no visible change."""
    from PIL import Image  # Pillow: in the test environment (requirements/test.lock)

    with Image.open(shot) as image:
        palette = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
        palette.save(target, format="PNG", optimize=True)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "report",
        nargs="?",
        type=Path,
        default=Path("retrieval-eval-report/report.json"),
        help="report.json (rendered as the Action's comment) or a Markdown file",
    )
    parser.add_argument("--out", type=Path, default=REPO / "docs/img/pr-comment.png")
    parser.add_argument("--html", type=Path, help="also write the photographed page here")
    parser.add_argument("--chromium", default="chromium")
    parser.add_argument("--no-mermaid", action="store_true", help="show the chart as a code block")
    parser.add_argument(
        "--open",
        action="append",
        default=[],
        metavar="SUMMARY",
        help="show the section whose summary starts with SUMMARY expanded (repeatable)",
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    chromium = shutil.which(args.chromium)
    if chromium is None:
        print(f"{args.chromium} not found: apt-get install -y chromium", file=sys.stderr)
        return 2
    if not MARKDOWN_CSS.is_file() or not (args.no_mermaid or MERMAID_JS.is_file()):
        print(f"npm packages missing: npm ci --prefix {HERE}", file=sys.stderr)
        return 2
    mermaid_js = None if args.no_mermaid else MERMAID_JS.read_text(encoding="utf-8")
    page_html = build_comment_html(
        comment_markdown(args.report),
        css=MARKDOWN_CSS.read_text(encoding="utf-8"),
        mermaid_js=mermaid_js,
        opened=args.open,
    )
    if args.html is not None:
        args.html.write_text(page_html, encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="pr-comment-") as tmp:
        work = Path(tmp)
        page = work / "comment.html"
        page.write_text(page_html, encoding="utf-8")
        screenshot(chromium, page, args.out, work)
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
