"""Opacus' make_private(poisson_sampling=False) with the dpverify accountant: the
sampling is read from the data loader make_private returns, and a shuffled run
is answered by the certified shuffle bracket's upper end, never the Poisson
number.

Independent routes: the shuffle bracket computed by the library directly
(dpverify.sampling.shuffle_bracket, from n, B and the epochs counted here by
hand), and the upper end's closed form recomputed with mpmath at 50 digits:
with Delta = C (replace-special) every epoch is dominated by one Gaussian step
of mu = 1/sigma, so E epochs by the Gaussian pair of mu = sqrt(E)/sigma, whose
delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Dong, Roth, Su
2019, Cor 2.13)."""

from fractions import Fraction

import mpmath
import pytest
import torch
from opacus import PrivacyEngine
from opacus.data_loader import DPDataLoader

import dpverify.accountants  # noqa: F401  (registers "dpverify")
from dpverify.accountants.opacus_adapter import DpverifyOpacusAccountant, shuffle_noise_multiplier
from dpverify.errors import InvalidParameter
from dpverify.events import epsilon, model as E
from dpverify.certificate import compute_digest, verify_certificate
from dpverify.errors import CertificateRejected, CouldNotReprove, MalformedCertificate
from dpverify.sampling import shuffle_bracket

N, B = 64, 16  # 4 batches per epoch
DATA = torch.utils.data.TensorDataset(torch.randn(N, 4), torch.randint(0, 2, (N,)))


def _private(method, loader, poisson_sampling=False, **kw):
    """engine.make_private or make_private_with_epsilon on a fresh tiny model:
    (engine, model, optimizer, loader)."""
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    engine = PrivacyEngine(accountant="dpverify")
    model, opt, loader = getattr(engine, method)(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=loader,
        max_grad_norm=1.0, poisson_sampling=poisson_sampling, **kw)
    return engine, model, opt, loader


def _step(model, opt, xb, yb):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(xb), yb).backward()
    opt.step()


def _train(steps, poisson_sampling=False, **loader_kw):
    loader = loader_kw.pop("loader", None) or torch.utils.data.DataLoader(DATA, batch_size=B, **loader_kw)
    engine, model, opt, loader = _private("make_private", loader, poisson_sampling, noise_multiplier=1.0)
    done = 0
    while done < steps:
        for xb, yb in loader:
            if done == steps:
                break
            _step(model, opt, xb, yb)
            done += 1
    return engine


def _gaussian_delta(mu, eps):
    mpmath.mp.dps = 50
    mu, eps = mpmath.mpf(mu), mpmath.mpf(eps)
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def test_shuffled_run_reports_the_shuffle_upper_end_not_the_poisson_number():
    engine = _train(10, shuffle=True)  # 10 steps: passes of 4, 4 and 2 batches
    acc = engine.accountant
    assert acc.history == [] and acc.shuffled == [[1.0, N, B, "shuffle", 1, 10, 3, 2, 4]] and len(acc) == 1
    eps = engine.get_epsilon(1e-5)
    # the library's bracket for the 3 passes, directly
    direct = shuffle_bracket(1.0, N, B, 3, delta="1e-5", neighboring="replace-special")
    # the decimal upper end rounded up to the next float, no further
    assert Fraction(direct["hi"]) <= Fraction(eps) < Fraction(direct["hi"]) + Fraction(1, 10**12)
    # mpmath: a valid and tight upper end of the 3-epoch Gaussian (mu = sqrt(3))
    assert _gaussian_delta(mpmath.sqrt(3), eps) <= mpmath.mpf("1e-5")
    assert _gaussian_delta(mpmath.sqrt(3), eps * (1 - 1e-8)) > mpmath.mpf("1e-5")
    # the Poisson number for q = 1/4 and 10 steps is below: not what is reported
    poisson = epsilon(E.SelfComposed(E.PoissonSampled(Fraction(1, 4), E.Gaussian(1)), 10), "1e-5",
                      rel_width=1e-3).enclosure
    assert float(poisson.hi.mid()) < eps - 1
    # the bracket: lower end from the 2 complete passes, upper end from 3, both re-checked
    b = acc.bracket("1e-5")
    assert (b["epochs_lo"], b["epochs_hi"], b["sampling"], b["neighboring"]) == (2, 3, "shuffle", "replace-special")
    assert b["hi"] == direct["hi"]
    assert b["lo"] == shuffle_bracket(1.0, N, B, 2, delta="1e-5", neighboring="replace-special")["lo"]
    assert 0 < Fraction(b["lo"]) < Fraction(b["hi"])
    for cert in b["certificates"]:
        assert "confirmed" in verify_certificate(cert)


def test_fixed_order_is_the_persistent_bracket_and_state_dict_round_trips():
    engine = _train(8, shuffle=False)  # SequentialSampler: the same batches every epoch
    acc = engine.accountant
    assert acc.shuffled == [[1.0, N, B, "fixed-order", 1, 8, 2, 2, 4]]
    b = acc.bracket("1e-5")
    direct = shuffle_bracket(1.0, N, B, 2, delta="1e-5", persistent=True, neighboring="replace-special")
    assert (b["lo"], b["hi"], b["sampling"]) == (direct["lo"], direct["hi"], "shuffle-persistent")
    fresh = DpverifyOpacusAccountant()
    fresh.load_state_dict(acc.state_dict())
    assert fresh.shuffled == acc.shuffled and fresh.get_epsilon(1e-5) == acc.get_epsilon(1e-5)
    # replace-one: sensitivity 2C, mu = 2 sqrt(2)
    fresh.shuffle_neighboring = "replace-one"
    eps = fresh.get_epsilon(1e-5)
    assert _gaussian_delta(2 * mpmath.sqrt(2), eps) <= mpmath.mpf("1e-5") < \
        _gaussian_delta(2 * mpmath.sqrt(2), eps * (1 - 1e-8))


def test_the_loader_decides_not_the_flag():
    # a DPDataLoader handed in with poisson_sampling=False is still Poisson sampling
    # (make_private returns it unchanged): recorded as Poisson steps at its rate
    loader = DPDataLoader.from_data_loader(torch.utils.data.DataLoader(DATA, batch_size=B))
    engine = _train(5, loader=loader)
    assert engine.accountant.shuffled == [] and engine.accountant.history == [(1.0, 0.25, 5)]
    # and the default (Poisson) path is unchanged
    engine = _train(5, poisson_sampling=True)
    assert engine.accountant.shuffled == [] and engine.accountant.history == [(1.0, 0.25, 5)]


def test_what_no_theorem_covers_is_refused_with_the_reason():
    with pytest.raises(InvalidParameter, match="drop_last"):
        _train(1, loader=torch.utils.data.DataLoader(DATA, batch_size=24, drop_last=True))
    weighted = torch.utils.data.WeightedRandomSampler([1.0] * N, N)
    with pytest.raises(InvalidParameter, match="WeightedRandomSampler"):
        _train(1, loader=torch.utils.data.DataLoader(DATA, batch_size=B, sampler=weighted))
    with pytest.raises(InvalidParameter, match="with replacement"):
        _train(1, loader=torch.utils.data.DataLoader(
            DATA, batch_size=B, sampler=torch.utils.data.RandomSampler(DATA, replacement=True)))
    acc = _train(4, shuffle=True).accountant
    acc.step(noise_multiplier=1.0, sample_rate=0.25)
    acc.shuffle_neighboring = "replace-one"  # Poisson steps have no replace-one pair: the mixed run is refused
    with pytest.raises(InvalidParameter, match="replace-one"):
        acc.get_epsilon(1e-5)
    acc = DpverifyOpacusAccountant()
    acc.load_state_dict({"history": [], "mechanism": "dpverify", "shuffled": [[1.0, N, B, "shuffle", 2, 8, 2, 2, 4]]})
    with pytest.raises(InvalidParameter, match="gradient accumulation"):
        acc.get_epsilon(1e-5)
    acc = DpverifyOpacusAccountant()
    acc.load_state_dict({"history": [], "mechanism": "dpverify", "shuffled": [[1.0, N, B, "shuffle", 1, 8, 1, 1, 8]]})
    with pytest.raises(InvalidParameter, match="interleaved"):
        acc.get_epsilon(1e-5)
    good = [1.0, N, B, "shuffle", 1, 8, 2, 2, 4]
    for i, v in ((2, N + 1), (3, "poisson"), (0, -1.0), (5, 8.5), (6, 9), (7, 3), (8, 0), (6, 0)):
        bad = list(good)
        bad[i] = v
        with pytest.raises(ValueError, match="shuffled"):
            DpverifyOpacusAccountant().load_state_dict({"history": [], "mechanism": "dpverify", "shuffled": [bad]})
    for bad in ([good[:6]], "x"):
        with pytest.raises(ValueError, match="shuffled"):
            DpverifyOpacusAccountant().load_state_dict({"history": [], "mechanism": "dpverify", "shuffled": bad})


def test_make_private_with_epsilon_calibrates_shuffling_on_the_certified_upper_end():
    engine, model, opt, loader = _private("make_private_with_epsilon",
                                          torch.utils.data.DataLoader(DATA, batch_size=B, shuffle=True),
                                          target_epsilon=4.0, target_delta=1e-5, epochs=3)
    z = opt.noise_multiplier
    # mpmath: 3 epochs at z are dominated by the Gaussian pair of mu = sqrt(3)/z, which
    # meets (4, 1e-5); at z minus Opacus' bisection tolerance's worth it would be near
    assert _gaussian_delta(mpmath.sqrt(3) / z, 4) <= mpmath.mpf("1e-5")
    assert _gaussian_delta(mpmath.sqrt(3) / (z * 0.98), 4 - 0.05) > mpmath.mpf("1e-5")
    for _ in range(3):
        for xb, yb in loader:
            _step(model, opt, xb, yb)
    assert engine.accountant.shuffled == [[z, N, B, "shuffle", 1, 12, 3, 3, 4]]
    assert engine.get_epsilon(1e-5) <= 4.0


def test_shuffle_calibration_refuses_bad_options_before_any_work():
    """adv39 O1: a negative tolerance never ended the bisection, a NaN target or tolerance
    returned 10.0. Each option is refused naming it; a tolerance finer than the certified
    upper end resolves ends (no float z is left to try) refused, not in a loop: the upper
    ends are 10-digit decimals rounded up, so none lies in (target - 1e-300, target] for a
    target of 12 digits."""
    run = ("shuffle", 60000, 256)
    for kw, name in ((dict(target_epsilon=float("nan")), "target_epsilon"), (dict(target_epsilon=-1.0), "target_epsilon"),
                     (dict(epsilon_tolerance=-1), "epsilon_tolerance"),
                     (dict(epsilon_tolerance=float("nan")), "epsilon_tolerance"),
                     (dict(target_delta=0), "target_delta"), (dict(epochs=0), "epochs"),
                     (dict(sampling=("bogus", 60000, 256)), "sampling"), (dict(sampling=("shuffle", 10, 20)), "batch_size")):
        args = dict(target_epsilon=1.0, target_delta=1e-5, sampling=run, epochs=1) | kw
        with pytest.raises(InvalidParameter) as exc:
            shuffle_noise_multiplier(**args)
        assert exc.value.name == name, (kw, exc.value)
    with pytest.raises(InvalidParameter) as exc:
        shuffle_noise_multiplier(1.00000000005, 1e-5, run, 1, epsilon_tolerance=1e-300)
    assert exc.value.name == "epsilon_tolerance"


def test_each_pass_over_the_loader_counts_as_an_epoch():
    """Four passes of one batch each: a new permutation per pass, so a record may be in
    all four steps; the upper end is the 4-epoch bound (not ceil(4/4) = 1 epoch) and no
    pass is complete, so the lower end is 0."""
    engine, model, opt, loader = _private("make_private",
                                          torch.utils.data.DataLoader(DATA, batch_size=B, shuffle=True),
                                          noise_multiplier=1.0)
    for _ in range(4):
        _step(model, opt, *next(iter(loader)))
    acc = engine.accountant
    assert acc.shuffled == [[1.0, N, B, "shuffle", 1, 4, 4, 0, 1]]
    eps = acc.get_epsilon(1e-5)
    assert _gaussian_delta(2, eps) <= mpmath.mpf("1e-5") < _gaussian_delta(2, eps * (1 - 1e-8))  # mu = sqrt(4)
    b = acc.bracket("1e-5")
    assert (b["lo"], b["epochs_hi"], b["epochs_lo"]) == ("0", 4, 0)


def _gaussian_eps(mu, delta):
    """epsilon(delta) of the Gaussian pair of shift mu (the root of _gaussian_delta, decreasing in eps)."""
    d = mpmath.mpf(delta)
    a, b = mpmath.mpf(0), mpmath.mpf(200)
    for _ in range(160):  # bisection: the width 200 / 2^160 is far below every tolerance used
        m = (a + b) / 2
        a, b = (m, b) if _gaussian_delta(mu, m) > d else (a, m)
    return b


def _mixed(history, shuffled):
    acc = DpverifyOpacusAccountant()
    acc.load_state_dict({"history": history, "mechanism": "dpverify", "shuffled": shuffled})
    return acc


def test_mixed_run_with_unsampled_steps_against_the_gaussian_closed_form():
    """Poisson entries at sample rate 1 are plain Gaussian steps, so the dominating tree is a
    composition of Gaussians: 3 steps at z = 1/2 (mu 2 each) and 2 passes at z = 1 (mu 1 each)
    compose to the Gaussian pair of mu = sqrt(3 * 4 + 2) (Dong, Roth, Su 2019 Cor 3.3), whose
    epsilon(1e-5) mpmath gives at 50 digits. The lower end is the larger part: the 3 Gaussian
    steps alone, mu = 2 sqrt(3) (a tight pair), against the 2 complete passes' concrete pair."""
    acc = _mixed([(0.5, 1.0, 3)], [[1.0, N, B, "shuffle", 1, 8, 2, 2, 4]])
    b = acc.bracket("1e-5")
    assert (b["sampling"], b["neighboring"], b["epochs_hi"], b["epochs_lo"]) == \
        ("poisson+shuffle", "replace-special", 2, 2)
    hi, lo = Fraction(b["hi"]), Fraction(b["lo"])
    top, part = _gaussian_eps(mpmath.sqrt(14), "1e-5"), _gaussian_eps(2 * mpmath.sqrt(3), "1e-5")
    assert top <= mpmath.mpf(hi.numerator) / hi.denominator <= top * (1 + mpmath.mpf("2e-3"))
    assert b["lower_end"] == "poisson"
    assert part * (1 - mpmath.mpf("2e-3")) <= mpmath.mpf(lo.numerator) / lo.denominator <= part
    assert lo >= Fraction(shuffle_bracket(1.0, N, B, 2, delta="1e-5", neighboring="replace-special")["lo"])
    assert Fraction(b["hi"]) <= Fraction(acc.get_epsilon(1e-5)) < Fraction(b["hi"]) + Fraction(1, 10**12)
    for cert in b["certificates"]:
        assert "confirmed" in verify_certificate(cert)


def _reseal(cert, key, value):
    bad = dict(cert, result=dict(cert["result"], enclosure=dict(cert["result"]["enclosure"], **{key: value})))
    bad["digest"] = compute_digest(bad)
    return bad


def test_mixed_poisson_and_shuffled_opacus_run_answers_a_certified_bracket():
    """Two make_private calls on one engine: 10 shuffled steps (passes of 4, 4, 2 batches: 3 passes,
    2 complete), then 6 Poisson steps from a DPDataLoader (rate 1/4, z = 2). The upper end is the
    certified epsilon of the tree [6 Poisson steps, 3 Gaussian steps of z = 1]; it lies above each
    part's own upper end (mpmath: the 3-pass Gaussian mu = sqrt(3)); the lower end is the larger of
    the parts' certified lower ends (recomputed here from the hand-counted parts). Every certificate
    is re-proved by verify, and a forged end is refused."""
    engine = _train(10, shuffle=True)
    loader = torch.utils.data.DataLoader(DATA, batch_size=B)
    torch.manual_seed(1)
    model = torch.nn.Linear(4, 2)
    model, opt, loader = engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                                             data_loader=loader, max_grad_norm=1.0, poisson_sampling=True,
                                             noise_multiplier=2.0)
    for _ in range(6):
        _step(model, opt, *next(iter(loader)))
    acc = engine.accountant
    assert acc.history == [(2.0, 0.25, 6)] and acc.shuffled == [[1.0, N, B, "shuffle", 1, 10, 3, 2, 4]]
    b = acc.bracket("1e-5")
    assert (b["poisson_steps"], b["shuffled_steps"], b["epochs_hi"], b["epochs_lo"]) == (6, 10, 3, 2)
    hi, lo = Fraction(b["hi"]), Fraction(b["lo"])
    poisson = epsilon(E.SelfComposed(E.PoissonSampled(Fraction(1, 4), E.Gaussian(2)), 6), "1e-5",
                      neighboring="replace-special", rel_width=1e-3).enclosure
    assert _gaussian_delta(mpmath.sqrt(3), float(hi)) < mpmath.mpf("1e-5") and hi > poisson.hi_fraction
    shuffled_lo = Fraction(shuffle_bracket(1.0, N, B, 2, delta="1e-5", neighboring="replace-special")["lo"])
    best = max(shuffled_lo, poisson.lo_fraction)  # the parts' certified lower ends (decimals rounded down)
    assert best * (1 - Fraction(1, 10**9)) <= lo <= best
    assert b["lower_end"] == ("shuffle" if shuffled_lo >= poisson.lo_fraction else "poisson")
    assert 0 < lo < hi and engine.get_epsilon(1e-5) >= float(hi)
    up, low_p, low_s = b["certificates"]
    assert up["claim"]["quantity"] == "events.epsilon" and up["inputs"]["neighboring"] == "replace-special"
    assert low_s["claim"]["quantity"] == "shuffle.epsilon"
    for cert in b["certificates"]:
        assert "confirmed" in verify_certificate(cert)
    refused = (CouldNotReprove, CertificateRejected, MalformedCertificate)
    for cert, key, value in ((up, "hi", str(hi * Fraction(9, 10))), (low_p, "lo", str(poisson.hi_fraction * 2)),
                             (low_s, "lo", str(hi))):
        with pytest.raises(refused):
            verify_certificate(_reseal(cert, key, value))


def test_mixed_run_with_a_non_private_step_has_no_finite_epsilon():
    """Noise 0 on a Poisson step: no finite epsilon for any delta < 1 (the step releases a
    sampled record's clipped gradient exactly); both ends are inf, and the certificates of the
    two events trees say so to verify."""
    acc = _mixed([(0.0, 0.25, 2)], [[1.0, N, B, "shuffle", 1, 4, 1, 1, 4]])
    assert acc.get_epsilon(1e-5) == float("inf")
    b = acc.bracket("1e-5")
    assert (b["lo"], b["hi"]) == ("inf", "inf")
    for cert in b["certificates"]:
        assert "confirmed" in verify_certificate(cert)
