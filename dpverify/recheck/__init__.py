"""The independent re-check of certificates: a second implementation, in MPFR
directed rounding (gmpy2) and exact integers / rationals, that imports nothing from
the arb side. mpmath reads decimals and proposes (roots, orders, grids); every
accept rests on the directed or exact comparisons (``verify --explain``).

:mod:`.verify` holds the one acceptance rule and the re-checker registry; each
other module re-proves the kinds of one area and registers them. Allowed
imports (enforced by ``tests/recheck/test_independence.py``, an AST scan of
every module here): the standard library, mpmath, gmpy2, jsonschema,
:mod:`dpverify.errors`, :mod:`dpverify._version`,
:mod:`dpverify.certificate.format` and this package. Never python-flint, and
never the product's numerics (ball, pld, gdp, events, ...).
"""
