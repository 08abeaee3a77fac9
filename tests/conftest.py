"""Hypothesis profiles (HYPOTHESIS_PROFILE=dev|ci|thorough) and a precision reset."""

import os

import pytest
from flint import ctx
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=20, deadline=None)
# ci: derandomized, so that a run of the same tree draws the same examples (a CI result is
# reproducible, and a rare draw cannot fail one run and pass the next); exploration is
# the dev and thorough profiles' job
settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(autouse=True)
def _reset_precision():
    """A test that leaks a changed arb precision must not affect the next one."""
    old = ctx.prec
    yield
    assert ctx.prec == old, "arb working precision leaked out of a computation"
    ctx.prec = old


@pytest.fixture(autouse=True, scope="session")
def _cache_key_outside_home(tmp_path_factory):
    """The sweep cache's secret key file (dpverify.sweep.cache.key_file) goes
    to a temporary folder, never into the user's config folder."""
    from dpverify.sweep.cache import KEY_ENV

    old = os.environ.get(KEY_ENV)
    os.environ[KEY_ENV] = str(tmp_path_factory.mktemp("dpverify-key") / "cache-key")
    yield
    if old is None:
        os.environ.pop(KEY_ENV, None)
    else:
        os.environ[KEY_ENV] = old
