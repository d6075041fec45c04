"""The base of every options section, and the literal types sections share."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

SmallToBig = Literal["off", "neighbours", "section"]
LadderRanking = Literal["ladder", "rrf", "weighted", "bestmatch"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


__all__ = ["LadderRanking", "SmallToBig"]
