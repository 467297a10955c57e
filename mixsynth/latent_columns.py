"""The latent columns of the copula: which input column each comes from and what it stands
for (encode.py makes them, one or more an input column; synthesis and the model read them)."""
from dataclasses import dataclass

from .kernels.latent import LEVEL, RANK


@dataclass(frozen=True)
class LatentColumn:
    """One latent column: ``name`` like ``"race=3"``, ``"weeks"`` or ``"weeks:missing"``."""
    name: str
    source: str
    role: str        # "value", "level", "dummy" (RL baseline) or "missing"
    level: int = -1  # level index for "level" and "dummy" columns
    pooled: tuple[int, ...] = ()  # a level column for several rare levels: their codes (level: the first)
    blanks: tuple[str, ...] = ()  # the input columns this indicator (or binary value column) blanks
    blank_when: float | None = None  # a binary value column: its value where those cells are blank
    blank_share: float = 0.0  # an indicator or such a binary: the share of rows where they are blank
    implied: tuple[tuple[str, int, float], ...] = ()  # a value column: (categorical, level, value)
    #   it always holds on that level's rows (encode.implications), set so at synthesis
    fixed_where_seen: tuple[str, ...] = ()  # an indicator or such a binary: the latent columns
    #   that hold one value, but in fewer than a few rows, where what it blanks is seen
    rest_level: int = -1  # a level column of a categorical one of whose levels has no column:
    rest_copy: str = ""   #   that level (no column positive spells it) and the level column of
    #   another categorical positive on (nearly) the same rows (encode.copied_levels)

    @property
    def kind(self) -> int:
        """LEVEL for a level column, RANK for every other (kernels/latent.py)."""
        return LEVEL if self.role == "level" else RANK
