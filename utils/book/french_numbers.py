"""How the French edition writes one number, a glued value: « 14 672 », « 0,841 », « −0,5 »,
« 3,2 × 10¹⁴ », a range « 0,55 à 1,86 » (the build adds « de »: ``french_range``).

Split from ``translations.py`` (which re-exports every name here) so that ``french_outputs.py``,
which ``translations.py`` imports, can use these rules without an import cycle. It imports
nothing of the book's own.
"""

from __future__ import annotations

import re

NBSP, NNBSP = "\u00a0", "\u202f"
#: The minus sign of French typography (a glued negative number: ``−0,5``, never ``-0,5``).
MINUS = "\u2212"
SUPERSCRIPTS = str.maketrans("0123456789-+", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺")
FROM_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")


def french_scientific(mantissa: str, exponent: str) -> str:
    """``3.24``, ``+14`` -> ``3,24 × 10¹⁴`` (no-break spaces around ×); a mantissa of 1 is left out
    (``1``, ``-05`` -> ``10⁻⁵``)."""
    power = "10" + str(int(exponent)).translate(SUPERSCRIPTS)
    return power if mantissa == "1" else f"{mantissa.replace('.', ',')}{NBSP}×{NBSP}{power}"


def french_number(text: str) -> str | None:
    """``text`` written the French way if it is one number (a glued value), else None:
    ``14,672`` -> ``14 672`` (narrow no-break spaces), ``0.841`` -> ``0,841``, ``26.2%`` ->
    ``26,2 %``, ``3.24e14`` and ``3.24 × 10¹⁴`` -> ``3,24 × 10¹⁴`` (no-break spaces), ``1e-05`` -> ``10⁻⁵``;
    a negative number takes the minus sign U+2212, as French typography writes it (``-0.5`` -> ``−0,5``)."""
    text = text.strip()
    m = re.fullmatch(r"([-\u2212+]?)(\d+(?:\.\d+)?)[ \u00a0\u202f]?×[ \u00a0\u202f]?10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)", text)
    if m:
        return (MINUS if m.group(1) == "-" else m.group(1)) + french_scientific(
            m.group(2), m.group(3).translate(FROM_SUPERSCRIPTS))
    m = re.fullmatch(r"([-\u2212+]?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?([eE][-+]?\d+)?(%?)", text)
    if not m:
        return None
    sign, whole, frac, exp, pct = m.groups()
    sign = MINUS if sign in ("-", MINUS) else sign
    if exp:
        return sign + french_scientific(whole + ("." + frac if frac else ""), exp[1:]) + (NNBSP + "%" if pct else "")
    out = sign + whole.replace(",", NNBSP) + ("," + frac if frac else "")
    return out + (NNBSP + "%" if pct else "")


def french_glued(text: str) -> str | None:
    """A glued value written the French way if it is a number, a range of two numbers
    (``0.46-0.49`` and ``0.46 to 0.49`` -> ``0,46 à 0,49``: the build adds the « de » of
    « de 0,46 à 0,49 » where the sentence lacks it, ``french_range``), a bracketed list of numbers
    (``[2.0093, 1.3302]`` -> ``[2,0093 ; 1,3302]``), a difference with its interval
    (``+1.53 [-0.58, +2.53]`` -> ``+1,53 [−0,58 ; +2,53]``) or a bound (``1.4e-06 < 1e-05`` ->
    ``1,4 × 10⁻⁶ < 10⁻⁵``), else None (words: see ``glue.po``). Negative numbers take U+2212."""
    single = french_number(text)
    if single is not None:
        return single
    m = re.fullmatch(r"([-+]?[^-\s]+)-([-+]?[^-\s]+)", text.strip())  # a range: 9-11, 0.46-0.49
    if m and french_number(m.group(1)) is not None and french_number(m.group(2)) is not None:
        return f"{french_number(m.group(1))} à {french_number(m.group(2))}"
    m = re.fullmatch(r"\[([^\[\]]*)\]", text.strip())
    if m:
        items = [french_number(x) for x in m.group(1).split(",")]
        if items and all(items):
            return "[" + (NNBSP + "; ").join(items) + "]"
    m = re.fullmatch(r"(\S+) (\[[^\[\]]*\])", text.strip())  # a difference and its interval: +1.53 [+0.58, +2.53]
    if m and french_number(m.group(1)) is not None and french_glued(m.group(2)) is not None:
        return f"{french_number(m.group(1))} {french_glued(m.group(2))}"
    m = re.fullmatch(r"(\S+) to (\S+)", text.strip())  # an interval: 0.55 to 1.86
    if m and french_number(m.group(1)) is not None and french_number(m.group(2)) is not None:
        return f"{french_number(m.group(1))} à {french_number(m.group(2))}"
    m = re.fullmatch(r"(\S+) ([<>≤≥]) (\S+)", text.strip())
    if m and french_number(m.group(1)) is not None and french_number(m.group(3)) is not None:
        return f"{french_number(m.group(1))}{NBSP}{m.group(2)} {french_number(m.group(3))}"
    return None


_RANGE = re.compile(r"[-+\u2212]?\d[\d\u202f,]*(?:[\u202f\u00a0]%)? à [-+\u2212]?\d[\d\u202f,]*(?:[\u202f\u00a0]%)?")
#: What may come just before « X à Y » so that the range reads « de X à Y »: the « de » itself (or
#: « d’ »), « entre » is not one (« entre X et Y » is another construction, not used for glued ranges).
_RANGE_OPENED = re.compile(r"(?:\bde|\bd[’'])\s*$", re.I)


def is_range(french: str) -> bool:
    """Whether a glued value written the French way (``french_glued``) is a range « X à Y »."""
    return _RANGE.fullmatch(french.strip()) is not None


def french_range(french: str, before: str) -> str:
    """The range « X à Y » of a glued value as the sentence around it needs it: « de X à Y »,
    unless the text ``before`` it already ends with « de » (« baissé de 0,79 à 1,51 »); any other
    glued value as it is."""
    if not is_range(french) or _RANGE_OPENED.search(before):
        return french
    return "de " + french
