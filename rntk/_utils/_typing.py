"""Type aliases of the public API."""

from typing import Sequence, Union

from numpy.typing import ArrayLike

__all__ = ["ArrayLike", "Scale", "Sequences"]

#: Sequences in any accepted layout: a 2-D or 3-D array, or a list of series.
Sequences = Union[ArrayLike, Sequence[ArrayLike]]
#: A scale: one value, or one per layer.
Scale = Union[float, ArrayLike]
