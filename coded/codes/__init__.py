"""Codes and their decoders.

MDS (real and GF(p)), row MDS (unequal loads), polynomial, replication, uncoded,
rateless (LT) codes of sparse or dense A, and exact integer products over CRT
primes. Every scheme implements :class:`coded.codes.Code` (see ``_base.py``);
``BlockCode`` is the base of the codes with one coded block per worker, whose
shares also decode ``A.T @ y`` (``TransposedCode``). Gradient codes
(``GradientCode``) encode sums of partial gradients instead of products.
``matmul_mod`` is the exact GF(p) product the codes run on. What the runtime and
the other packages need beyond these names is in :mod:`coded.codes.interface`.
"""

from __future__ import annotations

from coded.codes._base import Code, Decoder, EncodedOperands, Piece
from coded.codes._exact import ExactCode
from coded.codes._fields import DEFAULT_PRIME
from coded.codes._gradient import Conditioning, GradientCode
from coded.codes._hierarchical import DecodedGroup, HierarchicalCode
from coded.codes._lagrange import LagrangeCode
from coded.codes._mds import BlockCode, MDSCode, RowMDSCode
from coded.codes._modular import matmul_mod
from coded.codes._polynomial import PolynomialCode
from coded.codes._rateless import DegreeDistribution, LTCode
from coded.codes._replication import ReplicationCode, UncodedCode
from coded.codes._transpose import TransposedCode

__all__ = [  # noqa: RUF022 - plain sorted(), as tests/test_public_api.py checks
    "BlockCode",
    "Code",
    "Conditioning",
    "DEFAULT_PRIME",
    "DecodedGroup",
    "Decoder",
    "DegreeDistribution",
    "EncodedOperands",
    "ExactCode",
    "GradientCode",
    "HierarchicalCode",
    "LTCode",
    "LagrangeCode",
    "MDSCode",
    "Piece",
    "PolynomialCode",
    "ReplicationCode",
    "RowMDSCode",
    "TransposedCode",
    "UncodedCode",
    "matmul_mod",
]
