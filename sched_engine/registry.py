"""The one registry of engines and policies (drives UI dropdowns and tests)."""

from __future__ import annotations

from . import batch, elastic, fairshare, network
from .core.registry import Registry

REGISTRY = Registry(
    engines=[fairshare.ENGINE, batch.ENGINE, network.ENGINE, elastic.ENGINE],
    policies=[*fairshare.POLICIES, *batch.POLICIES, *network.POLICIES, *elastic.POLICIES],
)
