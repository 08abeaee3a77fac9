"""Ready-to-paste privacy statements (Markdown, LaTeX, plain text) from a
certificate of ``audit dpsgd`` (epsilon or a claim; Poisson, shuffled or
balls-in-bins batches) or ``calibrate dpsgd``.

A statement gives: the certified guarantee (the enclosure's upper end rounded
*up*, so the printed epsilon is still proved), the neighbouring relation, the
sampling scheme, the noise multiplier and its sensitivity convention, the
steps, delta, the tool version, the certificate's digest with the command that
re-checks it, and what the guarantee does not cover.
"""

from __future__ import annotations


from decimal import ROUND_CEILING, Decimal
from typing import Any, Mapping

from .errors import InvalidParameter

__all__ = ["statement", "round_up"]

RELATIONS = {
    "add-remove": "add-or-remove-one (datasets differing by adding or removing one example)",
    "add": "add-one only",
    "remove": "remove-one only",
    "replace-one": "replace-one (substitution of one example)",
}


def round_up(text: str, digits: int = 3) -> str:
    """A decimal upper end rounded up to ``digits`` significant digits."""
    d = Decimal(text)
    if d == 0:
        return "0"
    q = Decimal(1).scaleb(d.adjusted() - digits + 1)
    return format(d.quantize(q, rounding=ROUND_CEILING).normalize(), "f")


def _facts(cert: Mapping[str, Any]) -> dict[str, Any]:
    quantity = cert.get("claim", {}).get("quantity")
    inp = cert.get("inputs", {})
    res = cert.get("result", {})
    f: dict[str, Any] = {"version": cert.get("dpverify", "?"), "digest": cert.get("digest", "?"),
                         "relation": inp.get("neighboring", "add-remove"), "delta": inp.get("delta")}
    if "events" in inp:
        raise InvalidParameter("statement", "--statement covers one DP-SGD schedule (not --events)")
    if quantity == "pld.epsilon":
        f.update(eps=round_up(res["enclosure"]["hi"]), sigma=inp["noise_multiplier"],
                 q=inp["sampling_rate"], steps=inp["steps"])
    elif quantity == "pld.claim":
        if res.get("verdict") != "holds":
            raise InvalidParameter("statement", "no statement for a claim that is not proved "
                                   f"(verdict: {res.get('verdict')})")
        f.update(eps=inp["claimed_eps"], sigma=inp["noise_multiplier"], q=inp["sampling_rate"],
                 steps=inp["steps"])
    elif quantity == "calibrate.bracket" and inp.get("template") in ("dpsgd-shuffle", "dpsgd-bins"):
        _sampled_calibration_facts(f, inp, res)
    elif quantity in ("shuffle.epsilon", "shuffle.claim"):
        if quantity == "shuffle.claim" and res.get("verdict") != "holds":
            raise InvalidParameter("statement", "no statement for a claim that is not proved "
                                   f"(verdict: {res.get('verdict')})")
        n, b, e = inp["dataset_size"], inp["batch_size"], int(inp["epochs"])
        T = -(-int(n) // int(b))
        f.update(eps=inp["claimed_eps"] if quantity == "shuffle.claim" else round_up(res["enclosure"]["hi"]),
                 sigma=inp["noise_multiplier"], steps=e * T, shuffle=T, lower=res["enclosure"]["lo"], epochs_n=e,
                 persistent=inp["sampling"] == "shuffle-persistent")
    elif quantity == "calibrate.bracket":
        safe = res["ends"]["safe"]["value"]
        par = inp["parameter"]
        vals = {"noise_multiplier": inp.get("noise_multiplier"), "sampling_rate": inp.get("sampling_rate"),
                "steps": inp.get("steps")}
        if par == "batch_size":
            vals["sampling_rate"] = f"{safe}/{inp['dataset_size']}"
        else:
            vals[par] = safe
        if inp.get("sampling") == "without-replacement":
            b = safe if par == "batch_size" else inp["batch_size"]
            vals["sampling_rate"] = f"{b}/{inp['dataset_size']}"
            f["wor_batch"] = b
        f.update(eps=inp["target_eps"], sigma=vals["noise_multiplier"], q=vals["sampling_rate"],
                 steps=vals["steps"], calibrated=par)
    elif quantity in ("bins.epsilon", "bins.claim"):
        if quantity == "bins.claim" and res.get("verdict") != "holds":
            raise InvalidParameter("statement", "no statement for a claim that is not proved "
                                   f"(verdict: {res.get('verdict')})")
        n, b, e = inp["dataset_size"], inp["batch_size"], int(inp["epochs"])
        f.update(eps=inp["claimed_eps"] if quantity == "bins.claim" else round_up(res["enclosure"]["hi"]),
                 sigma=inp["noise_multiplier"], steps=e * (n // b), bins=n // b, lower=res["enclosure"]["lo"],
                 epochs_n=e)
    else:
        raise InvalidParameter("statement", f"no privacy statement for a {quantity!r} certificate")
    for k in ("dataset_size", "batch_size", "epochs"):
        if k in inp:
            f[k] = inp[k]
    return f


def _sampled_calibration_facts(f: dict[str, Any], inp: Mapping[str, Any], res: Mapping[str, Any]) -> None:
    """Facts of a shuffled or balls-in-bins calibration: the safe end's schedule, and the
    unsafe end (a value where a concrete dataset pair is proved to fail the target)."""
    par, ends = inp["parameter"], res["ends"]
    vals = {"noise_multiplier": inp.get("noise_multiplier"), "epochs": inp.get("epochs")}
    vals[par] = str(ends["safe"]["value"])
    n, b, e = int(inp["dataset_size"]), int(inp["batch_size"]), int(vals["epochs"])
    T = -(-n // b)
    f.update(eps=inp["target_eps"], sigma=vals["noise_multiplier"], steps=e * T, calibrated=par, epochs_n=e)
    f["epochs"] = str(e)
    if "unsafe" in ends:
        f["fails_at"] = str(ends["unsafe"]["value"])
    if inp["template"] == "dpsgd-shuffle":
        f.update(shuffle=T, persistent=inp["sampling"] == "shuffle-persistent")
    else:
        f.update(bins=n // b)


def _beyond(f: Mapping[str, Any]) -> str:
    """Where a calibration's failing end holds: at it and beyond (monotone bounds)."""
    if f.get("calibrated") == "epochs":
        return f"at {f['fails_at']} epochs and more"
    return f"at noise multiplier {f['fails_at']} and below"


def _shuffle_sampling(f: Mapping[str, Any]) -> str:
    """The shuffle-and-iterate scheme in words: which permutation, which batches."""
    n, b, T = int(f["dataset_size"]), int(f["batch_size"]), int(f["shuffle"])
    last = n - (T - 1) * b
    sizes = f"{T} batches of {b} examples" + (f" (the last one {last})" if last != b else "")
    when = ("one uniformly random permutation of the {n} examples, drawn once before training and reused in "
            "every epoch (persistent shuffling)" if f.get("persistent") else
            "a new uniformly random permutation of the {n} examples at the start of every epoch (dynamic "
            "shuffling)").format(n=n)
    return (f"processes one of {sizes}, in turn; the batches are cut from {when}, so every example is in "
            "exactly one batch per epoch (shuffle-and-iterate partitions the data: it is neither Poisson "
            "sampling nor independent sampling without replacement)")


def _shuffle_proof(f: Mapping[str, Any]) -> str:
    """Which bound each end of a shuffled answer is, and what a smaller claim means."""
    rel = f["relation"]
    delta_c = "2C" if rel == "replace-one" else "C"
    if rel in ("add-remove", "add", "remove"):
        layout = (" Adding or removing an example is taken in the fixed-layout convention: the larger dataset's "
                  "batch layout is kept and the removed example leaves its slot empty (sensitivity C); a loader "
                  "that re-cuts its batches after a removal is not covered by the upper bound, and the lower bound's "
                  "dataset pair assumes the same batch sizes under both datasets.")
    elif rel == "replace-special":
        layout = " Replacement by a special example whose clipped gradient is zero has sensitivity C."
    else:
        layout = " Replacing one example changes one batch sum by at most 2C."
    scheme = ("summed over the epochs (persistent shuffling: the example sits in the same batch every epoch)"
              if f.get("persistent") else "composed over the independently shuffled epochs")
    E = f.get("epochs_n", 1)
    upper = (f"The epsilon is a certified upper bound without amplification: each example is in exactly one batch "
             f"per epoch, so an epoch is dominated by one Gaussian step of sensitivity {delta_c} and the {E} "
             f"epoch{'s' if E != 1 else ''} compose (adaptive composition of dominating pairs, Zhu, Dong and "
             f"Wang, AISTATS 2022, Thm 10), i.e. a Gaussian mechanism with mu = {delta_c[0] if delta_c == '2C' else '1'}"
             f" sqrt({E}) / sigma.{layout}")
    if "fails_at" in f:
        lower = (f" A concrete pair of datasets, read through the maximum of each epoch's batch sums (Chua et al., "
                 f"ICML 2024) and {scheme}, proves that the target fails {_beyond(f)}: the implementation's "
                 "exact calibration lies between the two.")
    elif "lower" in f:
        lower = (f" A certified lower bound, {f['lower']}, comes from a concrete pair of datasets read through the "
                 f"maximum of each epoch's batch sums (Chua et al., ICML 2024), {scheme}: the implementation's "
                 f"epsilon at this delta lies between the two bounds, and any claimed epsilon below "
                 f"{f['lower']} is false for what was run.")
    else:
        lower = ""
    return upper + lower


def statement(cert: Mapping[str, Any], fmt: str = "md") -> str:
    """The statement for ``cert`` in ``fmt`` ("md", "tex" or "txt")."""
    if fmt not in ("md", "tex", "txt"):
        raise InvalidParameter("statement", f"--statement {fmt!r}: allowed: md, tex, txt")
    f = _facts(cert)
    rel = RELATIONS.get(f["relation"], f["relation"])
    batch = f" (expected batch size {f['batch_size']} of {f['dataset_size']} examples)" if "batch_size" in f else ""
    sampling = (_shuffle_sampling(f) if "shuffle" in f else
                f"samples every example independently with probability q = {f['q']} (Poisson sampling){batch}"
                if "wor_batch" not in f and "bins" not in f else
                f"processes one of T = {f.get('bins')} batches, in turn; at the start of every epoch each of the "
                f"{f.get('dataset_size')} examples is assigned to one of the T batches uniformly at random, "
                "independently of the other examples and of the earlier epochs (balls-in-bins sampling; batch "
                f"sizes are random, {f.get('batch_size')} in expectation)"
                if "bins" in f else
                f"draws a batch of exactly {f['wor_batch']} of the {f['dataset_size']} examples uniformly at "
                "random without replacement, independently of the other steps (not one shuffle per epoch)")
    sensitivity = (f"{f['relation']} (the accounting applies sensitivity "
                   f"{'2C' if f['relation'] == 'replace-one' else 'C'})" if "shuffle" in f else
                   "add/remove of one example" if "wor_batch" not in f else
                   "add/remove of one example; under replace-one the sum's sensitivity is 2C, which the "
                   "accounting applies")
    # shuffle-and-iterate partitions the data (each example in exactly one batch per epoch): it is
    # neither Poisson sampling nor the per-step independent draws without replacement accounted here
    loader = (("a new permutation every epoch" if f.get("persistent") else "one permutation reused across "
               "epochs") + ", Poisson sampling, independent batches without replacement and balls-in-bins "
              "are different schemes with different bounds"
              if "shuffle" in f else
              "shuffling into fixed-size batches, Poisson sampling, and one balls-in-bins assignment reused "
              "across epochs are different schemes with different bounds"
              if "bins" in f else
              "shuffling into fixed-size batches partitions the data once per epoch; it is neither Poisson "
              "sampling nor independent sampling without replacement (`dpverify audit dpsgd --sampling shuffle` "
              "brackets it)"
              if "wor_batch" not in f else
              "shuffling once per epoch into disjoint batches is not independent sampling without "
              "replacement per step")
    what = {"steps": "number of steps"}.get(f.get("calibrated"), str(f.get("calibrated", "")).replace("_", " "))
    calibrated = (f" The {what} was chosen with `dpverify calibrate`, "
                  "which proved the target at this value.") if "calibrated" in f else ""
    if fmt == "tex":
        calibrated = calibrated.replace("`dpverify calibrate`", r"\texttt{dpverify calibrate}")
    eps, delta = f["eps"], f["delta"]
    lines = {
        "guarantee": (f"The training procedure satisfies ({eps}, {delta})-differential privacy under the "
                      f"{rel} relation."),
        "mechanism": (f"It runs {f['steps']} steps of DP-SGD; each step {sampling}, clips each "
                      f"example's gradient to L2 norm at most C, and adds Gaussian noise of standard "
                      f"deviation sigma * C with noise multiplier sigma = {f['sigma']} (the noise "
                      f"multiplier is the noise standard deviation divided by the L2 sensitivity C of "
                      f"the summed clipped gradients under {sensitivity}).{calibrated}"),
        "proof": ((_shuffle_proof(f) + f" Computed by dpverify {f['version']}; the "
                   if "shuffle" in f else
                   "The epsilon is a certified upper bound: the upper end, rounded up, of a certified "
                   "enclosure of the epsilon of the dominating pair that Chua et al. (AISTATS 2025) prove for one "
                   "balls-in-bins epoch"
                   + (f", composed over the {f['epochs_n']} independently assigned epochs by adaptive composition "
                      "of dominating pairs (Zhu, Dong and Wang, AISTATS 2022, Thm 10)" if f.get("epochs_n", 1) > 1
                      else "")
                   + (f"; the enclosure's lower end, {f['lower']}, is a lower bound for that pair's epsilon. "
                      if "lower" in f else
                      f"; the same pair, realised by a concrete pair of datasets, is proved to fail the target "
                      f"{_beyond(f)}. " if "fails_at" in f else ". ")
                   + f"Computed by dpverify {f['version']}; the "
                   if "bins" in f else
                   f"The epsilon is a certified upper bound (privacy-loss-distribution accounting with "
                   f"rigorous error bounds, rounded up) computed by dpverify {f['version']}; the ")
                  + f"certificate's digest is sha256 {f['digest']}, and anyone can re-check it "
                  "independently with `dpverify verify CERTIFICATE.json`."),
        "scope": ("The guarantee does not cover: gradients clipped per batch or per microbatch "
                  f"instead of per example; a data loader that does not sample as stated ({loader}); "
                  "hyperparameter tuning or any other use of the data outside these steps; "
                  "floating-point noise generation."),
    }
    if fmt == "md":
        return "**Privacy guarantee.** " + " ".join(lines.values()) + "\n"
    if fmt == "tex":
        body = " ".join(lines.values()).replace("`dpverify verify CERTIFICATE.json`",
                                                r"\texttt{dpverify verify CERTIFICATE.json}")
        body = body.replace("sigma * C", r"$\sigma C$").replace("sigma =", r"$\sigma$ =")
        body = body.replace("%", r"\%").replace("_", r"\_")
        return r"\paragraph{Privacy guarantee.} " + body + "\n"
    import textwrap

    return "\n".join(textwrap.fill(v, 88) for v in lines.values()) + "\n"


