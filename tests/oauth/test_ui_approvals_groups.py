"""A rule's approvers may be an IdP group (SPEC §20, §22): in `colibri ui` signed in with the identity
provider's token, a member of `group:sre` may decide a call the rule holds, and someone outside it
is refused with the 409 page naming why; the decision names the person, not the group."""

from __future__ import annotations

import urllib.parse
import urllib.request
from pathlib import Path

from colibri.core.clock import utc_now
from colibri.domains.approvals import api as approvals
from colibri.domains.log.api import log_action
from colibri.storage import open_database
from tests.helpers.static_issuer import static_issuer
from tests.http.helpers import http_env, make_token
from tests.ui.browser import ui_process


def _decide(base: str, approval_id: str, token: str) -> tuple[int, str]:
    """POST the page's form as its own page would: the status, and the page or where it sends one."""
    body = urllib.parse.urlencode({"decision": "approve", "comment": "on call"}).encode()
    headers = {"Origin": base, "Authorization": f"Bearer {token}"}
    request = urllib.request.Request(
        f"{base}/approvals/{approval_id}", data=body, headers=headers, method="POST"
    )

    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    try:
        with urllib.request.build_opener(Stay).open(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("location") or error.read().decode()


def test_a_member_of_the_approvers_group_decides_and_others_are_refused(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    make_token(env, "viewer", "read")  # makes the store
    store = open_database(Path(env["COLIBRI_DB_PATH"]))
    try:
        held = approvals.Held(
            "c1", "ana@example.com", "db.drop_table", "d" * 64, '{"table":"users"}', None, None,
            '{"rule":"approvals.rules[0]"}', ("group:sre",), "approver",
        )  # fmt: skip
        with store.atomic() as conn:
            approval = approvals.hold(conn, held, utc_now(), 900, log_action)
    finally:
        store.close()
    with static_issuer() as issuer, ui_process(env, tmp_path, "--oauth-issuer", issuer.issuer) as (base, _):
        dev = issuer.token(base, sub="eve@example.com", groups=["dev"], scope="colibri:read")
        sre = issuer.token(base, sub="dan@example.com", groups=["sre"], scope="colibri:read")
        refused = _decide(base, approval.id, dev)
        decided = _decide(base, approval.id, sre)
    store = open_database(Path(env["COLIBRI_DB_PATH"]), readonly=True)
    try:
        with store.snapshot() as conn:
            after = approvals.find(conn, approval.id)
    finally:
        store.close()
    assert refused[0] == 409 and "eve@example.com is not an approver" in refused[1], refused
    assert decided == (303, f"/approvals?done={approval.id}"), decided
    assert after is not None and (after.state, after.decided_by, after.decided_via) == (
        "approved",
        "dan@example.com",
        "ui",
    )
