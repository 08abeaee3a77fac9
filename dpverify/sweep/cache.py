"""Content-addressed cache of certificates, distrusted on every read.

An entry is a certificate stored under ``<root>/<k[:2]>/<k>.json`` where ``k``
is :func:`dpverify.sweep.tasks.cache_key` of (``claim.quantity``, ``inputs``),
so that a later release finds the entries of an earlier one. ``root`` is a folder or, when fsspec is
installed, any fsspec URL (``s3://bucket/dpverify-cache``, ``memory://x``).

A cached file is input, so it is checked before use (:meth:`Cache.get`):
the certificate JSON Schema, the digest, the dpverify version (see
:meth:`Cache.check` for which versions are used), and that its
``claim.quantity`` and ``inputs`` are exactly the ones the key was computed
from (a valid certificate of another configuration, copied under this key,
is refused). A digest only detects accidents: anyone who can write to the
cache can forge a self-consistent certificate. ``recheck=True`` therefore
also runs the independent verifier (:func:`dpverify.recheck.verify.verify_certificate`,
a second implementation on mpmath) on each hit. A refused entry is a miss:
the configuration is computed again and the entry overwritten.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional

from .._version import __version__
from ..certificate import dumps
from ..certificate.format import FORMAT, compute_digest, schema_errors
from ..errors import DpverifyError, InvalidParameter
from .tasks import Plan, cache_key

__all__ = ["Cache", "Lookup"]

_MAX_ENTRY = 50_000_000  # bytes; a bigger file is not one of ours


def _release(version: str) -> tuple[int, ...]:
    """(major, minor, patch) of a release version "X.Y.Z"; ValueError for anything else."""
    parts = version.split(".")
    if len(parts) != 3 or not all(p.isdigit() and len(p) <= 6 for p in parts):
        raise ValueError(version)
    return tuple(int(p) for p in parts)


def _older_release(version: Any) -> bool:
    """Is ``version`` a release version older than this one?"""
    try:
        return isinstance(version, str) and _release(version) < _release(__version__)
    except ValueError:
        return False


def _canonical(x: Any) -> str:
    return json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Lookup:
    cert: Optional[dict]
    refused: str = ""  # why an existing entry was not used ("" for a plain miss or a hit)


class Cache:
    def __init__(self, url: str, *, recheck: bool = False) -> None:
        self.url = url
        self.recheck = recheck
        self._fs: Any = None
        if "://" in url:
            try:
                import fsspec
            except ImportError:
                raise InvalidParameter("cache", f"cache={url!r}: URLs need fsspec (pip install fsspec)") from None
            try:
                self._fs, self._root = fsspec.core.url_to_fs(url)
            except (ValueError, ImportError) as exc:
                raise InvalidParameter("cache", f"cache={url!r}: {exc}") from None
        else:
            self._root = str(Path(url))
            try:
                Path(url).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InvalidParameter("cache", f"cache={url!r}: cannot create the folder ({exc.strerror})") from None

    def _path(self, key: str) -> str:
        return f"{self._root}/{key[:2]}/{key}.json"

    def _read(self, key: str) -> Optional[bytes]:
        path = self._path(key)
        try:
            if self._fs is None:
                p = Path(path)
                if not p.is_file():
                    return None
                if p.stat().st_size > _MAX_ENTRY:
                    return b"\0too large"
                return p.read_bytes()
            if not self._fs.exists(path):
                return None
            return self._fs.cat_file(path)
        except OSError:
            return None

    def check(self, plan: Plan, data: bytes) -> tuple[Optional[dict], str]:
        """The certificate in ``data`` if it is a valid entry for ``plan``, else (None, reason).

        Which versions are used: an entry of this version (in this version's
        format) after the checks above; an entry of an older release (any format
        the verifier reads) only once the independent verifier has confirmed it,
        whatever ``recheck`` says, since that release's producer may have had a
        defect this one fixed; an entry of a newer or unreadable version never
        (this release cannot know that version's rules)."""
        try:
            cert = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return None, "not JSON"
        if not isinstance(cert, dict):
            return None, "not a certificate (not a JSON object)"
        version = cert.get("dpverify")
        older = version != __version__
        if older and not _older_release(version):
            return None, f"written by dpverify {str(version)[:40]!r}, this is {__version__} (used: this or an older release)"
        if not older and cert.get("format") != FORMAT:
            return None, f"not a format-2 certificate (format {str(cert.get('format'))[:40]!r})"
        errors = schema_errors(cert)
        if errors:
            return None, f"not a certificate ({errors[0][:160]})"
        if cert.get("digest") != compute_digest(cert):
            return None, "digest does not match the contents"
        claim = cert.get("claim", {})
        if claim.get("quantity") != plan.quantity or _canonical(cert.get("inputs")) != _canonical(plan.inputs):
            return None, "its quantity or inputs are not the ones of its key"
        if cache_key(claim["quantity"], cert["inputs"]) != plan.key:
            return None, "stored under a foreign key"
        if self.recheck or older:
            from ..recheck.verify import verify_certificate

            try:
                verify_certificate(cert)
            except DpverifyError as exc:
                return None, f"the independent verifier refused it ({exc})"
        return cert, ""

    def get(self, plan: Plan) -> Lookup:
        data = self._read(plan.key)
        if data is None:
            return Lookup(None)
        cert, why = self.check(plan, data)
        return Lookup(cert, why)

    def put(self, plan: Plan, cert: Mapping[str, Any]) -> None:
        """Store ``cert`` under ``plan.key`` (atomically on a local folder)."""
        data = dumps(cert).encode("utf-8")
        path = self._path(plan.key)
        if self._fs is None:
            folder = Path(path).parent
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            return
        tmp = f"{path}.tmp-{os.getpid()}"
        self._fs.makedirs(self._fs._parent(path), exist_ok=True)
        self._fs.pipe_file(tmp, data)
        self._fs.mv(tmp, path)
