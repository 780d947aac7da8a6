"""The MCP Skills extension (SEP-2640) on `colibri serve`: the skill registry as `skill://` resources,
`skills/list` and `skills/get` (domains/skills/served.py), beside the `skill_list` tool.

It is the SDK's own `Extension` (SEP-2133): its identifier and settings are advertised under
`capabilities.extensions`, and its two methods are the SDK's `MethodBinding`s, registered on the
low-level server as `MCPServer` would; the files are the server's `resources/list` and
`resources/read`. Served wherever `skill_list` is admitted (not in MINIMAL); the folders are walked
and the files read and hashed in a worker thread, off the event loop.

The skills domain is imported at the first request that needs it, not with the server: most
sessions never ask, and a cold start imports nothing before it is needed (SPEC §18).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, INVALID_REQUEST

from colibri.runtime.app import App

if TYPE_CHECKING:
    from colibri.domains.skills.served import SkillEntry

SKILL_TOOL = "skill_list"


class SkillsGetParams(types.RequestParams):
    uri: str


class SkillsExtension(Extension):
    """`skills/list` and `skills/get` over the registry `skill_list` reads."""

    identifier = "io.modelcontextprotocol/skills"

    def __init__(self, app: App) -> None:
        self._app = app

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding("skills/list", types.PaginatedRequestParams, self.list_skills),
            MethodBinding("skills/get", SkillsGetParams, self.get_skill),
        )

    async def served(self) -> list[SkillEntry]:
        tool = self._app.declared.get(SKILL_TOOL)
        state = self._app.state
        if tool is None or not tool.admitted_in(state.mode):
            if state.phase == "phase1":
                # Still booting past the bounded wait, or boot failed: phase 1's MINIMAL is not a
                # mode anyone declared, so the reason is the boot's, never "mode MINIMAL".
                raise MCPError(INVALID_REQUEST, f"skills are not served yet: {self._app.readiness()}")
            raise MCPError(
                INVALID_REQUEST,
                f"skills are not served in mode {state.mode.value}, where {SKILL_TOOL} is not",
            )
        from colibri.domains.skills.handlers import REGISTRY
        from colibri.domains.skills.roots import roots_from
        from colibri.domains.skills.served import entries

        roots = roots_from(self._app.state.skills_dirs, Path.cwd(), Path.home())
        return await anyio.to_thread.run_sync(lambda: entries(REGISTRY.list_skills(roots)))

    async def list_skills(self, ctx: ServerRequestContext[Any, Any], params: Any) -> dict[str, Any]:
        # Every entry fits one page: a registry is at most a few hundred skills.
        return {"skills": [entry.wire() for entry in await self.served()]}

    async def get_skill(self, ctx: ServerRequestContext[Any, Any], params: SkillsGetParams) -> dict[str, Any]:
        from colibri.domains.skills.served import NotServed, find

        try:
            return {"skill": find(await self.served(), params.uri).wire()}
        except NotServed as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from None

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        listed: list[types.Resource] = []
        for entry in await self.served():
            for served_file in entry.files:
                is_skill = served_file.uri == entry.uri
                listed.append(
                    types.Resource(
                        uri=served_file.uri,
                        name=entry.name
                        if is_skill
                        else served_file.uri.removeprefix(f"skill://{entry.name}/"),
                        description=entry.description if is_skill else None,
                        mime_type="text/markdown" if is_skill else None,
                    )
                )
        return types.ListResourcesResult(resources=listed)

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        from colibri.domains.skills.served import NotServed, read

        served = await self.served()
        try:
            mime, data = await anyio.to_thread.run_sync(read, served, params.uri)
        except (NotServed, OSError) as exc:
            raise MCPError(INVALID_PARAMS, f"cannot read {params.uri}: {exc}") from None
        contents: types.TextResourceContents | types.BlobResourceContents
        try:
            contents = types.TextResourceContents(uri=params.uri, mime_type=mime, text=data.decode("utf-8"))
        except UnicodeDecodeError:
            blob = base64.b64encode(data).decode("ascii")
            contents = types.BlobResourceContents(uri=params.uri, mime_type=mime, blob=blob)
        return types.ReadResourceResult(contents=[contents])


def install(server: Server[Any], app: App) -> None:
    """Serve the extension on `server`, as `MCPServer(extensions=[...])` applies one."""
    extension = SkillsExtension(app)
    server.extensions[extension.identifier] = extension.settings()
    for binding in extension.methods():
        server.add_request_handler(binding.method, binding.params_type, binding.handler)
    server.add_request_handler("resources/list", types.PaginatedRequestParams, extension.list_resources)
    server.add_request_handler("resources/read", types.ReadResourceRequestParams, extension.read_resource)
