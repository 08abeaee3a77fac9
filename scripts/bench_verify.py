"""Verify time against compute time, for every committed certificate and one freshly
written certificate of each kind the CLI writes.

    PYTHONPATH=. python scripts/bench_verify.py [--only SUBSTRING ...] [--no-compute]
                                                [--no-fresh] [--heavy] [--json FILE] [--stall] [--quick]
                                                [--bytecode]

Each command runs in its own process (``python -m dpverify ...``), as a user runs it:
the times include the interpreter start and imports on both sides. Per row it prints
the compute command's time where the command is known (the claim set: ``reproduce
--only ID``; the oracle battery: ``oracle --battery``; format-2 fixtures and fresh
certificates: the fixture's command line), the verify time, the ratio verify / compute
and ``os.getloadavg()`` at the end of the row. Times are CPU seconds of the child
(user + system, from ``getrusage``), which a loaded machine inflates far less than
wall time; wall seconds are printed too. A ratio above 1 is a row where the re-check
is slower than the computation. Rows that fail to verify are marked with their exit
code. No assertion: this script reports, the tests decide correctness.

``--stall`` times the sampling brackets' small forged certificates that once kept verify
busy (a replace-one delta curve recorded as [0, 0]: 33-39 s; a shuffled run forged to 10^12
records: 44 s; a replace-one tree forged to two step types of 4,999,999 steps: 25 s) and the
genuine fixed-batch replace-one claim (verify 10 s against 3.3 s of compute): the forged rows
print the genuine certificate's compute time and the forgery's verify time and exit code
(1 refused, 2 beyond a cap, 3 not re-proved: each a refusal).

``--quick`` (smoke use, under a minute) runs only the fresh certificates of a few kinds
(QUICK): a PLD epsilon and delta, an events epsilon, a Balle rdp.epsilon and a calibrate
bracket.

``--bytecode`` runs the children with dpverify's bytecode cached, as an installed package runs: the
development environment sets PYTHONDONTWRITEBYTECODE=1, so that every child otherwise compiles
dpverify's sources again (about 0.1 CPU s of a verify child, more of a compute child).

``--writer-of-record`` times the compute side of a frozen certificate (format 2 and format 1) with the
code that wrote it, not today's: the last commit that changed the file, checked out in a temporary
``git worktree``. A frozen certificate keeps the grid its writer chose, which can be finer than
today's writer chooses for the same command (format 2 ``pld-claim``: 2^-14 against 2^-8), so
today's compute time is not what that certificate cost. Rows whose writer cannot run the
command print ``-``.

``--in-process`` times the re-check alone, without interpreter start and imports (which
dominate the closed-form kinds): each certificate in its own child with the re-check
modules imported, the CPU milliseconds of the first ``verify_certificate`` (cold caches)
and the mean of repeats (at least 3 and 1 s; warm caches). ``--kinds gdp.delta ...`` keeps the rows of those kinds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "scripts"))

from _bench import end, start  # noqa: E402
from tests.certificate.format2_fixtures import CLI, fill_placeholders  # noqa: E402

EXAMPLES = """examples:
  PYTHONPATH=. python scripts/bench_verify.py --quick              # five fresh kinds: under a minute
  PYTHONPATH=. python scripts/bench_verify.py                      # every committed and fresh certificate
  PYTHONPATH=. python scripts/bench_verify.py --only pld events --no-committed
  PYTHONPATH=. python scripts/bench_verify.py --in-process --kinds pld.epsilon events.epsilon"""

#: the fresh certificates of ``--quick``: one of each costly route, each a few seconds
QUICK = ("pld-epsilon", "pld-delta", "events-epsilon", "rdp-epsilon-balle-ssg", "calibrate-bracket")

#: seconds one command may take before it is stopped (reported as a timeout)
TIMEOUT = 900

#: balls-in-bins runs whose computation takes a minute or more (``--heavy``): the re-check of each
#: against its computation, at the sizes where the second route's products dominate (verify gets
#: ``--time-budget 3000`` so a loaded machine reports CPU seconds, not the budget)
HEAVY = {
    "bins-mnist-size": ["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "0.85",
                        "--dataset-size", "60000", "--batch-size", "250", "--epochs", "60", "--eps", "3"],
    "bins-T1000-E20": ["audit", "dpsgd", "--sampling", "balls-in-bins", "--noise-multiplier", "1.1",
                       "--dataset-size", "1000", "--batch-size", "1", "--epochs", "20", "--delta", "1e-5"],
    "calibrate-bins-sigma-E3": ["calibrate", "dpsgd", "--sampling", "balls-in-bins", "--target-eps", "2",
                                "--delta", "1e-5", "--dataset-size", "1000", "--batch-size", "100", "--epochs", "3",
                                "--digits", "2"],
}


#: the children's environment (None: this process's); ``--bytecode`` sets a bytecode cache
CHILD_ENV: "dict | None" = None


def bytecode_env(cache: Path) -> dict:
    """This environment with dpverify's modules compiled into ``cache`` (PYTHONPYCACHEPREFIX) and
    bytecode writing allowed, as an installed package runs (pip writes the .pyc files at install):
    with PYTHONDONTWRITEBYTECODE=1, as the development environment sets it, every child compiles
    dpverify's sources again, about 0.1 CPU s of a verify child and more of a compute child. The
    cache is filled before the first row (compileall), so that no row pays for it."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(cache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "dpverify")], cwd=ROOT, env=env,
                   stdout=subprocess.DEVNULL, check=True)
    return env


def run(argv: list[str], root: Path = ROOT) -> tuple[float, float, int]:
    """(cpu seconds, wall seconds, exit code) of ``python -m dpverify ARGV`` in a child, with the
    dpverify of ``root`` (this checkout, or a writer of record's)."""
    env = dict(CHILD_ENV if CHILD_ENV is not None else os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [env.get("PYTHONPATH")])])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        code = subprocess.run([sys.executable, "-m", "dpverify", *argv], cwd=root, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=TIMEOUT, env=env).returncode
    except subprocess.TimeoutExpired:
        code = -1
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, code


_IN_PROCESS = r"""
import json, sys, time
from dpverify.recheck.verify import verify_certificate
cert = json.load(open(sys.argv[1]))
from dpverify.recheck.verify import _load_recheckers
_load_recheckers()  # the imports are not the re-check's time
t_first = time.process_time()
try:
    verify_certificate(cert)
    code = 0
except Exception as e:  # the exit class is what the row reports
    code = type(e).__name__
first = time.process_time() - t_first
t0, n = time.process_time(), 0
while n < 3 or time.process_time() - t0 < 1.0:
    try:
        verify_certificate(cert)
    except Exception:
        pass
    n += 1
print(json.dumps({"first": 1000 * first, "ms": 1000 * (time.process_time() - t0) / n, "code": code, "n": n}))
"""


def in_process(cert: Path) -> dict:
    """Mean CPU ms of one warm ``verify_certificate`` of ``cert``, in a fresh child."""
    out = subprocess.run([sys.executable, "-c", _IN_PROCESS, str(cert)], cwd=ROOT, capture_output=True,
                         text=True, timeout=TIMEOUT)
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"first": float("nan"), "ms": float("nan"), "code": f"child failed: {out.stderr.strip()[-200:]}", "n": 0}


def in_process_main(rows: list, kinds: "list[str] | None", only: "list[str] | None") -> None:
    print(f"{'certificate':66s} {'kind':18s} {'first ms':>10s} {'warm ms':>10s}  result")
    for label, cert, _argv in rows:
        if only and not any(s in label for s in only):
            continue
        try:
            kind = json.loads(cert.read_text())["claim"]["quantity"]
        except (ValueError, KeyError, TypeError):
            continue
        if kinds and kind not in kinds:
            continue
        r = in_process(cert)
        print(f"{label:66s} {kind:18s} {r['first']:10.2f} {r['ms']:10.2f}  {r['code']}", flush=True)


def committed(tmp: Path) -> list[tuple[str, Path, "list[str] | None"]]:
    """(label, certificate, compute argv or None) of every committed certificate."""
    rows = []
    for f in sorted((ROOT / "certificates").glob("*.json")):
        rows.append((f"certificates/{f.name}", f, ["reproduce", "--only", f.stem, "--out", str(tmp / "repro")]))
    battery = ROOT / "docs" / "reports" / "oracle-battery.json"
    name = json.loads(battery.read_text())["inputs"].get("battery", "readme")
    rows.append(("docs/reports/oracle-battery.json", battery,
                 ["oracle", "--battery", name, "--certificate", str(tmp / "battery.json")]))
    for f in sorted((ROOT / "tests" / "certificate" / "format2").glob("*.json")):
        argv = CLI.get(f.stem)
        rows.append((f"format2/{f.name}", f, _fill(argv, tmp) + ["--certificate", str(tmp / "f2.json")]
                     if argv else None))
    claim_ids = {f.stem for f in (ROOT / "certificates").glob("*.json")}
    for f in sorted((ROOT / "tests" / "certificate" / "format1").glob("*.json")):
        stem = f.stem.removeprefix("main-committed-")
        argv = ["reproduce", "--only", stem, "--out", str(tmp / "repro")] if stem in claim_ids else None
        rows.append((f"format1/{f.name}", f, argv))
    return rows


class WritersOfRecord:
    """The code that wrote each frozen certificate: the last commit that changed the file, checked
    out once per commit (``git worktree add --detach``) under a temporary folder and removed at
    the end."""

    def __init__(self, tmp: Path) -> None:
        self.tmp, self.roots = tmp, {}  # commit -> checkout (None where it could not be made)

    def root(self, cert: Path) -> "Path | None":
        rel = cert.resolve().relative_to(ROOT)
        if rel.parts[:2] != ("tests", "certificate"):
            return ROOT  # the claim set and the battery: today's reproduce / oracle is their writer
        out = subprocess.run(["git", "log", "-1", "--format=%H", "--", str(rel)], cwd=ROOT, capture_output=True,
                             text=True)
        commit = out.stdout.strip()
        if out.returncode or not commit:
            return None
        if commit not in self.roots:
            where = self.tmp / f"writer-{commit[:12]}"
            made = subprocess.run(["git", "worktree", "add", "--detach", "-q", str(where), commit], cwd=ROOT,
                                  capture_output=True)
            self.roots[commit] = where if made.returncode == 0 else None
        return self.roots[commit]

    def close(self) -> None:
        for where in self.roots.values():
            if where is not None:
                subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=ROOT, capture_output=True)


def _kind(cert: Path) -> "str | None":
    """The certificate's claim.quantity (None when it cannot be read)."""
    try:
        return json.loads(cert.read_text())["claim"]["quantity"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _fill(argv: "list[str] | None", tmp: Path) -> list[str]:
    """The fixture's command line with its placeholders filled as the fixtures' own
    writer fills them (an unfilled ``{docs}`` or ``{legacy}`` path made the compute side an
    exit 2)."""
    return fill_placeholders(argv or [], tmp)


def _stall_forgeries() -> list[tuple[str, list[str], "dict | None", "callable | None"]]:
    """(label, compute argv with {tree} placeholders, events file or None, forgery or None)."""
    def at(*path_value):
        *path, value = path_value

        def f(c: dict) -> None:
            d = c
            for k in path[:-1]:
                d = d[k]
            d[path[-1]] = value
        return f

    poisson = lambda z, n: {"type": "self_composed", "count": n, "event": {  # noqa: E731
        "type": "poisson_sampled", "sampling_probability": "0.01", "event": {"type": "gaussian", "noise_multiplier": z}}}
    rtree = {"neighboring": "replace-one", "event": {"type": "composed", "events": [poisson("1", 100)]}}
    wor = {"type": "sampled_without_replacement", "source_dataset_size": 60000, "sample_size": 256,
           "event": {"type": "gaussian", "noise_multiplier": "1.1"}}
    wtree = {"neighboring": "replace-one", "event": {"type": "self_composed", "count": 1000, "event": wor}}
    rep = ["audit", "dpsgd", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "100",
           "--neighboring", "replace-one"]
    shuf = ["audit", "dpsgd", "--sampling", "shuffle", "--noise-multiplier", "1.1", "--dataset-size", "60000",
            "--batch-size", "256", "--epochs", "5", "--delta", "1e-5"]

    def two(c: dict) -> None:
        c["inputs"]["event"]["events"] = [poisson("1", 4_999_999), poisson("3/2", 4_999_999)]

    return [
        ("stall/replace-delta-upper-[0,0]", rep + ["--eps", "1"], None, at("result", "upper", {"lo": "0", "hi": "0"})),
        ("stall/replace-delta-lower-[0,0]", rep + ["--eps", "1"], None, at("result", "lower", {"lo": "0", "hi": "0"})),
        ("stall/replace-eps-upper-[0,0]", rep + ["--delta", "1e-5"], None, at("result", "upper", {"lo": "0", "hi": "0"})),
        ("stall/replace-eps-hi-1e6", rep + ["--delta", "1e-5"], None, at("result", "enclosure", "hi", "1000000")),
        ("stall/replace-tree-two-x-4999999", ["audit", "dpsgd", "--events", "{tree}", "--delta", "1e-5"], rtree, two),
        ("stall/shuffle-n-1e12", shuf, None, at("inputs", "dataset_size", 10**12)),
        ("stall/shuffle-n-1e12-b-1", shuf, None,
         lambda c: c["inputs"].update(dataset_size=10**12, batch_size=1)),
        ("stall/wor-replace-claim (genuine)", ["audit", "dpsgd", "--events", "{tree}", "--delta", "1e-5",
                                               "--claimed-eps", "3"], wtree, None),
    ]


def stall_main(tmp: Path) -> None:
    from tests.certs import reseal

    print(f"{'certificate':58s} {'compute':>9s} {'verify':>9s} {'ratio':>7s}  exit")
    for label, argv, tree, forge in _stall_forgeries():
        path = tmp / "stall-tree.json"
        if tree is not None:
            path.write_text(json.dumps(tree))
        cert = tmp / "stall.json"
        cert.unlink(missing_ok=True)
        c_cpu, _, _ = run([a.replace("{tree}", str(path)) for a in argv] + ["--certificate", str(cert)])
        if not cert.exists():
            print(f"{label:58s} compute wrote nothing")
            continue
        if forge is not None:
            c = json.loads(cert.read_text())
            forge(c)
            cert.write_text(json.dumps(reseal(c)))
        v_cpu, _, vcode = run(["verify", str(cert)])
        ratio = f"{v_cpu / c_cpu:7.2f}" if forge is None and c_cpu else "      -"
        print(f"{label:58s} {c_cpu:9.2f} {v_cpu:9.2f} {ratio}  {vcode}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=EXAMPLES,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", default=None, help="rows whose label contains one of these")
    ap.add_argument("--no-compute", action="store_true", help="time verify only")
    ap.add_argument("--no-fresh", action="store_true", help="skip the freshly written certificates")
    ap.add_argument("--no-committed", action="store_true", help="skip the committed certificates")
    ap.add_argument("--json", type=Path, default=None, help="write the rows as JSON")
    ap.add_argument("--heavy", action="store_true",
                    help="add the minute-long balls-in-bins runs (MNIST size, T = 1000 over 20 epochs, a calibration)")
    ap.add_argument("--in-process", action="store_true",
                    help="time the warm re-check alone (committed certificates), in milliseconds")
    ap.add_argument("--kinds", nargs="+", default=None, help="with --in-process: only these claim kinds")
    ap.add_argument("--stall", action="store_true", help="time the forged certificates that once stalled verify")
    ap.add_argument("--quick", action="store_true",
                    help=f"only the fresh certificates {', '.join(QUICK)} (under a minute; smoke use)")
    ap.add_argument("--writer-of-record", action="store_true",
                    help="time a frozen certificate's compute side with the commit that last changed it (a "
                         "temporary git worktree), not today's writer")
    ap.add_argument("--bytecode", action="store_true",
                    help="children run with dpverify's bytecode cached (PYTHONPYCACHEPREFIX), as an installed "
                         "package runs; without it, PYTHONDONTWRITEBYTECODE=1 makes every child recompile")
    args = ap.parse_args()
    global CHILD_ENV
    cache = tempfile.TemporaryDirectory() if args.bytecode else None
    if cache is not None:
        CHILD_ENV = bytecode_env(Path(cache.name))
    exact = {f"fresh/{name}" for name in QUICK} if args.quick else None
    if args.quick:
        args.no_committed = True
    if args.stall:
        start("bench_verify --stall: forged certificates that once kept verify busy",
              "times are CPU seconds of each child (user + system, getrusage)")
        with tempfile.TemporaryDirectory() as d:
            stall_main(Path(d))
        end()
        return 0
    if args.in_process:
        start("bench_verify --in-process: the re-check alone, in a child per certificate",
              "times are CPU milliseconds (time.process_time in the child, imports excluded)")
        with tempfile.TemporaryDirectory() as d:
            in_process_main(committed(Path(d)), args.kinds, args.only)
        end()
        return 0
    out = []
    start("bench_verify: verify against compute, each command in its own child (`python -m dpverify ...`)",
          "times are CPU seconds of each child (user + system, getrusage; interpreter start and imports "
          "included); wall seconds are printed beside them")
    print(f"{'certificate':58s} {'compute':>9s} {'verify':>9s} {'ratio':>7s} {'wall c/v':>13s}  load")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        writers = WritersOfRecord(tmp) if args.writer_of_record else None
        plan = []
        if not args.no_committed:
            plan += [(label, cert, argv, False) for label, cert, argv in committed(tmp)]
        if not args.no_fresh:
            for name, argv in CLI.items():
                plan.append((f"fresh/{name}", tmp / f"fresh-{name}.json",
                             _fill(argv, tmp) + ["--certificate", str(tmp / f"fresh-{name}.json")], True))
        if args.heavy:
            for name, argv in HEAVY.items():
                plan.append((f"heavy/{name}", tmp / f"heavy-{name}.json",
                             argv + ["--time-budget", "3000", "--certificate", str(tmp / f"heavy-{name}.json")], True))
        for label, cert, argv, fresh in plan:
            if args.only and not any(s in label for s in args.only):
                continue
            if exact is not None and label not in exact:
                continue
            c_cpu = c_wall = None
            note = ""
            root = ROOT if writers is None or fresh else writers.root(cert)
            if root is None:
                note += " (no writer of record)"
            if argv is not None and root is not None and (fresh or not args.no_compute):
                c_cpu, c_wall, code = run(argv, root)
                if code not in (0, 1, 3):
                    note += f" compute exit {code}"
                    if root != ROOT:  # an older writer that cannot run the command has no time to show
                        c_cpu = c_wall = None
            if not cert.exists():
                print(f"{label:58s} compute wrote nothing{note}")
                continue
            v_cpu, v_wall, vcode = run(["verify", *(["--time-budget", "3000"] if label.startswith("heavy/") else []),
                                        str(cert)])
            if vcode != 0:
                note += f" VERIFY EXIT {vcode}"
            ratio = f"{v_cpu / c_cpu:7.2f}" if c_cpu else "      -"
            cs = f"{c_cpu:9.2f}" if c_cpu is not None else "        -"
            cw = f"{c_wall:.1f}" if c_wall is not None else "-"
            load = os.getloadavg()
            print(f"{label:58s} {cs} {v_cpu:9.2f} {ratio} {cw:>6s}/{v_wall:<6.1f}  "
                  f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}{note}", flush=True)
            out.append({"certificate": label, "kind": _kind(cert), "compute_cpu": c_cpu, "compute_wall": c_wall,
                        "verify_cpu": v_cpu, "verify_wall": v_wall, "verify_exit": vcode, "load": load})
        if writers is not None:
            writers.close()
    slower = [r for r in out if r["compute_cpu"] and r["verify_cpu"] > r["compute_cpu"]]
    print(f"\n{len(out)} rows; verify slower than compute (CPU) on {len(slower)}"
          + (": " + ", ".join(r["certificate"] for r in slower) if slower else ""))
    if not args.no_fresh and not args.only and not args.quick:
        # every kind has a row of the kind table; the ones no CLI command writes come from
        # ``reproduce`` (the claim set) and are timed by the committed rows
        from dpverify.recheck.kinds import KINDS

        fresh = {r["kind"] for r in out if r["certificate"].startswith("fresh/")}
        print("kinds without a fresh CLI row (written by reproduce only, timed by the committed rows): "
              + (", ".join(sorted(set(KINDS) - fresh)) or "none"))
    end()
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
