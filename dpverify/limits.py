"""Every bound on work or input size dpverify enforces, declared once, each
under a name that says what it bounds.

A limit is a promise that work is bounded before it starts (no input makes a
command run without end or exhaust memory): the check that enforces it names
the parameter and quotes the number from here, and ``--help`` and
``docs/reference/inputs.md`` read it from here. Stdlib only, imported by anything.

The independent re-check (``dpverify verify``) may import nothing of the producing
side, so the caps it shares with the producer (a certificate the producer would refuse
is exit 2 in verify too) reach it through ``certificate.format``, which re-exports them
from here; its own work caps live in ``recheck/limits.py``. Not here: the PLD accountant's
internal sizes (knots, product lengths, the Fourier power's unit exponent) are
engineering constants of that route and live beside the code they size.
"""

from __future__ import annotations

import math
from fractions import Fraction

# --------------------------------------------------------------------------- numbers in
#: characters of one input number ("0.1", "1e-5", "1/3")
MAX_NUMBER_CHARS = 1000
#: |decimal exponent| of one input number: 1e-3000 is far below any meaningful
#: delta and 1e3000 far above any meaningful epsilon; with MAX_NUMBER_CHARS it keeps
#: numerator and denominator under Python's 4,300-digit int/str conversion limit
MAX_DECIMAL_EXPONENT = 3000
#: requested relative accuracy 10^-digits: the largest digits accepted anywhere
MAX_ACCURACY_DIGITS = 300
#: `rdp epsilon --digits`: a narrower range (its order search and conversion)
MAX_RDP_EPSILON_DIGITS = 30
#: the PLD accountant's --digits (audit dpsgd, its --events, oracle): it refines a grid, not a
#: precision, so a few digits, each one costly. 0.1.0 took the same range, so verify holds its
#: certificates to it too (certificate/ranges.py)
MAX_PLD_DIGITS = 8
#: a PLD answer whose certified width is within this factor of the requested one ("narrowly
#: missed", when a static cap stops the refinement) is returned with ``result.note`` saying so;
#: verify allows that width on a certificate that carries the note
NARROW_FACTOR = 10
#: precision (bits) up to which a quantity is refined before PrecisionExhausted
DEFAULT_MAX_BITS = 1 << 16

#: the largest Gaussian noise multiplier sigma of a DP-SGD schedule or a Gaussian event the PLD
#: and shuffle routes accept: sigma^2 and 1/sigma^2 stay normal binary64 numbers, which the
#: grid plan and the shuffle bracket's float proposals use (sigma 1e3000 made the grid 2^-m
#: underflow to 0.0 after 27 s, exit 4). At 1e100 the noise is 1e100 times the sensitivity:
#: no model trains at all, and eps(delta) is 0 long before (sigma 1e6 already answers [0, 0])
MAX_NOISE_MULTIPLIER = 10**100
#: eps0 of an (eps0, delta0) guarantee a mechanism is built from (pure, approx, subsampled, GDPT's
#: 4-output mechanism of `check rr64`; Laplace's sensitivity / scale): e^-eps0 = 10^-434294 stays in
#: the printable range and e^eps0 in the second route's MPFR exponent range. Past it `dp profile
#: --mechanism approx` wrote certificates verify refused, and `check rr64` certificates whose e^eps0
#: overflowed verify (exit 3) or whose rows left the printable range (exit 2); no privacy is left
#: to state at eps0 = 1e6
MAX_EPS0 = 10**6
#: e^eps0 of a legacy `approx` step (`audit dpsgd --events` items {"mechanism": "approx", "exp_eps0": ...}), at
#: most 10^86 < e^200: eps0 within the largest eps an event tree states (format.EVENT_MAX_EPS). The second route
#: reads the step's exact masses (1 - delta0) / (1 + e^eps0) on the recorded grid: at e^eps0 = 1e300 (eps0 690) a
#: step needed 707,356 knots at 3015 bits, past its work cap (exit 3) while the producer answered in 5 CPU s; at
#: 1e86 it confirms in 25 CPU s. dpverify 0.1.0 (b158129) answered 1e300 with exit 3 (its budget) and ran past 300 s
#: at 1e100, so no format-1 certificate is known beyond the cap; no privacy is left to state at eps0 = 198
MAX_APPROX_EXP_EPS0 = 10**86
#: eps / mu of `gdp delta` (GDPT eq. 2): delta_mu(eps) = Phi(-x) - e^eps Phi(-x - mu) with x = eps/mu - mu/2
#: <= eps/mu is about phi(x) mu / x^2, so at eps / mu = 10^8 it is about 10^(-2.2e15) (mu 1, eps 1e8 answers in
#: a CPU second), and past about 6.8e8 its decimal exponent leaves the printable range 10^(+-10^17): mu 1e-400 at
#: eps 1, or mu 1 at eps 1e300, were refused only when the result was printed (exit 2) while verify read such
#: a certificate's inputs as in range (exit 1); no delta that small states anything
MAX_GDP_EPS_OVER_MU = 10**8
#: alpha * eps of `rdp to-dp --eps` (the delta a conversion gives at eps): the classic conversion's delta =
#: e^((alpha - 1)(rdp - eps)) >= e^-(alpha eps) and Balle's >= that / (e alpha) (alpha <= 1e3000: a factor
#: e^-6909 at most) stay above e^-(10^8 + 6910), inside the printable range 10^(+-10^17) and inside MPFR's
#: default exponent range (2^-(2^30), about e^-7.4e8), where verify's route evaluates them. alpha 2 at eps
#: 1e300, or alpha 1e300 at eps 1, were refused only when the result was printed (exit 2), and alpha 1e9 at
#: eps 1e6 printed a delta of 10^(-4.3e14) that verify could only enclose in [0, 2^-(2^30)] (exit 3); no
#: privacy is left to state there (the optimal conversion answers only above 2^-3999)
MAX_CONVERSION_ALPHA_EPS = 10**8

# --------------------------------------------------------------------------- input files
#: bytes of one input file (grid, events, mechanisms, oracle rows), refused before reading
MAX_INPUT_FILE_BYTES = 16 * 1024 * 1024
#: nesting depth of a JSON input file (no dpverify input needs more than a few levels)
MAX_JSON_NESTING = 32
#: nesting depth of a DpEvent tree (compositions inside compositions)
MAX_EVENT_TREE_DEPTH = 64
#: an integer field of an event (a count, a batch or dataset size)
MAX_EVENT_INTEGER = 10**12
#: a DP-SGD dataset size N (TF-Privacy style schedules, fixed batches, shuffling)
MAX_DATASET_SIZE = 10**12
#: epochs of a shuffled schedule (each a power of the class polynomial: work bounded before it starts)
MAX_SHUFFLE_EPOCHS = 100_000
#: epochs of a balls-in-bins schedule (each epoch re-allocates independently; AFA Thm 10 composes them)
MAX_BINS_EPOCHS = 10_000
#: atoms of the finite pair of one discrete event (discrete Laplace: sensitivity + 1; discrete
#: Gaussian: about 50 sigma + sensitivity), each a certified mass discretised on every grid: a
#: discrete Laplace of sensitivity 10^6 ran 20 CPU s and 1 GB past a 5 s budget before its first grid
MAX_EVENT_ATOMS = 100_000
# the working precision the producer sizes a discrete Gaussian's window for (bits): a constant of
# discrete_event_atoms, not a limit of its own
_DGAUSS_WINDOW_BITS = 440


def discrete_event_atoms(kind: str, sensitivity: int, sigma: Fraction = Fraction(0)) -> int:
    """Atoms of the finite pair the producer lists for one discrete event (``kind``
    ``discrete_laplace``: sensitivity + 1; ``discrete_gaussian``: 2 W + sensitivity + 1, W about
    25 sigma, or MAX_EVENT_ATOMS + 1 when sigma alone is past the cap), the count compared with
    :data:`MAX_EVENT_ATOMS` by the producer (exit 2) and by ``verify`` (exit 2 on a certificate
    the producer would have refused)."""
    if kind == "discrete_laplace":
        return int(sensitivity) + 1
    s2 = Fraction(sigma) ** 2
    if s2 >= MAX_EVENT_ATOMS**2:  # W is about 25 sigma: beyond the cap (and before float(s2) overflows)
        return MAX_EVENT_ATOMS + 1
    W = int(math.ceil(math.sqrt(2 * float(s2) * _DGAUSS_WINDOW_BITS * math.log(2)))) + 1
    return 2 * W + int(sensitivity) + 1

# --------------------------------------------------------------------------- time
#: the default time budget of a certified query (seconds)
DEFAULT_TIME_BUDGET_SECONDS = 600.0
#: the longest time budget accepted (seconds): a week. A budget is a promise to stop.
MAX_TIME_BUDGET_SECONDS = 7 * 24 * 3600
#: the shortest time budget accepted (seconds), as text: 5e-324 reads as the least positive double,
#: the budget that runs out at once; a shorter one (1e-400) would round to 0 s, no budget, and is
#: refused naming the range instead of being moved up to the least double (issue 22)
MIN_TIME_BUDGET_TEXT = "5e-324"
#: the range of a time budget, as every message and --help states it
TIME_BUDGET_RANGE = f"[{MIN_TIME_BUDGET_TEXT}, {MAX_TIME_BUDGET_SECONDS}]"
#: ``afford_length`` / ``float_points``: a grid length up to which an answer is refined past the
#: width asked; 2^40 points (terabytes) is beyond any grid the memory budget lets a run build
MAX_AFFORD_LENGTH = 1 << 40

# --------------------------------------------------------------------------- counts of steps
#: DP-SGD steps, or repetitions of an event, in one accounting query (the composed
#: loss range grows like T; 10^7 steps is far beyond any training run, 10^9 would
#: exhaust memory)
MAX_STEPS = 10**7
#: compositions of one Renyi curve (RDP composes by addition, so the count is cheap)
MAX_RDP_COMPOSITIONS = 10**12
#: mechanisms in one tight (eps, delta) composition, repetitions included (LT Thm 4.6)
MAX_COMPOSED_MECHANISMS = 10_000_000
#: mechanisms of the ungrouped LT Thm 4.6 recursion (cross-checks only: one step each)
MAX_UNGROUPED_MECHANISMS = 5000

# --------------------------------------------------------------------------- table sizes
#: lattice points of the shift distribution of an exact composition (beyond it:
#: grid rounding, or exit 2 with --exact)
MAX_LATTICE_SUPPORT = 400_000
#: lattice points when dpverify picks the grid itself: the arb_poly product and its
#: prefix sums stay at a few seconds
AUTO_GRID_LATTICE = 1 << 16
#: the integer Renyi order q at which lt-eq21 (finite.identity) is checked in exact rationals: each
#: term p^q / q^(q-1) has q times the pmf's bits, so the work grows like q^2 per outcome; verify
#: answered exit 3 past it while the producer had no cap
MAX_IDENTITY_ORDER = 10**4
#: n of a finite mechanism enumerated exhaustively over its 2^n events
MAX_ENUMERATION_EXPONENT = 20
#: distinct configurations of one `oracle --input` file: each is one certified PLD
#: computation of up to --time-budget seconds, so the run is bounded by this many
#: budgets before it starts (more: `dpverify sweep` with the oracle task, cached)
MAX_ORACLE_CONFIGURATIONS = 100
#: configurations of one sweep grid (ranges can be huge by accident)
MAX_SWEEP_CONFIGURATIONS = 100_000
#: work of one grid level of the informational eps(delta) line beside a decided (claimed_eps, delta)
#: claim of `audit dpsgd`, in points x (2K + 32) for a unit 2^-K (the cost model of pld.refine): a
#: static cap, so the same inputs reach the same grid whatever the load. 3 digits of a DP-SGD schedule
#: need about 10^6 (sigma 1.1, q 0.01, 1,000 steps: 944,800) to 10^7 (sigma 1, q 0.004, 15,000 steps:
#: 8,723,496; sigma 2, q 1, 10 steps at delta 1e-300: 7,451,590), about 0.3 CPU s; beyond the cap the
#: line says "not resolved" (adv35 P1: a claim decided on the Renyi tail at delta 1e-1700 then spent the
#: whole 600 s budget on this line; its grid 2^-30 is 2.2e8, 10 CPU s per direction, and the next more)
SUPPLEMENTARY_EPS_MAX_WORK = 1 << 26

# --------------------------------------------------------------------------- Renyi orders
#: the largest order alpha of `rdp divergence` (every mechanism with a closed form)
MAX_RDP_ORDER = 10**9
#: the largest order alpha at which the subsampled-Gaussian RDP (sampling rate < 1) is evaluated:
#: an integer order is an exact sum of alpha terms, so the work grows with alpha (20,000: well under
#: a CPU second); `rdp divergence` and verify (through certificate.format) refuse a larger one, exit 2
MAX_SUBSAMPLED_ORDER = 20_000
#: the largest fractional order of the subsampled-Gaussian RDP (sampling rate < 1) of `rdp
#: divergence`: a certified quadrature whose cost grows like alpha^2 (about 1 s at 64.5, 91 s at
#: 3000.5); an integer order up to MAX_SUBSAMPLED_ORDER is the exact sum instead
MAX_SUBSAMPLED_FRACTIONAL_ORDER = 256

# --------------------------------------------------------------------------- GDP staircase
#: cells of the uniform staircase grid (GDPT Alg 2)
MAX_STAIRCASE_CELLS = 2_000_000
#: cells of the RDP infimum proof (rdp_epsilon's max_cells, default 20000): each is one certified
#: conversion over an interval of orders; 10^6 bounds a run that has no time budget
MAX_RDP_CELLS = 1_000_000
#: adaptive splits (a flat G_f, e.g. the Gaussian's, needs ~eps_h/margin cells)
MAX_STAIRCASE_SPLITS = 15_000
#: the end eps_h of the head interval [0, eps_h]
MAX_EPS_H = Fraction(10**4)
#: bisection depth of one adaptive staircase cell
MAX_STAIRCASE_DEPTH = 80
#: |x| of every exp(x) and of every b * log(a) in a power a ** b of an expression
#: profile: beyond it the value's exponent has more than 434,000 decimal digits (no
#: privacy profile needs one) and a tower such as 9**9**9**9 makes GMP abort the process
MAX_EXPR_EXP_ARGUMENT = 10**6

__all__ = [name for name in dict(globals()) if name.isupper()]
