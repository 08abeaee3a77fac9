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
cache can forge a self-consistent certificate. So each entry this machine's
dpverify writes gets a tag beside it, ``<k>.json.tag``: the HMAC-SHA256 of the
entry's key and bytes under a per-user secret (:func:`secret_key`, a file
outside the cache). The tag is not part of the certificate, whose bytes stay
independent of the secret. Only an entry whose tag verifies is served; one with
a missing or wrong tag (forged, or written on another machine or by another
user) is a miss. The independent verifier
(:func:`dpverify.recheck.verify.confirm`, a second implementation on mpmath and
MPFR) could vouch for its numbers and words, but not for the fields it neither
re-proves nor names: ``method.*`` (backend, algorithm, precision_bits), the
hints, a number's notation. Served, a forged method block passed into the
sweep's output and was then tagged as this user's (adv40 W1); and what this
version writes there is known only by computing it. A tagged entry of an older
release, and every hit under ``recheck=True``, is served only once that verifier
has confirmed all of it (the sweep engine runs those re-checks on its executor,
in parallel like computations). A refused entry is a miss: the configuration is
computed again and the entry overwritten (and tagged).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional

from .._version import RELEASES, __version__
from ..certificate import dumps
from ..certificate.format import FORMAT, compute_digest, schema_errors
from ..errors import InvalidParameter, MalformedCertificate
from ..files import NotARegularFile, TooLarge, read_regular
from .tasks import Plan, cache_key

__all__ = ["Cache", "Lookup", "KEY_ENV", "key_file", "secret_key"]

_MAX_ENTRY = 50_000_000  # bytes; a bigger file is not one of ours
#: what :meth:`Cache._read` returns for a file past _MAX_ENTRY (never read: no entry of ours is that large)
_TOO_LARGE = b"\0too large"
KEY_ENV = "DPVERIFY_CACHE_KEY"
_KEY_BYTES = 32
#: a key file is its hex digits and at most a little whitespace; a longer one is refused unread
_KEY_FILE_MAX_BYTES = 2 * _KEY_BYTES + 16
_TAG_DOMAIN = b"dpverify sweep cache entry v1\0"
_UNTAGGED = ("no valid tag (not written by this user's dpverify; its method block and hints, which no "
             "verifier re-proves, cannot be vouched for)")


def key_file() -> Path:
    """Where the cache's secret key lives: ``$DPVERIFY_CACHE_KEY`` if set, else
    ``$XDG_CONFIG_HOME/dpverify/cache-key`` (``~/.config/dpverify/cache-key``).
    Outside every cache folder, so that who can write a cache cannot read it."""
    env = os.environ.get(KEY_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "dpverify" / "cache-key"


def _key_error(path: Path, why: str) -> InvalidParameter:
    return InvalidParameter("cache", f"cache key file {str(path)!r}: {why}; set {KEY_ENV} to another path, "
                            "or run with --no-cache")


def secret_key() -> bytes:
    """This user's secret for cache tags, created once (``secrets``, mode 0600).

    An existing file is used only if it holds exactly 64 hex digits and no one
    but its owner can read or write it (a key others can read lets them forge
    tags): anything else is exit 2 naming the file, never a silently new key."""
    path = key_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    except OSError as exc:
        raise _key_error(path, f"cannot create it ({exc.strerror})") from None
    else:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(secrets.token_hex(_KEY_BYTES) + "\n")
    try:
        # a regular file of at most a few dozen bytes, checked before a byte is read: a FIFO
        # hung the read and /dev/zero never ended it (adv34 S1)
        raw = read_regular(path, _KEY_FILE_MAX_BYTES)
        shared = os.name == "posix" and path.stat().st_mode & 0o077
    except (NotARegularFile, TooLarge) as exc:
        raise _key_error(path, exc.strerror) from None
    except OSError as exc:
        raise _key_error(path, f"unreadable ({exc.strerror})") from None
    try:
        key = bytes.fromhex(raw.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        raise _key_error(path, "unreadable (not hex)") from None
    if shared:
        raise _key_error(path, "others can read or write it (chmod 600 it)")
    if len(key) != _KEY_BYTES:
        raise _key_error(path, f"must hold {2 * _KEY_BYTES} hex digits")
    return key


def _release(version: str) -> tuple[int, ...]:
    """(major, minor, patch) of a release version "X.Y.Z"; ValueError for anything else."""
    parts = version.split(".")
    if len(parts) != 3 or not all(p.isdigit() and len(p) <= 6 for p in parts):
        raise ValueError(version)
    return tuple(int(p) for p in parts)


def _local(fs: Any) -> bool:
    """True for fsspec's local filesystem (``file://``): its paths are this machine's, read
    by :func:`dpverify.files.read_regular` like the folder cache's (FIFO, device, size)."""
    from fsspec.implementations.local import LocalFileSystem

    return isinstance(fs, LocalFileSystem)


def _older_release(version: Any) -> bool:
    """Is ``version`` a released version (:data:`RELEASES`) older than this one?"""
    try:
        return version in RELEASES and _release(version) < _release(__version__)
    except ValueError:
        return False


def _canonical(x: Any) -> str:
    return json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Lookup:
    cert: Optional[dict]
    refused: str = ""  # why an existing entry was not used ("" for a plain miss or a hit)
    #: why the (tagged) entry must pass the independent verifier before it is served ("" when
    #: it need not): the sweep engine runs that re-check as a job on its executor, in
    #: parallel like a computation, then serves the entry or computes afresh
    rechecked: str = ""


class Cache:
    def __init__(self, url: str, *, recheck: bool = False) -> None:
        self.url = url
        self.recheck = recheck
        self._fs: Any = None
        if not url.split("://", 1)[-1].strip():
            # "" or "file://" named the current folder (entries landed in the working directory)
            raise InvalidParameter("cache", f"cache={url!r} names no folder; give a folder or a URL with a path")
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
        # the key file is read (or created) before any work: a bad one (others can read it, not hex)
        # was refused only at the first tag, after a configuration had been computed (adv40 W2)
        self._key: bytes = secret_key()

    def _path(self, key: str) -> str:
        return f"{self._root}/{key[:2]}/{key}.json"

    def _tag(self, key: str, data: bytes) -> str:
        """HMAC-SHA256 of (key, entry bytes) under :func:`secret_key`: binding the
        key too means a tagged entry copied under another key is not authentic."""
        msg = _TAG_DOMAIN + key.encode("ascii") + b"\0" + data
        return hmac.new(self._key, msg, hashlib.sha256).hexdigest()

    def _authentic(self, key: str, data: bytes) -> bool:
        tag = self._read(key, ".json.tag")
        return tag is not None and hmac.compare_digest(tag.strip(), self._tag(key, data).encode("ascii"))

    def _write(self, path: str, data: bytes) -> None:
        """Replace ``path`` by ``data`` (atomically on a local folder)."""
        if self._fs is None:
            folder = Path(path).parent
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
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

    def _read(self, key: str, suffix: str = ".json") -> Optional[bytes]:
        path = self._path(key)[: -len(".json")] + suffix
        try:
            if self._fs is None or _local(self._fs):
                return read_regular(path, _MAX_ENTRY)  # a folder or a FIFO where an entry goes: no entry
            return self._read_remote(path)
        except TooLarge:
            return _TOO_LARGE
        except OSError:
            return None

    def _read_remote(self, path: str) -> Optional[bytes]:
        """An entry of another filesystem under the folder cache's rules: a file (not a folder
        or a stream), at most _MAX_ENTRY bytes by its listing and by what is read
        (``cat_file`` had read whatever was there, to the end)."""
        if not self._fs.exists(path):
            return None
        info = self._fs.info(path)
        if info.get("type") != "file":
            return None
        size = info.get("size")
        if not isinstance(size, int) or size > _MAX_ENTRY:
            raise TooLarge(0, f"{size} bytes is too large (at most {_MAX_ENTRY})", path)
        with self._fs.open(path, "rb") as f:
            data = f.read(_MAX_ENTRY + 1)
        if len(data) > _MAX_ENTRY:
            raise TooLarge(0, f"more than {_MAX_ENTRY} bytes", path)
        return data

    def check(self, plan: Plan, data: bytes) -> tuple[Optional[dict], str, str]:
        """(certificate, "", why it must be re-checked) if ``data`` may be an
        entry for ``plan``, else (None, reason, "").

        Used only with a valid tag (:meth:`_tag`), since anyone who can write the cache
        can recompute a digest but not the tag, and the fields no verifier re-proves
        (``method.*``, hints) are vouched for by the tag alone (module docstring).

        Which versions are used: an entry of this version (in this version's
        format) after the checks above; a tagged entry of an older release (any format
        the verifier reads) only once the independent verifier has confirmed it
        (the caller runs it, see :class:`Lookup`), whatever ``recheck`` says, since
        that release's producer may have had a defect this one fixed; an entry of a
        newer or unreadable version never (this release cannot know that version's
        rules)."""
        from ..recheck.verify import parse_json  # verify's grammar: an entry verify would refuse is no entry

        if data is _TOO_LARGE:  # its first bytes were never read: not "not JSON" (adv36 N2)
            return None, f"larger than {_MAX_ENTRY:,} bytes, the cap on a cache entry", ""
        try:
            cert = parse_json(data)
        except MalformedCertificate as exc:
            return None, f"not a certificate ({str(exc)[:160]})", ""
        if not isinstance(cert, dict):
            return None, "not a certificate (not a JSON object)", ""
        version = cert.get("dpverify")
        older = version != __version__
        if older and not _older_release(version):
            return None, f"written by dpverify {str(version)[:40]!r}, this is {__version__} (used: this or an older release of {', '.join(RELEASES)})", ""
        if not older and cert.get("format") != FORMAT:
            return None, f"not a format-2 certificate (format {str(cert.get('format'))[:40]!r})", ""
        errors = schema_errors(cert)
        if errors:
            return None, f"not a certificate ({errors[0][:160]})", ""
        if cert.get("digest") != compute_digest(cert):
            return None, "digest does not match the contents", ""
        claim = cert.get("claim", {})
        if claim.get("quantity") != plan.quantity or _canonical(cert.get("inputs")) != _canonical(plan.inputs):
            return None, "its quantity or inputs are not the ones of its key", ""
        if cache_key(claim["quantity"], cert["inputs"]) != plan.key:
            return None, "stored under a foreign key", ""
        if not self._authentic(plan.key, data):
            return None, _UNTAGGED, ""
        return cert, "", "written by an older release" if older else "--recheck-cache" if self.recheck else ""

    def get(self, plan: Plan) -> Lookup:
        """The entry for ``plan``: a hit (``rechecked`` empty), an entry pending
        the independent verifier (``rechecked`` says why), a refusal or a miss."""
        data = self._read(plan.key)
        if data is None:
            return Lookup(None)
        cert, refused, why = self.check(plan, data)
        return Lookup(cert, refused, why)

    def put(self, plan: Plan, cert: Mapping[str, Any]) -> None:
        """Store ``cert`` under ``plan.key``, then its tag (an entry read between
        the two has no valid tag yet, so it is re-checked, never trusted)."""
        data = dumps(cert).encode("utf-8")
        path = self._path(plan.key)
        self._write(path, data)
        self._write(path + ".tag", self._tag(plan.key, data).encode("ascii"))
