"""What every mechanism provides: a privacy profile delta(eps) for all real eps.

A *privacy profile* of a pair (P, Q) is the hockey-stick divergence
delta_{P|Q}(eps) = sup_S P(S) - e^eps Q(S) = E_Q[(dP/dQ - e^eps)_+]
(GDPT Sec 2; LT eq. 3). A :class:`Profile` encloses it for a ball ``eps`` at
the current working precision; :func:`profile_delta` refines that to a
requested relative width.

Mechanism modules register a builder under the CLI name
(``register_profile("laplace", builder)``); a builder takes the mechanism's
exact option strings and returns a Profile. :mod:`.registry` imports every
mechanism module by name and looks a name up (:func:`~.registry.build_profile`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Iterator, Mapping, Protocol, runtime_checkable

from flint import arb

from ..ball import ball, refine
from ..errors import InvalidParameter
from ..verdict import Enclosure

__all__ = [
    "Profile",
    "MechanismSpec",
    "register_profile",
    "profile_delta",
    "call_builder",
]


@runtime_checkable
class Profile(Protocol):
    """A privacy profile, evaluable in ball arithmetic.

    ``delta(eps)`` must return a ball containing delta(e) for every e in the
    ball ``eps`` (any real eps), at the current working precision; it may be
    wide at low precision, never wrong. ``params`` are the exact input strings
    (recorded in certificates); ``name`` is the CLI mechanism name.
    """

    name: str

    def delta(self, eps: arb) -> arb: ...

    def params(self) -> Mapping[str, str]: ...


def _delta_at_exact(profile: Profile, eps: Fraction) -> arb:
    """The profile at an exact eps. A profile may define ``delta_at_rational(eps:
    Fraction) -> arb | None`` to answer exactly where a ball cannot (at a
    break point such as eps = eps0 of the worst case of (eps0, 0)-DP, where the
    value 0 is exact but a ball around 1/3 straddles the break); None means
    "use the ball route"."""
    exact = getattr(profile, "delta_at_rational", None)
    if exact is not None:
        v = exact(eps)
        if v is not None:
            return v
    return profile.delta(ball(eps))


@dataclass(frozen=True)
class MechanismSpec:
    """A mechanism as the user named it: ``--mechanism NAME`` plus options."""

    name: str
    options: Mapping[str, str]


Builder = Callable[[Mapping[str, str]], Any]
_BUILDERS: dict[str, Builder] = {}


def register_profile(name: str) -> Callable[[Builder], Builder]:
    """Decorator: register a profile builder under the CLI mechanism name."""

    def deco(fn: Builder) -> Builder:
        if name in _BUILDERS:
            raise ValueError(f"mechanism {name!r} registered twice")
        _BUILDERS[name] = fn
        return fn

    return deco


class _ReadOptions(Mapping[str, Any]):
    """The options of a spec, remembering which ones a builder read (``[]`` or
    ``get``; a membership test ``in`` does not count as a use)."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        self._options = dict(options)
        self.used: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        value = self._options[key]
        self.used.add(key)
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._options

    def __iter__(self) -> Iterator[str]:
        return iter(self._options)

    def __len__(self) -> int:
        return len(self._options)


def call_builder(builder: Callable[[Mapping[str, Any]], Any], spec: MechanismSpec) -> Any:
    """``builder(spec.options)``, refusing every option the builder did not use.

    This is the one rule for "an option that does not apply to the chosen
    mechanism is refused" (docs/reference/inputs.md): whatever a registered builder
    reads is what the mechanism accepts, so the rule holds for every
    mechanism, including ones registered later, and for combinations
    (``gaussian --mu M --sensitivity D``: with --mu the sensitivity is not
    used). A builder that delegates to another (the RDP curves to the
    profile builders) passes the same mapping on; the outermost call checks.
    """
    if isinstance(spec.options, _ReadOptions):
        return builder(spec.options)
    options = _ReadOptions(spec.options)
    built = builder(options)
    unused = [key for key in spec.options if key not in options.used]
    if unused:
        flag = "--" + unused[0].replace("_", "-")
        used = ", ".join("--" + k.replace("_", "-") for k in spec.options if k in options.used)
        raise InvalidParameter(
            unused[0],
            f"{flag} does not apply to --mechanism {spec.name}"
            + (f" as given (it uses {used})" if used else ""),
        )
    return built


def profile_delta(profile: Profile, eps: Any, digits: int = 15) -> Enclosure:
    """Enclosure of the profile at exact ``eps`` with relative width <= 10^-digits.

    A profile that is exactly 0 at eps (finite support, eps beyond it) comes
    back as the exact point 0.
    """
    from ..ball import parse_exact

    if not (callable(getattr(profile, "delta", None)) and isinstance(getattr(profile, "name", None), str)):
        raise InvalidParameter("profile", f"profile={profile!r:.60} is not a privacy profile: build one with "
                                          "dpverify.mechanisms.build_profile(MechanismSpec(\"laplace\", "
                                          "{\"scale\": \"1\"}))")
    e = parse_exact(eps, "eps")
    x, bits = refine(lambda: _delta_at_exact(profile, e), digits=digits + 1,
                     what=f"delta(eps) of {profile.name} at eps={e}")
    return Enclosure.from_ball(x, digits, bits)
