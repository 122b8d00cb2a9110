"""A code wrapper whose product blocks on a distributed.Event on chosen workers."""

from dataclasses import dataclass
from typing import Any

from coded.codes import Code


@dataclass(frozen=True)
class BlockingMultiply:
    multiply: Any
    event_name: str
    slow_addresses: frozenset

    def __call__(self, left, right):
        from distributed import Event, get_worker

        if get_worker().address in self.slow_addresses:
            Event(self.event_name).wait(timeout=60)
        return self.multiply(left, right)


class BlockingCode(Code):
    """Delegates to `inner`; tasks on `slow_addresses` wait for the event."""

    def __init__(self, inner, event_name, slow_addresses):
        self.inner = inner
        self.n = inner.n
        self._multiply = BlockingMultiply(
            inner.multiply, event_name, frozenset(slow_addresses)
        )

    @property
    def recovery_threshold(self):
        return self.inner.recovery_threshold

    def encode_operands(self, A, B):
        return self.inner.encode_operands(A, B)

    def decoder(self, encoded):
        return self.inner.decoder(encoded)

    @property
    def multiply(self):
        return self._multiply

    def is_decodable(self, workers):
        return self.inner.is_decodable(workers)
