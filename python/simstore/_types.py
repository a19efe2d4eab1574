"""``Fingerprint``: a 64-bit SimHash fingerprint, an ``int`` that prints as 16 hex digits."""

from __future__ import annotations

from typing import Union

from . import _simstore
from .errors import InvalidFingerprintError

__all__ = ["Fingerprint"]

_MAX = 1 << 64


class Fingerprint(int):
    """A 64-bit SimHash fingerprint.

    An ``int`` (0 <= fp < 2**64), so it compares, hashes and serializes as one; it prints as
    the 16 hex digits the ``simstore`` command uses. ``Fingerprint(x)`` takes an int or a str
    of exactly 16 hex digits (``InvalidFingerprintError`` otherwise).

    >>> a = Fingerprint("3c3e65769dfcbeec")
    >>> a.hex, a.distance(a ^ 0b101)
    ('3c3e65769dfcbeec', 2)
    """

    __slots__ = ()

    def __new__(cls, value: Union[int, str]) -> "Fingerprint":
        if isinstance(value, str):
            return super().__new__(cls, _simstore._parse_fingerprint(value))
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidFingerprintError(
                f"invalid fingerprint {value!r}: expected an int (0 <= fp < 2**64) "
                "or a str of exactly 16 hexadecimal digits"
            )
        if not 0 <= value < _MAX:
            raise InvalidFingerprintError(
                f"invalid fingerprint {value}: expected an integer with 0 <= fp < 2**64"
            )
        return super().__new__(cls, value)

    @property
    def hex(self) -> str:
        """The 16 lowercase hex digits, as ``simstore`` prints it."""
        return format(int(self), "016x")

    def distance(self, other: Union[int, str]) -> int:
        """The Hamming distance to ``other`` (a fingerprint, int or 16 hex digits): the
        number of differing bits, 0..64."""
        return bin(int(self) ^ int(Fingerprint(other))).count("1")

    def __str__(self) -> str:
        return self.hex

    def __repr__(self) -> str:
        return f"Fingerprint({self.hex!r})"
