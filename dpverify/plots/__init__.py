"""Pictures (matplotlib extra): calibration curve, eps over steps, privacy
profile, trade-off curve. Output formats PNG and SVG; the file name is checked
before any work starts."""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidParameter
from ..files import NotARegularFile, check_writable

__all__ = ["check_output", "require_matplotlib"]

FORMATS = (".png", ".svg")
INSTALL_HINT = "pip install 'dpverify[plot]'"


def check_output(path: str, option: str = "plot") -> Path:
    """Refuse an unknown image format or a missing folder (before any work)."""
    p = Path(path)
    flag = "--" + option.replace("_", "-")
    if p.suffix.lower() not in FORMATS:
        raise InvalidParameter(option, f"{flag} {path!r}: the file name must end in .png or .svg")
    if not p.parent.is_dir():
        raise InvalidParameter(option, f"{flag} {path!r}: the folder {str(p.parent)!r} does not exist")
    if p.is_dir():  # "x.png/" would fail only once the picture is drawn, after the work
        raise InvalidParameter(option, f"{flag} {path!r} is a folder; give a file name")
    try:
        check_writable(p)  # a FIFO with no reader would block the picture's write, after the work
    except NotARegularFile as exc:
        raise InvalidParameter(option, f"{flag} {path!r}: it {exc.strerror}") from None
    require_matplotlib(option)
    return p


def require_matplotlib(option: str = "plot") -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InvalidParameter(option, f"pictures need matplotlib: {INSTALL_HINT}") from None


def calibration_curve(cal, path):  # noqa: ANN001
    from .figures import calibration_curve as draw

    return draw(cal, path)
