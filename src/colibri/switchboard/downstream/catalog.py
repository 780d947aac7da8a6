"""What a downstream offers besides tools: resources, resource templates and prompts (SPEC §12).

Fetched with the readiness check (and again when the server says a list changed), only for the
capabilities the server declared. A list that fails to come keeps the last one known: these lists
are not health evidence, the checks are.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp_types import METHOD_NOT_FOUND

from colibri.switchboard.base import DownstreamError, DownstreamSession, PeerError

log = logging.getLogger("colibri.switchboard")

PAGE_CAP = 100
# RFC 6570 expressions: `{id}`, `{+path}`, `{?query,page}` and so on.
EXPRESSION = re.compile(r"\{[^}]*\}")


@dataclass(slots=True)
class Catalog:
    resources: list[types.Resource] = field(default_factory=list)
    templates: list[types.ResourceTemplate] = field(default_factory=list)
    prompts: list[types.Prompt] = field(default_factory=list)
    subscribable: bool = False
    completions: bool = False
    logging: bool = False

    async def refresh(self, session: DownstreamSession, timeout: float) -> bool:
        """Fetch every list the server offers; True when anything changed."""
        before = (self.resources, self.templates, self.prompts)
        capabilities = session.capabilities
        self.subscribable = bool(capabilities.resources and capabilities.resources.subscribe)
        self.completions = capabilities.completions is not None
        self.logging = capabilities.logging is not None
        offers_resources = capabilities.resources is not None
        # Each list on its own: a server with resources may still not implement templates/list.
        self.resources = await _listed(session, "resources/list", timeout, self.resources, offers_resources)
        self.templates = await _listed(
            session, "resources/templates/list", timeout, self.templates, offers_resources
        )
        self.prompts = await _listed(
            session, "prompts/list", timeout, self.prompts, capabilities.prompts is not None
        )
        return (self.resources, self.templates, self.prompts) != before

    def has_resource(self, uri: str) -> bool:
        return any(resource.uri == uri for resource in self.resources)

    def matches_template(self, uri: str) -> bool:
        return any(template_matches(template.uri_template, uri) for template in self.templates)


def template_matches(template: str, uri: str) -> bool:
    """Whether `uri` could come from `template` (each expression stands for any text)."""
    parts = EXPRESSION.split(template)
    pattern = ".*".join(re.escape(part) for part in parts)
    return re.fullmatch(pattern, uri, flags=re.DOTALL) is not None


async def _listed(
    session: DownstreamSession, method: str, timeout: float, known: list[Any], offered: bool
) -> list[Any]:
    """The list `method` answers now; [] when not offered; the one `known` when it fails."""
    if not offered:
        return []
    try:
        return await _pages(session, method, timeout)
    except PeerError as exc:
        if exc.code == METHOD_NOT_FOUND:
            return []
        log.info("%s: %s failed: %s", session.server_name, method, exc.message)
    except DownstreamError as exc:
        log.info("%s: %s failed: %s", session.server_name, method, exc.message)
    return known


async def _pages(session: DownstreamSession, method: str, timeout: float) -> list[object]:
    items: list[object] = []
    cursor: str | None = None
    for _ in range(PAGE_CAP):
        params = types.PaginatedRequestParams(cursor=cursor)
        if method == "resources/list":
            page: types.ListResourcesResult | types.ListResourceTemplatesResult | types.ListPromptsResult
            page = await session.request(
                types.ListResourcesRequest(params=params), types.ListResourcesResult, timeout
            )
            items.extend(page.resources)
        elif method == "resources/templates/list":
            page = await session.request(
                types.ListResourceTemplatesRequest(params=params), types.ListResourceTemplatesResult, timeout
            )
            items.extend(page.resource_templates)
        else:
            page = await session.request(
                types.ListPromptsRequest(params=params), types.ListPromptsResult, timeout
            )
            items.extend(page.prompts)
        cursor = page.next_cursor
        if cursor is None:
            break
    return items
