"""Codes and their decoders: MDS (real and GF(p)), polynomial, replication, uncoded.

Every scheme implements :class:`coded.codes.Code` (see ``_base.py``).
"""

from __future__ import annotations

from coded.codes._base import Code, Decoder, EncodedOperands, Piece

__all__ = ["Code", "Decoder", "EncodedOperands", "Piece"]
