"""Claims about Gaussian DP itself (delta_mu), from GDPT."""

from __future__ import annotations

from ..gdp import delta_mu
from .registry import Claim, register

register(
    Claim(
        id="gdpt-sec4.2-delta6-100",
        source="GDPT Sec 4.2, p. 7",
        statement="with mu = 6 and eps_h = 100 the head/tail gap delta_mu(eps_h) is on the order of 10^-43",
        printed="10^-43",
        relation={"kind": "order_of_magnitude", "printed": "1e-43"},
        quantity="gdp.delta",
        inputs={"mu": "6", "eps": "100", "digits": 15},
        compute=lambda: delta_mu("6", "100", 15),
        domain="mu = 6, eps = 100",
        note="read as 10^-43 <= delta < 10^-42",
    )
)

register(
    Claim(
        id="gdpt-sec4.2-delta6-200",
        source="GDPT Sec 4.2, p. 7",
        statement="with mu = 6 and eps_h = 200 the gap delta_mu(eps_h) is smaller than 10^-202",
        printed="< 10^-202",
        relation={"kind": "lt", "bound": "1e-202"},
        quantity="gdp.delta",
        inputs={"mu": "6", "eps": "200", "digits": 15},
        compute=lambda: delta_mu("6", "200", 15),
        domain="mu = 6, eps = 200",
    )
)

register(
    Claim(
        id="gdp-issue-float-underflow",
        source="dpverify issue #2 (float64 underflow example)",
        statement="delta_mu(eps) for mu = 0.1, eps = 5 is about 2.6e-547 (float64 returns 0)",
        printed="2.6e-547",
        relation={"kind": "rounds_to", "printed": "2.6e-547"},
        quantity="gdp.delta",
        inputs={"mu": "0.1", "eps": "5", "digits": 15},
        compute=lambda: delta_mu("0.1", "5", 15),
        domain="mu = 0.1, eps = 5",
    )
)

register(
    Claim(
        id="gdp-issue-deep-underflow",
        source="dpverify issue #2 (acceptance: gdp delta --mu 0.5 --eps 50)",
        statement="delta_mu(eps) for mu = 0.5, eps = 50 is about 4.7e-2166",
        printed="4.7e-2166",
        relation={"kind": "rounds_to", "printed": "4.7e-2166"},
        quantity="gdp.delta",
        inputs={"mu": "0.5", "eps": "50", "digits": 15},
        compute=lambda: delta_mu("0.5", "50", 15),
        domain="mu = 0.5, eps = 50",
    )
)
