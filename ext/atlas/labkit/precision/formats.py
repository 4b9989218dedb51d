"""Number formats, from their bit fields: enumeration, rounding to nearest and stochastic.

A binary floating-point format with ``ebits`` exponent bits, ``mbits`` mantissa bits and an
exponent ``bias`` encodes the code ``s | e | m`` as

* ``(-1)^s * 2^(e - bias) * (1 + m / 2^mbits)`` when ``e > 0`` (normal), and
* ``(-1)^s * 2^(1 - bias) * (m / 2^mbits)`` when ``e == 0`` (subnormal).

What the top codes mean differs between families, and :class:`FloatFormat.specials` says
which: ``"ieee"`` reserves the all-ones exponent for infinities and NaNs (FP16, BF16, FP8
E5M2); ``"fn"`` ("finite, NaN") keeps only the all-ones code as NaN and has no infinity (FP8
E4M3 as the OCP and NVIDIA define it); ``"none"`` makes every code a finite number (FP6 and
FP4 of the MX formats). E8M0, the exponent-only scale of the MX formats, is a power of two
per code and is handled by :func:`e8m0_value`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

ROLE = "taught"


@dataclass(frozen=True)
class FloatFormat:
    """A sign bit, ``ebits`` exponent bits with ``bias``, ``mbits`` mantissa bits."""

    name: str
    ebits: int
    mbits: int
    bias: int
    specials: str  # "ieee", "fn" or "none" (see the module docstring)

    @property
    def bits(self) -> int:
        return 1 + self.ebits + self.mbits

    def decode(self, code: int) -> float:
        """The value of one bit pattern (``nan`` and ``±inf`` where the format has them)."""
        sign = -1.0 if code >> (self.ebits + self.mbits) & 1 else 1.0
        e = code >> self.mbits & ((1 << self.ebits) - 1)
        m = code & ((1 << self.mbits) - 1)
        top = (1 << self.ebits) - 1
        if self.specials == "ieee" and e == top:
            return sign * float("inf") if m == 0 else float("nan")
        if self.specials == "fn" and e == top and m == (1 << self.mbits) - 1:
            return float("nan")
        if e == 0:
            return sign * 2.0 ** (1 - self.bias) * (m / 2**self.mbits)
        return sign * 2.0 ** (e - self.bias) * (1 + m / 2**self.mbits)

    def finite_values(self) -> dict[int, float]:
        """Every code whose value is a finite number, with that value."""
        out = {}
        for code in range(1 << self.bits):
            v = self.decode(code)
            if v == v and abs(v) != float("inf"):
                out[code] = v
        return out

    @property
    def max(self) -> float:
        """The largest finite value, from the bit fields (no enumeration): the top exponent
        with a full mantissa, one step lower where the format reserves codes."""
        top = (1 << self.ebits) - 1
        if self.specials == "ieee":  # the all-ones exponent is inf/NaN
            return (2 - 2.0**-self.mbits) * 2.0 ** (top - 1 - self.bias)
        if self.specials == "fn":  # only the all-ones code is NaN
            return (2 - 2.0 ** (1 - self.mbits)) * 2.0 ** (top - self.bias)
        return (2 - 2.0**-self.mbits) * 2.0 ** (top - self.bias)

    @property
    def min_normal(self) -> float:
        return 2.0 ** (1 - self.bias)

    @property
    def min_subnormal(self) -> float:
        return 2.0 ** (1 - self.bias - self.mbits)


FP32 = FloatFormat("fp32", 8, 23, 127, "ieee")
TF32 = FloatFormat("tf32", 8, 10, 127, "ieee")
BF16 = FloatFormat("bf16", 8, 7, 127, "ieee")
FP16 = FloatFormat("fp16", 5, 10, 15, "ieee")
E5M2 = FloatFormat("fp8_e5m2", 5, 2, 15, "ieee")
E4M3 = FloatFormat("fp8_e4m3", 4, 3, 7, "fn")
E3M2 = FloatFormat("fp6_e3m2", 3, 2, 3, "none")
E2M3 = FloatFormat("fp6_e2m3", 2, 3, 1, "none")
E2M1 = FloatFormat("fp4_e2m1", 2, 1, 1, "none")
FORMATS = {f.name: f for f in (FP32, TF32, BF16, FP16, E5M2, E4M3, E3M2, E2M3, E2M1)}


def round_to_format(
    x: torch.Tensor,
    fmt: FloatFormat,
    stochastic: bool = False,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Round ``x`` onto the values of ``fmt``, saturating at ``±fmt.max`` (float64 result).

    Within a binade ``[2^e, 2^(e+1))`` the values are spaced by ``ulp = 2^(e - mbits)``;
    below the smallest normal the spacing stays that of the lowest binade (subnormals).
    Round to nearest picks the closer neighbour, ties to the even mantissa (``torch.round``
    rounds half to even). Stochastic rounding picks the upper neighbour with probability
    equal to the distance from the lower one, in units of ``ulp``, so that
    ``E[round(x)] = x``.
    """
    x = x.double()
    mag = x.abs()
    e = torch.floor(torch.log2(mag.clamp_min(fmt.min_normal)))
    ulp = torch.exp2(e - fmt.mbits)
    units = mag / ulp  # exact: ulp is a power of two
    if stochastic:
        noise = torch.rand(units.shape, generator=generator, dtype=torch.float64)
        units = torch.floor(units + noise)
    else:
        units = torch.round(units)
    out = torch.copysign((units * ulp).clamp_max(fmt.max), x)
    return torch.where(torch.isnan(x), x, out)


def e8m0_value(code: int) -> float:
    """The E8M0 scale of the MX formats: ``2^(code - 127)``; code 255 is NaN."""
    return float("nan") if code == 255 else 2.0 ** (code - 127)
