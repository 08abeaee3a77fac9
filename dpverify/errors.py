"""One exception root for everything dpverify raises on purpose.

Every error a user can provoke is a :class:`DpverifyError`; the CLI maps
:class:`InvalidParameter` to exit code 2 and never shows a traceback for it.
"""

from __future__ import annotations

import difflib
from typing import Any, Iterable, Mapping, Optional


def did_you_mean(word: Any, allowed: Iterable[str], *, synonyms: Optional[Mapping[str, str]] = None) -> str:
    """The hint after an unknown key, name or column: '; did you mean X?' naming the allowed word
    closest to ``word`` (difflib at cutoff 0.5), else its synonym when that is allowed (``steps`` ->
    ``count``: words difflib cannot guess), else '' (also for a ``word`` that is not text). The one
    copy: certificates, claim records, event files, sweep grids and input files word it alike."""
    if not isinstance(word, str):
        return ""
    allowed = list(allowed)
    near = difflib.get_close_matches(word, allowed, n=1, cutoff=0.5)
    if not near and synonyms and synonyms.get(word) in allowed:
        near = [synonyms[word]]
    return f"; did you mean {near[0]}?" if near else ""


class DpverifyError(Exception):
    """Root of all dpverify errors."""


class InvalidParameter(DpverifyError, ValueError):
    """An input is outside the domain where the requested quantity is defined.

    ``name`` is the argument (``"mu"``, ``"delta"``); the CLI turns it into the
    option (``--mu``). The message states the value and the allowed range.
    """

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name
        self.message = message


class PrecisionExhausted(DpverifyError):
    """The requested accuracy could not be certified within the precision cap.

    Raised instead of returning a wider-than-requested enclosure, so that a
    caller never receives an answer that silently misses its accuracy target.
    """


class Undecided(DpverifyError):
    """A certified predicate (sign, comparison) could not be decided at the
    current precision: the ball straddles the threshold."""


class CertificateRejected(DpverifyError):
    """A certificate failed re-verification (digest, numbers or verdict)."""


class CouldNotReprove(CertificateRejected):
    """The independent route cannot decide a certificate (it does not cover the case,
    or its budget ran out): never an accept, but not a proof that the certificate is
    false either, so ``verify`` answers exit 3, not 1."""


class MalformedCertificate(DpverifyError):
    """A file is not a dpverify certificate of a known kind (exit code 2)."""


class ValueOutOfRange(DpverifyError):
    """A result too large or too small to be written as a decimal (its decimal
    exponent would have about a thousand digits); exit code 2."""


class InternalError(DpverifyError):
    """A bug of dpverify itself, such as a certificate the writer built that does
    not validate against the shipped schema (exit code 4, "a bug; please report
    it"); never caused by the user's input."""


def shown(value: object) -> str:
    """A user value for a message, at most 60 characters. An int is measured before it is
    formatted: repr of an int of more than 4300 digits raises ValueError (10**5000 as
    ``digits`` had ended in that ValueError instead of the InvalidParameter it was building)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 190:
        sign = "a negative" if value < 0 else "an"
        return f"<{sign} integer of about {int(value.bit_length() * 0.30103)} digits>"
    try:
        text = repr(value)
    except ValueError:  # a container holding such an int
        return f"<a {type(value).__name__} too large to show>"
    return text if len(text) <= 60 else text[:57] + "..."
