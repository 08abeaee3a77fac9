"""A calibration whose ends `dpverify verify` could not re-prove within its budget is refused before
the work (issue 22: work bounds before work; bad input gets a clear error, never a hang).

The price is verify's own charge (recheck.calibrate._Route._priced, through
dpverify.calibration.price.verify_price), compared with recheck.limits.CALIBRATE_MAX_WORK. The work
is counted with a spy on the producer's certified evaluations (solve.refine_query), never a clock:
on the code before this change the spies below are reached (case 1's first evaluation took 80 CPU s;
case 2 searched 2^-16 and 2^-15 for 50 CPU s and its certificate was refused after 149 CPU s).
"""

from fractions import Fraction

from dpverify.calibration import dpsgd_template, solve
from dpverify.calibration.price import verify_price
from dpverify.cli import main
from dpverify.recheck.limits import CALIBRATE_MAX_WORK


def _spy(monkeypatch, finest: int) -> list:
    """Record the grid of every certified evaluation; one finer than 2^-finest fails the test at once
    (the old code computed it: a failure, not a hang)."""
    grids: list = []
    real = solve.refine_query

    def spy(*args, **kwargs):
        grids.append(kwargs["m_start"])
        if kwargs["m_start"] > finest:
            raise AssertionError(f"a certified evaluation on 2^-{kwargs['m_start']} was computed")
        return real(*args, **kwargs)

    monkeypatch.setattr(solve, "refine_query", spy)
    return grids


def test_a_tiny_delta_is_refused_before_any_evaluation(monkeypatch, capsys):
    # adv53 M6: at delta 1e-300 the re-check's masses take 1153 bits; a steps bracket's two curves on
    # 2^-10, the coarsest grid verify uses, price 4.9e9 > 3.5e9 wherever its ends lie (a steps bracket's
    # price hardly moves with T). Before: more than 180 CPU s, no answer (80 CPU s for the first grid)
    grids = _spy(monkeypatch, finest=-1)  # no evaluation on any grid
    assert main(["calibrate", "dpsgd", "--target-eps", "50", "--delta", "1e-300", "--noise-multiplier", "1",
                 "--sampling-rate", "0.01", "--digits", "3"]) == 2
    err = capsys.readouterr().err
    assert "--delta: 1e-300" in err and f"> {CALIBRATE_MAX_WORK:.1e}" in err and "2^-10" in err, err
    assert grids == []


def test_digits_whose_ends_verify_could_not_re_prove_are_refused_before_the_search(monkeypatch, capsys):
    # sigma 0.8, T = 10^4, (2, 1e-6), rate free, digits 5: the width model (2^-10, 2^-11) puts both ends on
    # 2^-16, where their curves price 6.8e9 > 3.5e9; before, the search computed 2^-16 and 2^-15 and the
    # writer refused the certificate after 149 CPU s (exit 2). Only the proposal's coarse grids are computed
    grids = _spy(monkeypatch, finest=solve.M_MODEL + 1)
    assert main(["calibrate", "dpsgd", "--target-eps", "2", "--delta", "1e-6", "--noise-multiplier", "0.8",
                 "--steps", "10000", "--digits", "5", "--json"]) == 2
    out = capsys.readouterr()
    assert out.out == ""  # no certificate
    assert "--digits: 5 needs its ends" in out.err and "2^-16" in out.err and "before the search" in out.err
    assert f"> {CALIBRATE_MAX_WORK:.1e}" in out.err, out.err
    assert grids and set(grids) <= {solve.M_MODEL, solve.M_MODEL + 1}


def test_the_price_is_at_most_what_verify_charges(monkeypatch):
    # the soundness of a refusal: verify_price of a certificate's ends on their recorded grids is at most
    # the charge of verify's own meter re-proving it (a genuine bracket written by the producer: sigma 3,
    # T = 10, rate free, on 2^-11)
    from dpverify.calibration import calibrate_template
    from dpverify.certificate import verify_certificate
    from dpverify.cli.calibrate import certificate
    from dpverify.recheck import pld as P

    t = dpsgd_template(noise_multiplier="3", steps=10, neighboring="add-remove")
    cal = calibrate_template(t, 2, "1e-5", rel_width="0.05")
    ends = [(n, e.value, e.grid_exponent) for n, e in (("safe", cal.safe), ("unsafe", cal.unsafe))]
    price, _, why = verify_price(t, Fraction(2), Fraction(1, 10**5), ends)
    assert why == "" and price is not None and price > 0
    meters: list = []
    real = P._Meter

    def keep(*args, **kwargs):
        meters.append(real(*args, **kwargs))
        return meters[-1]

    monkeypatch.setattr(P, "_Meter", keep)
    assert "confirmed" in verify_certificate(certificate(cal))
    assert meters and meters[-1].spent >= price, (price, [m.spent for m in meters])


def test_a_genuine_bracket_is_priced_within_the_budget():
    # the MNIST calibration of `calibrate dpsgd --help` (sigma free, digits 3: ends on about 2^-12) is
    # priced far below the budget, and sampling rate 1 (closed form) costs nothing
    t = dpsgd_template(sampling_rate="256/60000", steps=14063, neighboring="add-remove")
    price, _, why = verify_price(t, Fraction(3), Fraction(1, 10**5),
                                 [("safe", Fraction("0.96882"), 12), ("unsafe", Fraction("0.96805"), 12)])
    assert why == "" and 0 < price < CALIBRATE_MAX_WORK / 10
    t1 = dpsgd_template(sampling_rate=1, steps=10, neighboring="add-remove")
    assert verify_price(t1, Fraction(2), Fraction(1, 10**5), [("safe", Fraction(6), 11)])[0] == 0


def test_ends_on_verifys_finest_grid_are_refused_before_the_search_for_a_certificate(monkeypatch, capsys):
    # an end decided on verify's finest grid leaves it no finer one (the `calibrate dpsgd --help` example at
    # digits 6 searched 102 CPU s and was refused by the writer's re-proof after 56 more): with a
    # certificate asked for, ends the width model puts there are refused before the search; without, the
    # bracket is computed and printed. Verify's finest grid is lowered to 2^-11 here, so that a cheap
    # calibration (sigma 3, T = 10, rate free, digits 3: its ends on 2^-11 or finer) meets it
    from dpverify.recheck import calibrate as RC

    monkeypatch.setattr(RC, "_M_MAX", solve.M_MODEL + 1)
    monkeypatch.setattr(RC, "FINEST_GRID", solve.M_MODEL + 1)
    argv = ["calibrate", "dpsgd", "--target-eps", "2", "--delta", "1e-5", "--noise-multiplier", "3",
            "--steps", "10", "--digits", "3"]
    real = solve.refine_query
    grids = _spy(monkeypatch, finest=solve.M_MODEL + 1)
    assert main(argv + ["--json"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and "--digits: 3 needs its ends" in out.err and "the finest `dpverify verify` tries" in out.err
    assert "before the search" in out.err, out.err
    assert grids and max(grids) <= solve.M_MODEL + 1
    monkeypatch.setattr(solve, "refine_query", real)
    assert main(argv) == 0  # no certificate: the search runs and the bracket is printed
    assert "sampling_rate in [" in capsys.readouterr().out
