"""The "dpverify" accountant inside a real Opacus PrivacyEngine loop."""

import torch
from opacus import PrivacyEngine
from opacus.accountants.utils import get_noise_multiplier

import dpverify.accountants  # noqa: F401  (registers "dpverify")
from dpverify.events import epsilon, model as E
from fractions import Fraction


def test_twenty_steps_of_a_tiny_model_report_a_certified_epsilon():
    torch.manual_seed(0)
    x, y = torch.randn(64, 4), torch.randint(0, 2, (64,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=16)
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = PrivacyEngine(accountant="dpverify")
    model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                             noise_multiplier=1.0, max_grad_norm=1.0)
    steps = 0
    while steps < 20:
        for xb, yb in loader:
            if steps == 20:
                break
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
            steps += 1
    acc = engine.accountant
    assert acc.mechanism() == "dpverify" and len(acc) == 1 and acc.history[0][2] == 20  # entries, as Opacus
    eps = engine.get_epsilon(1e-5)
    # independent: the same schedule through the event API (q = 1/4 from Opacus' Poisson loader)
    z, q, n = acc.history[0]
    ans = epsilon(E.SelfComposed(E.PoissonSampled(Fraction(q), E.Gaussian(Fraction(z))), n), "1e-5")
    # the default accuracy is eps_error = 0.01 (absolute width of the enclosure whose upper end is returned)
    assert float(ans.enclosure.lo.mid()) <= eps <= float(ans.enclosure.hi.mid()) + 0.01
    state = acc.state_dict()
    assert state["mechanism"] == "dpverify" and state["history"] == acc.history


def test_get_noise_multiplier_runs_on_the_certified_accountant():
    z = get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5, sample_rate=0.1, steps=20,
                             accountant="dpverify", epsilon_tolerance=0.05, rel_width=1e-2)
    ans = epsilon(E.SelfComposed(E.PoissonSampled(Fraction(1, 10), E.Gaussian(Fraction(z))), 20), "1e-5",
                  rel_width=1e-3)
    assert float(ans.enclosure.hi.mid()) <= 2.0
