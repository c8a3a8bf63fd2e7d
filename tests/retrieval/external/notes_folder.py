"""Four tagged notes in a folder: a corpus small enough to embed in a second."""

from __future__ import annotations

from pathlib import Path

NOTES = {
    "travel/lisbon.md": ("travel", "# Lisbon\nFlights cost 300 euros and the hotel 90 a night."),
    "travel/kyoto.md": ("japan", "# Kyoto\nTemples, gardens and an expensive train pass."),
    "recipes/pesto.md": ("recipes", "# Pesto\nBlend basil, pine nuts, garlic and olive oil."),
    "software/release.md": ("software", "# Release\nTag the commit and build the wheel."),
}


def notes_folder(folder: Path) -> Path:
    for name, (tag, text) in NOTES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ntags: [{tag}]\n---\n{text}\n", encoding="utf-8")
    return folder
