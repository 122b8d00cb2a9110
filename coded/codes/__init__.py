"""Codes and their decoders.

MDS (real and GF(p)), row MDS (unequal loads), polynomial, replication, uncoded, and
exact integer products over CRT primes. Every scheme implements
:class:`coded.codes.Code` (see ``_base.py``). Gradient codes (``GradientCode``)
encode sums of partial gradients instead of products.
"""

from __future__ import annotations

from coded.codes._base import Code, Decoder, EncodedOperands, Piece
from coded.codes._exact import ExactCode
from coded.codes._fields import DEFAULT_PRIME
from coded.codes._gradient import Conditioning, GradientCode
from coded.codes._lagrange import LagrangeCode
from coded.codes._mds import MDSCode, RowMDSCode
from coded.codes._polynomial import PolynomialCode
from coded.codes._replication import ReplicationCode, UncodedCode

__all__ = [  # noqa: RUF022 - plain sorted(), as tests/test_public_api.py checks
    "Code",
    "Conditioning",
    "DEFAULT_PRIME",
    "Decoder",
    "EncodedOperands",
    "ExactCode",
    "GradientCode",
    "LagrangeCode",
    "MDSCode",
    "Piece",
    "PolynomialCode",
    "ReplicationCode",
    "RowMDSCode",
    "UncodedCode",
]
