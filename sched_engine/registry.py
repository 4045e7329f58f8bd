"""The one registry of engines and policies (drives UI dropdowns and tests)."""

from __future__ import annotations

from . import batch, elastic, fairshare, network, site
from .core.registry import Registry

REGISTRY = Registry(
    engines=[fairshare.ENGINE, batch.ENGINE, network.ENGINE, elastic.ENGINE, site.ENGINE],
    policies=[*fairshare.POLICIES, *batch.POLICIES, *network.POLICIES, *elastic.POLICIES, *site.POLICIES],
)
