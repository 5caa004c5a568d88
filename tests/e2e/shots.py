"""Where browser tests keep their screenshots: var/screenshots/ in the checkout (git-ignored), a folder a test."""

from pathlib import Path

SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
