"""Work bounds, checked before any re-derivation starts.

A certificate of a few hundred bytes can name a number whose decimal
expansion has 10^18 digits, a power tower, or a composition whose exact law
has 2^40 atoms. Before computing, ``verify`` reads what the inputs imply and
answers at once:

* exit 2 for inputs beyond a cap the producer enforces too (so a certificate
  the producer could not have written): numbers longer than
  :data:`MAX_NUMBER_CHARS` characters or with a decimal exponent beyond
  +-:data:`MAX_INPUT_EXPONENT`; expression profiles longer than
  :data:`MAX_EXPR_CHARS` characters, with more than :data:`MAX_EXPR_NODES`
  parts or nested deeper than :data:`MAX_EXPR_DEPTH`;
* exit 3 for inputs the producer accepts but whose re-derivation is beyond
  the second route's work caps (:data:`MAX_LAW_LATTICE_BITS` product bits of a
  composition law on its lattice, else :data:`MAX_LAW_PRODUCTS` products of its
  convolution, priced in :mod:`.dp` once the precision is known; :data:`GDP_CELL_WORK_CAP` units of cell proofs for one
  ``gdp.certify`` / ``gdp.optimal_mu`` certificate, a count fixed before the
  proof starts, so the answer does not depend on the machine's speed).

Expression profiles are also bounded while they are evaluated: every
exponential and every power must have a natural-log magnitude of at most
:data:`MAX_EXP_ARGUMENT` (:func:`guard_exponent`), so no step builds a number
with more than about 434,000 decimal digits of exponent.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Mapping

from ..certificate.format import (BINS_MAX_COMPOSED, BINS_MAX_WORK, BINS_ONE_EPOCH_DEGREE, EVENT_MAX_LEAVES, EXPR_ALLOWED, EXPR_FUNCS,
                                  EXPR_NAMES, GDP_CELL_WORK_CAP, MAX_EVENT_ATOMS, REPLACE_MAX_EPS)
from ..errors import MalformedCertificate
from ..numtext import DECIMAL, FRACTION

__all__ = ["check_work", "check_number_text", "check_expression", "guard_exponent", "CAPS_TEXT",
           "MAX_NUMBER_CHARS", "MAX_INPUT_EXPONENT", "MAX_EXPR_CHARS", "MAX_EXPR_NODES", "MAX_EXPR_DEPTH",
           "MAX_EXP_ARGUMENT", "MAX_LAW_LATTICE_BITS", "MAX_LAW_PRODUCTS"]

#: the producer's caps on input numbers (dpverify.ball: 1000 characters, exponents within +-3000)
MAX_NUMBER_CHARS = 1000
MAX_INPUT_EXPONENT = 3000
#: the producer's caps on expression profiles (dpverify.mechanisms.expr), and a nesting cap
MAX_EXPR_CHARS = 500
MAX_EXPR_NODES = 200
MAX_EXPR_DEPTH = 40
#: |x| of every exp(x) and of every b * log(a) in a power a ** b of an expression profile
MAX_EXP_ARGUMENT = 10**6
#: the law of a heterogeneous composition (recheck.dp): on its lattice, types x lattice points x
#: slot bits of the exact integer products at most MAX_LAW_LATTICE_BITS (about 3.5 CPU s a law
#: here at the cap), else a dictionary convolution of at most MAX_LAW_PRODUCTS interval products
#: (about 6 us each up to 1024 bits, counted x prec / 1024 above: about 7 CPU s at the cap). Every
#: exact law the producer writes fits one of them: at most 400,000 reachable shifts make at most
#: 800,000 products, at <= 300 digits (about 1100 bits)
MAX_LAW_LATTICE_BITS = 10**9
MAX_LAW_PRODUCTS = 12 * 10**5
#: work units of the cell proofs of one gdp.certify / gdp.optimal_mu certificate: a cell of the
#: Laplace profile at 200 bits costs 1 unit (about 0.35 ms here), at b bits (b / 200)^1.6 (MPFR's
#: erfc and exp grow about so), other profiles a static multiple (expressions by their size). The
#: cells a recorded upper end needs grow like 1 / sqrt(hi - sup G_f) where G_f is flat at its
#: argmax (the Laplace profile at eps = 0) under the first-order cell test (expression and App B
#: profiles: enclosures down to about 1e-8 wide), like log(1 / (hi - sup G_f)) under the
#: second-order one of the pair profiles (Laplace, pure, approx, rr, subsampled: 1e-12 in ~100 cells)

#: knots x bits^2 of one step's PLD masses beyond which a discretisation at more than
#: PLD_WIDE_UNIT_BITS bits answers exit 3 before the work: each knot's Phi at b bits costs about
#: b^2 (Taylor anchors of degree ~ b); measured on this machine, 29 s at 637 knots x 1909 bits
#: (delta = 1e-500) and over 300 s at 1146 x 5380 (delta = 1e-1500). Below 2048 bits (every
#: delta above about 1e-550) only the knot count and the time budget bound it
PLD_MAX_KNOT_BIT_WORK = 10**10
PLD_WIDE_UNIT_BITS = 2048
#: the price of all the grids one PLD query (pld.*, events.*) computes, each priced before its
#: work (recheck.pld._Meter): per step law, knots x (K + m + 32) bits x the bit length of the step
#: count x the sides composed (1 upper, 2 lower, 3 both); beyond: exit 3 before that grid. Measured
#: here (session 52): about 4.6e-9 CPU s a unit where the Fourier powers answer, 1e-8 .. 2e-8 where a
#: grid's exact products run. Set at 3e9 (2.5e9 before the exact products were metered), above the
#: dearest genuine certificates that verify finishes on this machine, delta(1.5) at sigma 1.1, q 0.01,
#: digits 6: T 1000 (2.29e9 by its knots, 2.40e9 with its products, 11 CPU s) and T 1024 (2.50e9 by
#: its knots, 2.55e9 with its products, 9.6 CPU s: past a 2.5e9 cap once its products count). The one dearer genuine certificate met, eps(1e-6) at sigma
#: 0.8, q 0.004, T 10^4, digits 6, prices 6.9e9 and ran 161-219 CPU s and 10.7 GB to an exit 3 at
#: the default 300 s budget; under this cap it is exit 3 at once, the same answer on every machine
#: (ref43 W1: at 7.5e9 a forged eps enclosure 1e-12 wide next to the truth priced 7.1e9 and ran
#: 329 CPU s and 8.4 GB to the clock). A forgery stops within the cap; since the exact products
#: past half a grid's price are charged their bits (PLD_PRODUCT_BITS_PER_UNIT below), the forgeries
#: measured near it stop in 11-24 CPU s (22-55 before at 2.5e9; pld-speed.md, "The exact products
#: metered"). The committed certificates (certificates/, the oracle battery, format 1 and 2
#: fixtures) price at most 4.3e8 by their knots.
PLD_MAX_GRID_WORK = 30 * 10**8
#: the work of all the PLD grid searches of one replace-one certificate (replace.*, recheck.replace:
#: its two curve details and the root probes, on one recheck.pld._Meter, each search still within
#: PLD_MAX_GRID_WORK), in PLD_MAX_GRID_WORK's units. 7.5e-9 .. 8.4e-9 CPU s a unit on these searches
#: here (8.4e-9 at 646-bit masses), so at most about 27 CPU s, and verify of a replace-one
#: certificate stays within 30 (issue 22, deliverable 4; at 3.5e9 a refusal took 31 CPU s). The
#: dearest genuine certificate met fits: T = 200 epochs, sigma 2.98, q 0.01, delta(4), its remove
#: curve at 4.6e-141 on 2^-14 (2.1e9 units after 8.3e8 for its add/remove curve, 2.95e9 in all,
#: 23 CPU s). delta(5) needs its remove curve's 2^-14 past one cap (exit 3 in 24 CPU s; exit 0 in 36
#: CPU s before, from a first grid 2^-8), and the writer, which re-proves every replace.* bracket, does
#: not write it. Before, each search had a cap of its own, a detail left undecided was searched
#: again on another, and each root probe had its own: a remove detail narrowed to 8e-8 on the
#: delta(1.49) certificate ran 41 CPU s to exit 3
REPLACE_MAX_WORK = 32 * 10**8
#: the work of all the curves one calibrate.bracket certificate (Poisson and fixed-batch templates,
#: recheck.calibrate) composes, its ends, their delta_at_target bounds and the start probes, on one
#: recheck.pld._Meter in PLD_MAX_GRID_WORK's units, each curve priced before its work and its exact
#: products past half its price charged their bits (recheck.calibrate._Route._priced); beyond: exit 3
CALIBRATE_MAX_WORK = 35 * 10**8
#: a calibrate.bracket discretisation is charged, once, when its masses are computed, knots x bits x
#: (this - the bit length of T), on top of knots x bits x that bit length a side for its composition,
#: which alone left a short schedule's discretisation nearly free (T = 1: weight 1). A knot's MPFR
#: tails cost 20-50 us at 150 bits and 450 us at 1614 bits here, about 4e-9 .. 9e-9 CPU s a unit at
#: this weight
CALIBRATE_KNOT_WEIGHT = 32
#: bits of a calibrate.bracket curve's exact product per unit, once its curve's prepaid share is used
#: up (recheck.pld._Meter.products): that route has no Fourier powers, and its products at K ~ 1600
#: bits (target_eps 1014) ran 3.4 ns a bit here with their allocation (adv53 M1's forgery), so 2 bits a
#: unit keeps a unit near 7e-9 CPU s as elsewhere
CALIBRATE_PRODUCT_BITS_PER_UNIT = 2
#: bits of an exact product (its packed integer, recheck.pld._product_bits) per unit of PLD_MAX_GRID_WORK,
#: charged once a grid's price is used up on its side (recheck.pld._Meter.products). GMP multiplies
#: 10^7 .. 2x10^8-bit integers at 1.7-2.7 ns a bit here, with the rounding and trims about 2.6 ns (the
#: T = 10^7 digits-3 verify: 4.25e9 product bits, 11 of its 13 CPU s); a unit of the price is about
#: 4.6e-9 CPU s where the Fourier powers answer (the 2^-17 certificate above: 2.29e9 in 10.5 s)
PLD_PRODUCT_BITS_PER_UNIT = 3
#: 1 / this of a grid's price (per side) prepays its exact products; the rest covers its discretisation
#: and Fourier powers. With the whole price prepaid a forgery whose products fit in it still ran 1e-8
#: CPU s a unit (a 2e-12 wide enclosure of the T = 1000 digits-6 certificate: 24.7 CPU s to the cap);
#: with half, 12.6 at a 2.5e9 cap (22.3 at 3e9). The genuine certificates' exact products (their
#: probes' bases are shorter than a Fourier power takes; the T = 10^7 lower pairs) then price the
#: T = 1000 digits-6 one at 2.40e9 (2.29e9 before) and the T = 10^7 digits-3 one at 2.24e9 (1.25e9
#: before), both exit 0
PLD_PRODUCT_PREPAID = 2
#: what a PLD verify may charge (PLD_MAX_GRID_WORK units) at most this many times the price of the
#: recorded grid alone (recheck.pld.recorded_grid_price): a certificate priced above 1 / this of the
#: cap is re-proved by verify's own meter before it is written (certificate/writer.unverifiable).
#: The coarser grids, the other direction and the finer grid took about 4x; with the exact products
#: past half a grid's price charged, up to 7.7x was measured (sigma 1.1, q 0.01, T 1000, eps(1e-300),
#: digits 3: priced 2.76e8 at 2^-8, verify charges 2.13e9 at K = 1041, 16.7 CPU s, exit 0). From 2^20
#: steps the price counts the tilted lower pair's exact products too (recheck.pld.grid_work), which the
#: spread did not cover: at T = 10^7, sigma 30, q 1e-6, digits 3 (2^-30) the knots priced 7.0e6 and
#: verify charged past 3e9 (session 55; now priced 8.1e8, re-proved and refused, exit 2)
PLD_PRICE_SPREAD = 16

CAPS_TEXT = (f"input numbers up to {MAX_NUMBER_CHARS} characters with decimal exponents within "
             f"+-{MAX_INPUT_EXPONENT} (as the producer); expression profiles up to {MAX_EXPR_CHARS} characters, "
             f"{MAX_EXPR_NODES} parts and nesting depth {MAX_EXPR_DEPTH}, every exp / power argument within "
             f"+-{MAX_EXP_ARGUMENT:.0e} (natural log); composition laws up to {MAX_LAW_LATTICE_BITS:.0e} "
             f"lattice product bits or {MAX_LAW_PRODUCTS:,} interval products (x bits / 1024 above 1024 bits), "
             f"gdp.certify / gdp.optimal_mu head proofs up to {GDP_CELL_WORK_CAP} cell units (a Laplace cell "
             "at 200 bits; other profiles and higher precisions cost more) (beyond: exit 3); balls-in-bins "
             f"epochs x loss window up to {BINS_MAX_COMPOSED:,} points per direction and all polynomial products "
             f"of a certificate up to {BINS_MAX_WORK:,} coefficients, counted from T, E and the recorded grids "
             "before any product (the producer's caps; beyond: exit 2); E-epoch balls-in-bins grids keeping up to "
             "2x the degrees and 4x the reach the producer's grid rule gives the certificate's sigma, T and E "
             f"(beyond: exit 2, before any product); one-epoch grids keeping up to 2 x {BINS_ONE_EPOCH_DEGREE:,} "
             "degrees (beyond: exit 2); "
             f"event trees up to {EVENT_MAX_LEAVES} distinct kinds of step, discrete events up to "
             f"{MAX_EVENT_ATOMS:,} atoms (discrete Laplace: sensitivity + 1; discrete Gaussian: about 50 sigma + "
             "sensitivity) and delta queries (and replace-one "
             f"brackets' curves) at eps up to {REPLACE_MAX_EPS} (the producer's caps; beyond: exit 2); event-tree "
             "compositions up to 2^19 grid knots over their leaves (beyond: exit 3); PLD masses finer than "
             f"2^-{PLD_WIDE_UNIT_BITS} (deltas below about 1e-550) up to {PLD_MAX_KNOT_BIT_WORK:.0e} knots x bits^2 "
             f"per step (beyond: exit 3); PLD grids up to {PLD_MAX_GRID_WORK:.2g} knots x bits x log2 steps x sides "
             "for one query, priced before each grid, plus the transforms of a Fourier power that declines "
             f"and the exact products past the grid's price, {PLD_PRODUCT_BITS_PER_UNIT} bits a unit, and "
             f"{REPLACE_MAX_WORK:.2g} for all the queries of one replace-one bracket; a calibrate.bracket's "
             f"curves up to {CALIBRATE_MAX_WORK:.2g} in all, each discretisation charged again x ({CALIBRATE_KNOT_WEIGHT} - log2 steps), "
             f"its products at {CALIBRATE_PRODUCT_BITS_PER_UNIT} bits a unit (beyond: exit 3)")

# the producer's one number grammar (ASCII digits; a fraction's denominator unsigned)
_NUMBER, _FRACTION = DECIMAL, FRACTION
_EXPONENT = re.compile(r"[eE]([-+]?\d+)$")


def check_number_text(text: str, where: str) -> None:
    """Refuse (exit 2) a number string beyond the producer's caps; other strings pass."""
    if _FRACTION.fullmatch(text):
        if len(text) > MAX_NUMBER_CHARS:
            raise MalformedCertificate(f"{where}: a number longer than {MAX_NUMBER_CHARS} characters")
        if int(text.split("/")[1]) == 0:
            raise MalformedCertificate(f"{where}={text[:40]!r}: division by zero")
        return
    if not _NUMBER.fullmatch(text):
        return
    if len(text) > MAX_NUMBER_CHARS:
        raise MalformedCertificate(f"{where}: a number longer than {MAX_NUMBER_CHARS} characters")
    m = _EXPONENT.search(text)
    if m and (len(m.group(1)) > 8 or abs(int(m.group(1))) > MAX_INPUT_EXPONENT):
        raise MalformedCertificate(f"{where}={text[:40]!r}: decimal exponent beyond +-{MAX_INPUT_EXPONENT} "
                                   "(the producer's cap)")


def _walk_numbers(obj: Any, where: str) -> None:
    if isinstance(obj, str):
        if where.endswith((".profile", "sensitivity_convention", ".input", "sha256", "steps_rule")):
            return
        for i, part in enumerate(obj.split(",") if "," in obj and len(obj) < 4 * MAX_NUMBER_CHARS else [obj]):
            check_number_text(part.strip(), where)
    elif isinstance(obj, bool):
        return
    elif isinstance(obj, int):
        if abs(obj) > 10**12:
            raise MalformedCertificate(f"{where}={str(obj)[:40]}: a count beyond 1e12")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _walk_numbers(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _walk_numbers(v, f"{where}[{i}]")


def check_expression(text: Any, where: str = "inputs.profile") -> ast.AST:
    """The parsed expression profile, after the size and depth caps (exit 2)."""
    if not isinstance(text, str) or not text.strip():
        raise MalformedCertificate(f"{where} must be an expression string")
    if len(text) > MAX_EXPR_CHARS:
        raise MalformedCertificate(f"{where}: more than {MAX_EXPR_CHARS} characters")
    if text.count("(") > MAX_EXPR_DEPTH or text.count("**") > MAX_EXPR_DEPTH:
        raise MalformedCertificate(f"{where}: nested deeper than {MAX_EXPR_DEPTH}")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        raise MalformedCertificate(f"{where} is not an expression") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_EXPR_NODES:
        raise MalformedCertificate(f"{where}: more than {MAX_EXPR_NODES} parts")
    if _depth(tree.body) > MAX_EXPR_DEPTH:
        raise MalformedCertificate(f"{where}: nested deeper than {MAX_EXPR_DEPTH}")
    _grammar(tree.body, text.strip(), where)
    if not any(isinstance(n, ast.Name) and n.id == "eps" for n in nodes):
        raise MalformedCertificate(f"{where} does not use eps (the producer refuses such a profile)")
    return tree


def _grammar(node: ast.AST, src: str, where: str) -> None:
    """Refuse (exit 2) what the producer's grammar refuses (:data:`EXPR_ALLOWED`), before any
    evaluation: a certificate outside it is malformed, not false. Numbers are the decimal
    text written (``1_0`` or ``0x10`` are Python's, not the producer's)."""
    def bad(what: str) -> MalformedCertificate:
        return MalformedCertificate(f"{where} uses {what}, which is not allowed (allowed: {EXPR_ALLOWED})")

    if isinstance(node, ast.Constant):
        seg = ast.get_source_segment(src, node) or ""
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)) or not _NUMBER.fullmatch(seg) \
                or not seg.isascii():
            raise bad(repr(seg or node.value)[:40])
        check_number_text(seg, where)
    elif isinstance(node, ast.Name):
        if node.id not in EXPR_NAMES:
            raise bad(f"the name {node.id[:40]!r}")
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        _grammar(node.operand, src, where)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        _grammar(node.left, src, where)
        _grammar(node.right, src, where)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in EXPR_FUNCS:
        if node.keywords or len(node.args) != EXPR_FUNCS[node.func.id]:
            raise bad(f"{node.func.id} with {len(node.args)} argument(s) or keywords (it takes "
                      f"{EXPR_FUNCS[node.func.id]})")
        for a in node.args:
            _grammar(a, src, where)
    elif isinstance(node, (ast.BinOp, ast.UnaryOp)):
        raise bad(f"the operator {type(node.op).__name__}")
    else:
        raise bad(type(node).__name__ if not isinstance(node, ast.Call) else "that function")


def _depth(node: ast.AST) -> int:
    kids = list(ast.iter_child_nodes(node))
    return 1 + (max(_depth(k) for k in kids) if kids else 0)


def guard_exponent(t: Any, where: str = "inputs.profile") -> None:
    """Refuse (exit 2) an exp / power whose natural-log magnitude ``t`` is beyond
    :data:`MAX_EXP_ARGUMENT`: the value would have an exponent of more than
    434,000 decimal digits (no privacy profile needs one)."""
    try:
        big = not abs(t) <= MAX_EXP_ARGUMENT
    except TypeError:  # an interval: its ends
        big = not (abs(t.a) <= MAX_EXP_ARGUMENT and abs(t.b) <= MAX_EXP_ARGUMENT)
    if big:
        raise MalformedCertificate(f"{where}: an exponential or power of magnitude beyond e^{MAX_EXP_ARGUMENT:.0e} "
                                   "(the cap on expression profiles)")


def check_work(quantity: str, claim: Mapping[str, Any], inputs: Mapping[str, Any],
               result: Mapping[str, Any]) -> None:
    """Bound the work a certificate implies, before any re-derivation."""
    _walk_numbers(inputs, "inputs")
    if "profile" in inputs:
        check_expression(inputs["profile"])
