"""ref43 P0: a genuine certificate whose enclosure narrowly missed its requested accuracy was refused.

When a static cap stops the PLD refinement with the certified width within NARROW_FACTOR of the
requested one, the producer returns that enclosure with ``result.note`` saying so (pld/refine.py);
`audit dpsgd --noise-multiplier 1.0 --sampling-rate 0.001 --steps 1000000 --eps 1 --digits 6` wrote
relative width 2.26e-6 so. Verify refused it, exit 1: "wider than its recorded accuracy 1e-6".

Here the format-2 pld.epsilon fixture (relative width 2.17e-5, written at digits 4) is restated at
digits 5: 2.17e-5 is within 10 x 1e-5, so with a note it is the shape the producer writes (exit 0),
without one it is wider than it says (exit 1), and at digits 7 (2.17e-5 > 10 x 1e-7) it is refused
with a note too. The enclosure itself is re-proved either way: width never makes it true."""

from __future__ import annotations

import json
from pathlib import Path

from dpverify.certificate.format import compute_digest
from dpverify.recheck.verify import verify_file

F2 = Path(__file__).resolve().parents[1] / "certificate" / "format2"


def _at(digits: int, note: bool, tmp: Path) -> int:
    c = json.loads((F2 / "pld-epsilon.json").read_text())
    c["inputs"]["digits"] = digits
    if note:
        c["result"]["note"] = (f"the requested relative width {10.0 ** -digits:g} was not reached (the next grid "
                               "would exceed the memory cap); this certified enclosure has relative width 2.17e-05")
    c["digest"] = compute_digest(c)
    f = tmp / f"c{digits}{int(note)}.json"
    f.write_text(json.dumps(c))
    return verify_file(f)[0]


def test_a_noted_narrow_miss_is_accepted_and_an_unnoted_one_refused(tmp_path):
    assert _at(5, True, tmp_path) == 0
    assert _at(5, False, tmp_path) == 1
    assert _at(7, True, tmp_path) == 1


def _pld_noted(note: str, tmp: Path) -> int:
    c = json.loads((F2 / "pld-epsilon.json").read_text())
    c["inputs"]["digits"] = 5  # its relative width 2.17e-5 is within 10 x 1e-5, not within 1e-5
    c["result"]["note"] = note
    c["digest"] = compute_digest(c)
    f = tmp / "noted.json"
    f.write_text(json.dumps(c))
    return verify_file(f)[0]


def test_only_the_writers_sentence_widens_the_allowance(tmp_path):
    """adv44 N1: any ``result.note``, even an empty one, bought the 10x allowance. Only the writer's
    narrow-miss sentence for these digits does (certificate.comments.narrow_note), with a stated
    width within the factor."""
    from dpverify.certificate.comments import narrow_note

    assert _pld_noted(narrow_note(1e-5, "the next grid would exceed the memory cap", 2.17e-5), tmp_path) == 0
    for note in ("", "ok", narrow_note(1e-4, "a cap", 2.17e-5), narrow_note(1e-5, "a cap", 2e-3),
                 narrow_note(1e-5, "a cap", 2.17e-5) + " (trust me)"):
        assert _pld_noted(note, tmp_path) == 1, note


def test_a_kind_whose_writer_never_notes_a_miss_gets_no_allowance(tmp_path):
    """gdp.delta (digits 15) widened by 2e-15 a side: wider than its accuracy, with or without the
    sentence (its writer never returns a narrowly missed enclosure)."""
    from fractions import Fraction

    from dpverify.certificate.comments import narrow_note

    for note in (None, "", narrow_note(1e-15, "a cap", 8e-15)):
        c = json.loads((F2 / "gdp-delta.json").read_text())
        assert c["inputs"]["digits"] == 15
        enc = c["result"]["enclosure"]
        lo, hi = Fraction(enc["lo"]) - Fraction(2, 10**15), Fraction(enc["hi"]) + Fraction(2, 10**15)
        enc["lo"], enc["hi"] = f"{float(lo):.17g}", f"{float(hi):.17g}"
        if note is not None:
            c["result"]["note"] = note
        c["digest"] = compute_digest(c)
        f = tmp_path / "g.json"
        f.write_text(json.dumps(c))
        assert verify_file(f)[0] == 1, note
