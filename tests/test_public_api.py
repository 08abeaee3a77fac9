"""The public API: what ``import dpverify`` offers and how its headline functions are called.

Independent references: the signatures are read with :mod:`inspect`; the
Enclosure ends are checked against mpmath at 60 digits and against exact
rational arithmetic (``Fraction``)."""

import importlib
import inspect
import typing
from fractions import Fraction

import mpmath
import pytest

import dpverify
from dpverify import api

HEADLINE = (dpverify.dpsgd_epsilon, dpverify.dpsgd_delta, dpverify.calibrate)


def test_all_matches_exports():
    assert sorted(dpverify.__all__) == sorted(set(dpverify.__all__))
    for name in dpverify.__all__:
        assert hasattr(dpverify, name), name
    public = {n for n in vars(dpverify) if not n.startswith("_") and not isinstance(getattr(dpverify, n), type(dpverify))}
    assert public <= set(dpverify.__all__), public - set(dpverify.__all__)


def test_returned_types_are_exported():
    """Every class a headline or exported function returns can be named from dpverify."""
    for name in ("Enclosure", "Verdict", "PldAnswer", "Calibration", "SampledCalibration", "GdpCertificate", "GridBounds",
                 "ComposeResult", "RdpEpsilon", "EventAnswer", "HeadBound", "RR64Result", "SigmaRefinement"):
        assert name in dpverify.__all__ and isinstance(getattr(dpverify, name), type), name
    hints = typing.get_type_hints(dpverify.certify_gdp)
    assert hints["return"] is dpverify.GdpCertificate
    assert typing.get_type_hints(dpverify.compose_eps_grid)["return"] is dpverify.GridBounds


def test_all_is_grouped_by_concept_not_by_issue():
    source = inspect.getsource(dpverify)
    assert "issue" not in source.lower()


def test_calibrate_is_a_function():
    assert inspect.isfunction(dpverify.calibrate)
    importlib.import_module("dpverify.calibration")  # the subpackage must not shadow the function
    assert inspect.isfunction(dpverify.calibrate)


@pytest.mark.parametrize("fn", HEADLINE, ids=lambda f: f.__name__)
def test_headline_options_are_keyword_only_typed_and_documented(fn):
    sig = inspect.signature(fn)
    kinds = [p.kind for p in sig.parameters.values()]
    assert inspect.Parameter.VAR_KEYWORD not in kinds and inspect.Parameter.VAR_POSITIONAL not in kinds
    hints = typing.get_type_hints(fn, vars(api) | {"PldAnswer": object, "Calibration": object,
                                                    "SampledCalibration": object, "Template": object,
                                                    "Progress": object})
    for name, p in sig.parameters.items():
        assert name in hints, f"{fn.__name__}({name}) has no annotation"
        assert hints[name] is not typing.Any, f"{fn.__name__}({name}) is Any"
        assert f"        {name}:" in fn.__doc__, f"{fn.__name__}: Args: does not document {name}"
        if p.default is not inspect.Parameter.empty:
            assert p.kind is inspect.Parameter.KEYWORD_ONLY, f"{fn.__name__}({name}) is an option, not keyword-only"
    assert "Args:" in fn.__doc__ and "Returns:" in fn.__doc__ and "Raises:" in fn.__doc__


def test_dpsgd_epsilon_signature_names_the_vocabulary():
    params = list(inspect.signature(dpverify.dpsgd_epsilon).parameters)
    assert params == ["noise_multiplier", "sampling_rate", "steps", "delta", "neighboring", "digits",
                      "time_budget"]


@pytest.mark.parametrize("kwargs,name", [
    (dict(noise_multiplier="-1", sampling_rate="0.01", steps=10, delta="1e-5"), "noise_multiplier"),
    (dict(noise_multiplier="1", sampling_rate="2", steps=10, delta="1e-5"), "sampling_rate"),
    (dict(noise_multiplier="1", sampling_rate="0.01", steps=0, delta="1e-5"), "steps"),
    (dict(noise_multiplier="1", sampling_rate="0.01", steps=10, delta="1"), "delta"),
])
def test_library_errors_name_the_parameter(kwargs, name):
    with pytest.raises(dpverify.InvalidParameter) as exc:
        dpverify.dpsgd_epsilon(**kwargs)
    assert exc.value.name == name


def test_calibrate_errors_name_the_parameter():
    with pytest.raises(dpverify.InvalidParameter) as exc:
        dpverify.calibrate(1, "1e-5", sampling_rate="0.01", steps=10, digits=7)
    assert exc.value.name == "digits"
    with pytest.raises(dpverify.InvalidParameter) as exc:
        dpverify.calibrate(1, "1e-5", sampling_rate="0.01", steps=10, digits=2, rel_width="0.01")
    assert exc.value.name == "digits"


def test_enclosure_ends_as_fractions_and_outward_decimals():
    """delta_mu(eps) for mu = 1, eps = 1/3 (GDPT eq. 2: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)),
    against mpmath at 60 digits: the exact ends bracket it, and the decimals lie outside the exact ends."""
    enc = dpverify.delta_mu(1, "1/3", digits=12)
    lo, hi = enc.lo_fraction, enc.hi_fraction
    assert isinstance(lo, Fraction) and isinstance(hi, Fraction) and lo <= hi
    with mpmath.workdps(60):
        e = mpmath.mpf(1) / 3
        truth = mpmath.ncdf(-e + mpmath.mpf(1) / 2) - mpmath.exp(e) * mpmath.ncdf(-e - mpmath.mpf(1) / 2)
        assert mpmath.mpf(lo.numerator) / lo.denominator <= truth <= mpmath.mpf(hi.numerator) / hi.denominator
    for digits in (3, 8, None):
        d_lo, d_hi = enc.decimals(digits)
        assert Fraction(d_lo) <= lo and Fraction(d_hi) >= hi
    assert enc.decimals() == (enc.lo_str(), enc.hi_str())
    # 3 significant digits of 0.2838...: one unit of 10^-3 on each side at most
    assert Fraction(enc.decimals(3)[1]) - Fraction(enc.decimals(3)[0]) <= Fraction(2, 10**3)


def test_enclosure_infinite_end_has_no_fraction():
    enc = dpverify.compose_eps([("1", "0.5")], "0.1")  # delta < 1 - prod(1 - delta_i): no finite eps
    assert enc.decimals() == ("inf", "inf")
    with pytest.raises(ValueError):
        enc.hi_fraction


@pytest.mark.parametrize("budget", [float("nan"), -1, 0, "abc"])
def test_library_time_budget_is_checked_and_named(budget):
    # before: a NaN or negative budget reached the refinement loop unchecked
    import dpverify
    from dpverify.errors import InvalidParameter

    doc = {"event": {"type": "gaussian", "noise_multiplier": "1"}}
    for call in (lambda: dpverify.epsilon(doc, "1e-5", time_budget=budget),
                 lambda: dpverify.delta(doc, "1", time_budget=budget),
                 lambda: dpverify.check_claim(doc, "1", "1e-5", time_budget=budget)):
        with pytest.raises(InvalidParameter, match="time_budget"):
            call()


@pytest.mark.parametrize("make, name", [
    (lambda: dpverify.SubsampledGaussianCurve(Fraction(11, 10), Fraction(3, 2)), "q"),
    (lambda: dpverify.SubsampledGaussianCurve(Fraction(-11, 10), Fraction(1, 100)), "sigma"),
    (lambda: dpverify.SubsampledGaussianCurve(Fraction(0), Fraction(1, 100)), "sigma"),
    (lambda: dpverify.SubsampledGaussianCurve("abc", Fraction(1, 100)), "sigma"),
    (lambda: dpverify.gdpt("laplace", "1"), "profile"),
    (lambda: dpverify.implies(["1", "0"], ["1"]), "to"),
    (lambda: dpverify.implies(1, ["1", "0"]), "frm"),
])
def test_public_objects_refuse_what_is_no_mechanism(make, name):
    """A rate of 3/2 or a negative sigma is no mechanism: the public constructors refuse it,
    naming the field, where they computed the value at |sigma| and |q| (or hung) before."""
    with pytest.raises(dpverify.InvalidParameter) as exc:
        make()
    assert exc.value.name == name


def test_a_valid_curve_is_read_exactly():
    """Strings are read as exact decimals: the curve at ("1.1", "0.01") is the one at 11/10, 1/100
    (D_2 = log(1 + q^2 (e^(1/sigma^2) - 1)) for the integer order 2, MTZ 2019)."""
    c = dpverify.SubsampledGaussianCurve("1.1", "0.01")
    assert (c.sigma, c.q) == (Fraction(11, 10), Fraction(1, 100))
    enc = dpverify.renyi_divergence(c, 2)
    with mpmath.workdps(50):
        ref = mpmath.log1p(mpmath.mpf(1) / 10**4 * mpmath.expm1(1 / mpmath.mpf("1.21")))
        lo, hi = (mpmath.mpf(f.numerator) / f.denominator for f in (enc.lo_fraction, enc.hi_fraction))
        assert lo <= ref <= hi and hi - lo < 1e-15 * ref


# adv37 A2: the keyword options of every public query are read by the shared validators
# (dpverify._validate). The independent statement of the time-budget rule is the refusal
# events.check_claim gave before the fix (it already validated): each query must refuse the
# same value with the same message. Before: dpsgd_epsilon(time_budget=nan) ran with no budget
# at all, -inf/0/True were accepted, strings and 10**5000 were TypeError/OverflowError.
def _id(v: object) -> str:  # a test id; repr() of 10**5000 raises
    return f"int{v.bit_length()}bits" if isinstance(v, int) and v.bit_length() > 64 else repr(v)


_DOC = {"event": {"type": "gaussian", "noise_multiplier": "1"}}
_BAD_BUDGETS = [float("nan"), float("-inf"), -0.0, 0, True, "abc", "60s", None, 1j, [1], 10**5000,
                __import__("decimal").Decimal("60")]


@pytest.mark.parametrize("budget", _BAD_BUDGETS, ids=_id)
def test_every_query_refuses_a_bad_time_budget_as_check_claim_does(budget):
    import dpverify.pld as P

    with pytest.raises(dpverify.InvalidParameter) as ref:
        dpverify.check_claim(_DOC, "1", "1e-5", time_budget=budget)
    steps = [P.GaussianSteps.of(1, "0.01", 10)]
    for call in (lambda: dpverify.dpsgd_epsilon(1, "0.01", 10, "1e-5", time_budget=budget),
                 lambda: dpverify.dpsgd_delta(1, "0.01", 10, "1", time_budget=budget),
                 lambda: dpverify.calibrate(3, "1e-5", sampling_rate="0.01", steps=10, time_budget=budget),
                 lambda: dpverify.epsilon(_DOC, "1e-5", time_budget=budget),
                 lambda: dpverify.delta(_DOC, "1", time_budget=budget),
                 lambda: P.epsilon(steps, "1e-5", time_budget=budget),
                 lambda: P.check_claim(steps, "1", "1e-5", time_budget=budget)):
        with pytest.raises(dpverify.InvalidParameter) as exc:
            call()
        assert exc.value.name == "time_budget" and str(exc.value) == str(ref.value)


def _both_refuse(name: str, **option: object) -> None:
    """epsilon and delta of _DOC both refuse the option, naming it."""
    for call in (lambda: dpverify.epsilon(_DOC, "1e-5", **option), lambda: dpverify.delta(_DOC, "1", **option)):
        with pytest.raises(dpverify.InvalidParameter) as exc:
            call()
        assert exc.value.name == name


@pytest.mark.parametrize("width", ["abc", "2**2**2**2", [1], 1j, 10**5000, True, float("nan"), "1", "1e-9",
                                   __import__("decimal").Decimal("0.5")], ids=_id)
def test_rel_width_is_an_exact_number_in_range(width):
    # the rule: a number as parse_exact reads it (no Decimal, bool, expression), in [1e-8, 1)
    # for the PLD queries; before, float() took Decimal and " 0.5 " and raised ValueError on "1/3"
    from dpverify.ball import parse_exact

    _both_refuse("rel_width", rel_width=width)
    try:
        x = parse_exact(width, "rel_width")
    except dpverify.InvalidParameter:
        return
    assert not Fraction(1, 10**8) <= x < 1


def test_rel_width_as_a_fraction_is_the_number():
    a = dpverify.epsilon(_DOC, "1e-5", rel_width="1/1000")
    b = dpverify.epsilon(_DOC, "1e-5", rel_width=0.001)
    assert (a.enclosure.lo_fraction, a.enclosure.hi_fraction) == (b.enclosure.lo_fraction, b.enclosure.hi_fraction)


@pytest.mark.parametrize("length", [float("nan"), float("inf"), 1e308, 10**5000, True, Fraction(1, 3), "x", "1.5", -1,
                                    1 << 41, __import__("decimal").Decimal(3)], ids=_id)
def test_afford_length_is_an_integer_grid_length(length):
    # the rule: None or an integer number of grid points in [0, 2^40] (0: never past the width asked)
    _both_refuse("afford_length", afford_length=length)


@pytest.mark.parametrize("progress", [1, "x", 0.5, True, 0, False], ids=_id)
def test_progress_is_a_callable_or_none(progress):
    # 0 and False had silently meant "no progress", 1 and "x" a TypeError deep in the refinement
    import dpverify.pld as P

    for call in (lambda: dpverify.epsilon(_DOC, "1e-5", progress=progress),
                 lambda: dpverify.check_claim(_DOC, "1", "1e-5", progress=progress),
                 lambda: P.epsilon([P.GaussianSteps.of(1, "0.01", 10)], "1e-5", progress=progress)):
        with pytest.raises(dpverify.InvalidParameter) as exc:
            call()
        assert exc.value.name == "progress"


@pytest.mark.parametrize("kw, name", [(dict(digits=10**5000), "digits"), (dict(digits=-10**5000), "digits"),
                                      (dict(neighboring=10**5000), "neighboring")])
def test_a_huge_integer_is_refused_not_a_formatting_error(kw, name):
    # repr() of an int of more than 4300 digits raises ValueError: the message had failed to
    # build. The refusal is the one a short out-of-range value gets, with the value abridged.
    with pytest.raises(dpverify.InvalidParameter) as exc:
        dpverify.dpsgd_epsilon(1, "0.01", 10, "1e-5", **kw)
    assert exc.value.name == name and "5000 digits" in str(exc.value)
    with pytest.raises(dpverify.InvalidParameter) as exc:
        dpverify.dpsgd_epsilon(1, "0.01", 10**5000, "1e-5")
    assert exc.value.name == "steps" and "5000 digits" in str(exc.value)


@pytest.mark.parametrize("fn, last", [(dpverify.dpsgd_epsilon, "1e-5"), (dpverify.dpsgd_delta, "1")])
def test_dpsgd_digits_none_is_refused_not_the_default(fn, last):
    # the signature says int, 1..8 (vocabulary DIGITS_PLD); None had silently meant 4
    with pytest.raises(dpverify.InvalidParameter) as exc:
        fn(1, "0.01", 10, last, digits=None)
    assert exc.value.name == "digits" and "[1, 8]" in str(exc.value)


@pytest.mark.parametrize("kw, name", [
    (dict(progress=1), "progress"), (dict(progress="x"), "progress"), (dict(progress=True), "progress"),
    (dict(neighboring=0), "neighboring"), (dict(neighboring=False), "neighboring"),
    (dict(digits=10**5000), "digits"), (dict(sampling=10**5000), "sampling"), (dict(rel_width=10**5000), "rel_width"),
])
def test_calibrate_options_are_checked(kw, name):
    # adv37 A2: a progress without .width was an AttributeError mid-search, neighboring 0 / False
    # silently meant add-remove (`neighboring or ...`), a 5000-digit int broke the refusal's message.
    # The rules: progress a dpverify.progress.Progress or None; neighboring one of the relations.
    with pytest.raises(dpverify.InvalidParameter) as exc:
        dpverify.calibrate(3, "1e-5", sampling_rate="0.01", steps=10, **kw)
    assert exc.value.name == name
