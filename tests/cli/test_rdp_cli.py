"""The `rdp` command group's summary lines."""


def test_an_order_near_one_is_not_printed_as_one():
    """adv44 L4: alpha = 1 + 4.8e-6 was printed "alpha = 1" (six significant digits), an order the
    RDP definitions exclude; it reads "1 + 4.8e-06" now, and other orders as before."""
    from fractions import Fraction

    from dpverify.cli.rdp import _order_text

    assert _order_text(Fraction(1) + Fraction(48, 10**7)) == "1 + 4.8e-06"
    assert _order_text(Fraction(3, 2)) == "1.5" and _order_text(Fraction(100037, 100000)) == "1.00037"
