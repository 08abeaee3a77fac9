"""The independent re-check of certificates: a second implementation, on mpmath,
gmpy2 and exact rationals, that imports nothing from the arb side.

:mod:`.verify` holds the one acceptance rule and the re-checker registry; each
other module re-proves the kinds of one area and registers them. Allowed
imports (enforced by ``tests/recheck/test_independence.py``, an AST scan of
every module here): the standard library, mpmath, gmpy2, jsonschema,
:mod:`dpverify.errors`, :mod:`dpverify._version`,
:mod:`dpverify.certificate.format` and this package. Never python-flint, and
never the product's numerics (ball, pld, gdp, events, ...).
"""
