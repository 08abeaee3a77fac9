"""The regression oracle: one certified computation per distinct configuration,
every reported epsilon classified against it.

The certified enclosure of epsilon(delta) comes from the PLD accountant
(:func:`dpverify.pld.dpsgd_epsilon`, add-remove relation, both directions),
so "unsafe" is a proof that the mechanism is not (reported, delta)-DP under
that relation, and "loose" a proof that a smaller epsilon is valid. Each row is
classified on the decimals it records (:mod:`.classify`; the rule of
docs/reference/certificates.md, "Oracle rows", which verify re-derives).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from ..ball import exact_str, parse_exact
from ..limits import DEFAULT_TIME_BUDGET_SECONDS
from ..pld import dpsgd as S
from ..verdict import Enclosure
from . import accountants as A
from .classify import classify
from .rows import Config, Row, check_configurations

__all__ = ["Battery", "BATTERIES", "OracleResult", "VERDICTS", "classify_report", "report_row", "run_rows",
           "run_battery", "DEFAULT_TOLERANCE"]

DEFAULT_TOLERANCE = Fraction(1, 100)


@dataclass(frozen=True)
class Battery:
    name: str
    description: str
    configs: Sequence[tuple[Config, str]]  # (configuration, where it comes from)


def _cfg(sigma: str, q: str, T: int, delta: str) -> Config:
    return Config(
        "subsampled-gaussian" if Fraction(q) < 1 else "gaussian",
        Fraction(sigma),
        Fraction(q),
        T,
        Fraction(delta),
    )


BATTERIES: dict[str, Battery] = {
    b.name: b
    for b in (
        Battery(
            "readme",
            "DP-SGD configurations from dpverify's README/issues and public bug reports",
            [
                (_cfg("1", "0.01", 1000, "1e-5"), "README's first example: the four accountants disagree"),
                (_cfg("1.1", "0.01", 10000, "1e-5"), "dpverify mission statement (auditor's example)"),
                (_cfg("3", "0.2", 50, "1/48000"), "Opacus #643 (GDP 1.83 vs RDP 2.16)"),
                (_cfg("4", "0.00033", 10000, "1.1e-18"), "prv_accountant #17 (negative lower bound at tiny delta)"),
                (_cfg("0.8", "0.125", 1000, "1e-6"), "prv_accountant #36 (crash at large epsilon)"),
                (_cfg("3", "4096/50000", 2500, "1e-5"), "a large-batch benchmark case (CIFAR-10 size)"),
            ],
        ),
        Battery(
            "smoke",
            "one fast configuration (tests)",
            [(_cfg("1", "0.01", 100, "1e-5"), "smoke test")],
        ),
    )
}


@dataclass
class OracleResult:
    tolerance: Fraction
    digits: int
    certified: dict[tuple, Enclosure] = field(default_factory=dict)
    seconds: dict[tuple, float] = field(default_factory=dict)
    configs: dict[tuple, tuple[Config, str]] = field(default_factory=dict)
    #: the grid exponent m of each configuration's PLD answer (h = 2^-m; 0: no grid), which the
    #: certificate does not record: the writer prices verify's re-derivation on it (:meth:`grids`)
    grid_exponents: dict[tuple, int] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def any_unsafe(self) -> bool:
        return any(r["verdict"] == "unsafe" for r in self.rows)

    def grids(self) -> list[int]:
        """The producer's grid exponent per configuration, in the order of :meth:`configs_json`
        (for :func:`dpverify.certificate.writer.unverifiable`)."""
        return [self.grid_exponents.get(key, 0) for key in self.configs]

    def configs_json(self) -> list[dict[str, Any]]:
        out = []
        for key, (cfg, source) in self.configs.items():
            out.append({**cfg.to_json(), "source": source, "certified": self.certified[key].to_json()})
        return out


#: a producer's ``check_grid`` per configuration (:func:`dpverify.cli._common.grid_check`), given the
#: inputs of the pld.epsilon query that re-derives it (:func:`priced_inputs`); None: nothing priced
CheckGrid = Optional[Callable[[Mapping[str, Any]], Any]]


def priced_inputs(cfg: Config) -> dict[str, Any]:
    """The inputs of the pld.epsilon query whose re-derivation verify makes for ``cfg``
    (:func:`dpverify.recheck.oracle.config_query`), on which the writer prices an oracle certificate
    (:func:`dpverify.certificate.writer.unverifiable` with :meth:`OracleResult.grids`): the same
    query, priced before each grid level of the configuration's run (issue 22)."""
    from ..recheck.oracle import config_query

    return config_query({**cfg.to_json(), "certified": None})[0]


def _certify(result: OracleResult, cfg: Config, source: str, time_budget: float,
             progress: Optional[Callable[[str], None]], check_grid: CheckGrid = None) -> Enclosure:
    key = cfg.key()
    if key not in result.certified:
        if progress:
            progress(f"certifying {cfg.describe()}")
        # DP-SGD's epsilon(delta) (S.dpsgd_epsilon's query: one GaussianSteps block, add-remove), each
        # level priced first where a certificate is asked for
        ans = S.epsilon([S.GaussianSteps.of(cfg.noise_multiplier, cfg.sampling_rate, cfg.steps)], cfg.delta,
                        digits=result.digits, time_budget=time_budget,
                        check_grid=None if check_grid is None else check_grid(priced_inputs(cfg)))
        result.certified[key] = ans.enclosure
        result.seconds[key] = ans.seconds
        result.grid_exponents[key] = ans.grid_exponent
        result.configs[key] = (cfg, source)
    return result.certified[key]


#: verdicts of a row: the first three compare a number with the certified
#: enclosure; "returned-inf" (a true but vacuous guarantee) and "crashed"
#: (an exception or NaN) say the accountant gave no number to compare
VERDICTS = ("consistent", "unsafe", "loose", "returned-inf", "crashed")


def classify_report(accountant: str, cfg: Config, certified: Enclosure, reported: Optional[Fraction],
                    reported_text: str, tolerance: Fraction, error: str = "",
                    meta: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """One oracle row (JSON): the report, the certified enclosure, the verdict.
    ``meta`` (accountant version and settings) is recorded as given."""
    row: dict[str, Any] = {"accountant": accountant}
    if meta:
        row.update(meta)
    row.update({
        "configuration": cfg.to_json(),
        "reported": reported_text,
        "certified": certified.to_json(),
    })
    if reported is None and reported_text == "inf":
        row.update(verdict="returned-inf", excess=None)
        return row
    if reported is None:
        row.update(verdict="crashed", excess=None, error=error)
        return row
    if parse_exact(reported_text, "reported") != reported:
        # a float's repr is not its value: record the exact binary value too
        row.update(reported_exact=exact_str(reported))
    c = classify(reported, certified, tolerance)
    row.update(verdict=c.verdict, excess=c.excess)
    return row


def report_row(report: "A.Report", cfg: Config, certified: Enclosure, tolerance: Fraction) -> dict[str, Any]:
    """The row of one accountant report (built-in runner or plug-in)."""
    value = None if report.value is None else Fraction(report.value)
    meta = {"accountant_version": report.version, "accountant_settings": dict(report.settings)}
    return classify_report(report.accountant, cfg, certified, value, report.text, tolerance, report.error, meta)


def run_rows(rows: Iterable[Row], *, tolerance: Fraction = DEFAULT_TOLERANCE, digits: int = 4,
             time_budget: float = DEFAULT_TIME_BUDGET_SECONDS, progress: Optional[Callable[[str], None]] = None,
             check_grid: CheckGrid = None) -> OracleResult:
    """Classify input rows (CSV/JSON): one certified computation per configuration,
    at most MAX_ORACLE_CONFIGURATIONS of them (checked before any is computed). ``check_grid``: a
    configuration's grid levels priced before they are computed (:data:`CheckGrid`)."""
    rows = list(rows)
    check_configurations(rows)
    result = OracleResult(tolerance, digits)
    for row in rows:
        cert = _certify(result, row.config, "input", time_budget, progress, check_grid)
        result.rows.append(
            classify_report(row.accountant, row.config, cert, row.reported, row.reported_text, tolerance, row.error)
        )
    return result


def run_battery(name: str, *, accountants: Optional[Sequence[str]] = None,
                plugins: Sequence["A.Plugin"] = (),
                tolerance: Fraction = DEFAULT_TOLERANCE, digits: int = 4, time_budget: float = DEFAULT_TIME_BUDGET_SECONDS,
                progress: Optional[Callable[[str], None]] = None, check_grid: CheckGrid = None) -> OracleResult:
    """Run accountants on a named battery and classify them: the built-in
    runners named in ``accountants`` (all when None and no plug-ins are
    given, none when only plug-ins are) and every plug-in. Missing libraries
    are skipped with a note; crashes become 'crashed' rows. ``check_grid``: as :func:`run_rows`."""
    battery = BATTERIES[name]
    if accountants is not None:
        names = list(accountants)
    else:
        names = [] if plugins else list(A.RUNNERS)
    result = OracleResult(tolerance, digits)
    skipped = [n for n in names if not A.available(n)]
    for n in skipped:
        result.notes.append(f"{n}: skipped ({A.RUNNERS[n].module} is not installed)")
    for cfg, source in battery.configs:
        cert = _certify(result, cfg, source, time_budget, progress, check_grid)
        reports: list[A.Report] = []
        for n in names:
            if n in skipped:
                continue
            if progress:
                progress(f"{n} on {cfg.describe()}")
            reports += A.run(n, cfg)
        for plugin in plugins:
            if progress:
                progress(f"{plugin.spec} on {cfg.describe()}")
            reports.append(plugin.run(cfg))
        result.rows += [report_row(r, cfg, cert, tolerance) for r in reports]
    return result


def markdown_report(result: OracleResult, title: str) -> str:
    """A Markdown report: per configuration, the certified band and every row."""
    lines = [f"# {title}", "",
             f"Certified enclosures of epsilon(delta) by dpverify's PLD accountant "
             f"(add-remove relation, relative width <= 1e-{result.digits}, or up to 10 times that where the "
             f"memory budget stopped the refinement); verdicts, on the decimals the certificate records: "
             f"**unsafe** = reported below the certified lower bound (the guarantee is false), "
             f"**loose** = above the upper bound by more than {exact_str(100 * result.tolerance)}%, "
             f"consistent otherwise; **returned-inf** and **crashed**: no number to compare.", ""]
    for key, (cfg, source) in result.configs.items():
        enc = result.certified[key]
        lines += [f"## {cfg.describe()}", "", f"Source: {source}. Certified epsilon in "
                  f"{enc.short(7)} ({result.seconds.get(key, 0):.1f} s).", "",
                  "| accountant | reported | verdict | relative excess |", "|---|---|---|---|"]
        for r in result.rows:
            if r["configuration"] != cfg.to_json():
                continue
            rep = r["reported"] if r["verdict"] != "crashed" else f"crashed: {r.get('error', '')[:80]}"
            v = r["verdict"] if r["verdict"] == "consistent" else f"**{r['verdict']}**"
            name = r["accountant"] + (f" {r['accountant_version']}" if r.get("accountant_version") else "")
            lines.append(f"| {name} | {rep} | {v} | {r['excess'] or ''} |")
        lines.append("")
    if result.notes:
        lines += ["Notes:", ""] + [f"- {n}" for n in result.notes] + [""]
    return "\n".join(lines)
