"""The time budget of a shuffled bracket (`audit dpsgd --sampling shuffle`): --time-budget was
accepted and ignored by this route (issue 22 (a)). The clock is now looked at between the cell
masses and before every polynomial product of the E-fold class law, so a spent budget answers
exit 3; and the clock only stops a run: a bracket completed under a budget is the same bytes as
one without a clock (the determinism rule). No timing is asserted: an expired budget is one
already spent (1e-9 s, below one cell), and the comparison is of bytes."""

import json

import pytest

from dpverify.certificate import shuffle_cert as C
from dpverify.cli import main
from dpverify.errors import PrecisionExhausted
from dpverify.sampling import shuffle as SH
from dpverify.sampling import shuffle_bracket


@pytest.mark.parametrize("sampling,epochs", [("shuffle", 1), ("shuffle", 3), ("shuffle-persistent", 3)])
def test_a_spent_budget_stops_the_run(sampling, epochs):
    r = SH.run("2", 20, 5, epochs, sampling)
    for call in (lambda: SH.bracket_eps(r, "1e-5", time_budget=1e-9),
                 lambda: SH.bracket_delta(r, "1", time_budget=1e-9)):
        with pytest.raises(PrecisionExhausted, match="time budget .* the shuffled bracket"):
            call()
    with pytest.raises(PrecisionExhausted, match="time budget"):
        shuffle_bracket("2", 20, 5, epochs, delta="1e-5", persistent=sampling != "shuffle", time_budget=1e-9)


@pytest.mark.parametrize("sampling", ["shuffle", "shuffle-persistent"])
def test_the_clock_never_changes_a_completed_answer(sampling):
    r = SH.run("2", 20, 5, 3, sampling)
    free = SH.bracket_eps(r, "1e-5")
    timed = SH.bracket_eps(r, "1e-5", time_budget=3600)
    a = C.bracket_certificate(r, free, delta="1e-5")
    b = C.bracket_certificate(r, timed, delta="1e-5")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    free_d, timed_d = SH.bracket_delta(r, "1"), SH.bracket_delta(r, "1", time_budget=3600)
    assert json.dumps(C.bracket_certificate(r, free_d, eps="1"), sort_keys=True) == \
        json.dumps(C.bracket_certificate(r, timed_d, eps="1"), sort_keys=True)


def _argv(extra):
    return ["audit", "dpsgd", "--sampling", "shuffle", "--noise-multiplier", "2", "--dataset-size", "20",
            "--batch-size", "5", "--epochs", "3", "--delta", "1e-5", "--json"] + extra


def test_cli_time_budget_reaches_the_shuffled_bracket(capsys):
    """A spent budget: exit 3 naming the budget, nothing on stdout (no certificate)."""
    assert main(_argv(["--time-budget", "1e-9"])) == 3
    out = capsys.readouterr()
    assert "time budget" in out.err and out.out.strip() == ""


def test_cli_bytes_do_not_depend_on_the_budget(capsys):
    assert main(_argv([])) == 0
    free = capsys.readouterr().out
    assert main(_argv(["--time-budget", "3600"])) == 0
    assert capsys.readouterr().out == free and json.loads(free)["claim"]["quantity"] == "shuffle.epsilon"


def test_the_no_amplification_gaussian_at_the_largest_noise_multiplier():
    """sigma 1e100 (the largest accepted): mu = Delta sqrt(E) / sigma = 1e-100 has the 40-digit floor 0,
    and the calibration's Gaussian bracket asked delta_mu(0) (exit 2 naming --mu, an option the command
    does not have; issue 22 d). 0 is the lower end there (delta >= 0); the pair holds delta_mu(1e-100, 0)
    = 2 Phi(mu / 2) - 1 (GDPT eq. 2 at eps 0; mpmath at 150 digits)."""
    from fractions import Fraction

    import mpmath

    lo, hi = SH.gaussian_delta(SH.run("1e100", 1000, 10, 1, "shuffle"), Fraction(0))
    with mpmath.workdps(150):
        ref = 2 * mpmath.ncdf(mpmath.mpf(10) ** -100 / 2) - 1
        assert lo == 0 and ref <= mpmath.mpf(hi.upper().str(60, radius=False))
