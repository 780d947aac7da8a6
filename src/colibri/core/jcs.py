"""RFC 8785 (JCS) canonical JSON of any JSON value, and its SHA-256: the same bytes for the same
value, however it was written on the wire, so that anyone holding a value can recompute its digest.

- object keys sorted by their UTF-16 code units (the same as code-point order unless a key holds a
  character beyond U+FFFF; only then are the keys compared as UTF-16);
- strings escape only `"`, `\\` and U+0000..U+001F, everything else is itself in UTF-8 (what the
  stdlib's C `encode_basestring` writes);
- numbers as ECMAScript's Number.prototype.toString prints them (`es_number`, RFC 8785 §3.2.2.3);
- no whitespace.

`canonical` asks the stdlib's C encoder first (sorted keys, no whitespace, UTF-8 kept): its text is
the JCS text unless it holds a float (Python and ECMAScript print some differently), an integer
beyond 2**53, or a key beyond U+FFFF — each of which the text itself shows, so only then is the
value written here, piece by piece. Keys that are not strings are taken as the stdlib takes them
(it writes 1 as "1"); a value of no JSON type is a TypeError. A hypothesis test holds `canonical`
to the `rfc8785` package. Where JCS has no answer, a digest is
still made rather than a call failed: an integer beyond ±2**53 is written as the double JCS reads
it as (in full when it is too large even for a double), a non-finite float (not JSON; a peer may
send NaN) as `NaN`/`Infinity`, and a lone surrogate is hashed through its UTF-16 code unit
(`surrogatepass`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from json.encoder import encode_basestring

_q = encode_basestring
_SAFE_INTEGER = 2**53
_BEYOND_BMP = "\U00010000"
_C_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=True)
# In the C encoder's text, a float shows as a digit before `.`/`e`/`E` or as NaN/Infinity, and an
# integer JCS reads as a double as 16 digits or more; inside a string these are only false alarms.
_NOT_AS_IS = re.compile(r"[0-9][.eE]|[0-9]{16}|NaN|Infinity")


def es_number(value: float) -> str:
    """A finite number as ECMAScript's Number.prototype.toString prints it (RFC 8785 §3.2.2.3)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{value!r} is not a number")
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        raise ValueError(f"{value!r} has no JSON form")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr gives the shortest digits that round-trip, as ECMAScript's algorithm does.
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    raw = whole + fraction
    digits = raw.lstrip("0")
    point = len(whole) + int(exponent or 0) - (len(raw) - len(digits))  # value = 0.digits × 10**point
    digits = digits.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        e = n - 1
        head = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
        text = f"{head}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + text


def canonical(value: object) -> str:
    """The JCS text of a JSON value (dicts, lists or tuples, strings, numbers, booleans, None);
    TypeError for anything else."""
    text = _C_ENCODER.encode(value)
    if _NOT_AS_IS.search(text) is None and (text.isascii() or max(text) < _BEYOND_BMP):
        return text
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts)


def digest(value: object) -> str:
    """SHA-256 (lowercase hex) of the UTF-8 bytes of `canonical(value)`."""
    return hashlib.sha256(canonical(value).encode("utf-8", "surrogatepass")).hexdigest()


def _write(value: object, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_q(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(value) if -_SAFE_INTEGER <= value <= _SAFE_INTEGER else _wide(value))
    elif isinstance(value, float):
        out.append(es_number(value) if math.isfinite(value) else _not_finite(value))
    elif isinstance(value, dict):
        out.append("{")
        first = True
        for key in _sorted_keys(value):
            if not first:
                out.append(",")
            first = False
            out.append(_q(key))
            out.append(":")
            _write(value[key], out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _write(item, out)
        out.append("]")
    else:
        raise TypeError(f"{type(value).__name__} is not a JSON value")


def _sorted_keys(value: dict[object, object]) -> list[str]:
    keys: list[str] = []
    for key in value:
        if not isinstance(key, str):
            raise TypeError(f"object key {key!r} is not a string")
        keys.append(key)
    if all(key.isascii() for key in keys) or max(max(key, default="") for key in keys) < _BEYOND_BMP:
        return sorted(keys)
    return sorted(keys, key=lambda key: key.encode("utf-16-be", "surrogatepass"))


def _wide(value: int) -> str:
    try:
        return es_number(float(value))
    except OverflowError:
        return str(value)


def _not_finite(value: float) -> str:
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
