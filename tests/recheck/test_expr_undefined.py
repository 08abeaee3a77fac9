"""adv36 W2 and M4: an expression profile undefined at the point a certificate evaluates it is an
input the producer refuses (exit 2, "undefined"), so verify answers exit 2 with that reason, not
exit 3 ("could not re-prove"); 0 ** b = 0 for b > 0 is defined on both sides.

Each case is decided by hand: log(0), 1/(1-1), sqrt(1-2), (-1)**0.5 (eps = 0.5), 0**(-0.5) have no
real value; a ball route cannot make them defined, whatever the precision."""

import copy
import json
from pathlib import Path

import pytest

from dpverify.certificate.format import compute_digest
from dpverify.cli import main
from dpverify.recheck.verify import verify_file

F2 = Path(__file__).resolve().parents[1] / "certificate" / "format2"


def _profile(tmp_path, profile: str, eps: str) -> tuple[int, str]:
    cert = copy.deepcopy(json.loads((F2 / "dp-profile-expr.json").read_text()))
    cert["inputs"].update(profile=profile, eps=eps)
    cert["result"]["quantity"] = f"delta(eps={eps})"
    cert["result"]["enclosure"] = {"lo": "0", "hi": "1"}
    cert["inputs"].pop("digits")
    cert["digest"] = compute_digest(cert)
    p = tmp_path / "f.json"
    p.write_text(json.dumps(cert))
    return verify_file(p)


@pytest.mark.parametrize("profile,eps,why", [
    ("log(eps)", "0", "log of a value <= 0"),
    ("0.5*log1p(-eps)", "1", "log1p of a value <= -1"),
    ("1/(eps-1)", "1", "a division by 0"),
    ("sqrt(eps-2)", "1", "sqrt of a value < 0"),
    ("(-1)**eps", "0.5", "a negative base to a non-integer power"),
    ("(eps-1)**0.5", "0", "a negative base to a non-integer power"),
    ("eps**(-0.5)", "0", "0 to a negative power"),
    ("eps**-2", "0", "0 to a negative power"),
])
def test_a_profile_undefined_at_its_point_is_exit_2_as_the_producer_says(tmp_path, capsys, profile, eps, why):
    assert main(["dp", "profile", "--mechanism", "expr", f"--profile={profile}", "--eps", eps]) == 2
    assert "undefined" in capsys.readouterr().err
    code, msg = _profile(tmp_path, profile, eps)
    assert code == 2, msg
    assert f"is undefined ({why})" in msg, msg


@pytest.mark.parametrize("profile,eps", [("0.5*exp(-eps)+eps**0.5", "0"), ("(eps-1)**0.5", "1")])
def test_zero_to_a_positive_power_is_written_and_verified(tmp_path, profile, eps):
    # M4: 0**0.5 = 0; the producer refused it as "a power is beyond e^1e+06" (log 0 = -inf)
    p = tmp_path / "c.json"
    assert main(["dp", "profile", "--mechanism", "expr", f"--profile={profile}", "--eps", eps,
                 "--certificate", str(p)]) == 0
    code, msg = verify_file(p)
    assert code == 0, msg


def test_an_exponential_of_an_undefined_argument_is_named_as_undefined(capsys):
    # M4: exp(-log(eps)) at eps = 0: log 0 = -inf inside the exponential, not a large value
    assert main(["dp", "profile", "--mechanism", "expr", "--profile=0.5*exp(log(eps))", "--eps", "0"]) == 2
    err = capsys.readouterr().err
    assert "beyond e^" not in err and "undefined" in err, err
