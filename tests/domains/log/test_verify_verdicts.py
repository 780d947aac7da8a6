"""What `colibri verify` says: a quorum not met is not a broken log, a rejected checkpoint is said
once, and a rate is printed only for a run long enough to mean something."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from colibri.domains.log.cosignature import ALG_COSIGNATURE, cosign
from colibri.domains.log.note import Signer
from colibri.storage import SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from colibri.verifier.rate import rate
from tests.domains.log.helpers import generate_key
from tests.domains.trail.helpers import build_chain
from tests.helpers import clean_env, colibri

RECORDS = 40


@pytest.fixture
def checkpointed(tmp_path: Path) -> tuple[dict[str, str], str, str]:
    """An environment with a signing key, its verifier key, and the store's signed checkpoint."""
    env = clean_env(tmp_path)
    key_file, verifier_key = generate_key(tmp_path, env)
    env["COLIBRI_SIGNING_KEY"] = str(key_file)
    db = SQLiteDatabase.open(tmp_path / "colibri.db")
    migrate(db, MIGRATIONS)
    build_chain(db, RECORDS)
    db.close()
    made = colibri("checkpoint", env=env)
    assert made.returncode == 0, made.stderr
    return env, verifier_key, made.stdout


def test_too_few_cosignatures_say_the_quorum_was_not_met_and_the_log_matched(
    checkpointed: tuple[dict[str, str], str, str], tmp_path: Path
) -> None:
    env, verifier_key, note = checkpointed
    w1, w2 = (Signer.generate(f"{name}.example", ALG_COSIGNATURE) for name in ("w1", "w2"))
    cosigned = tmp_path / "cosigned.checkpoint"
    cosigned.write_text(note + cosign(note.partition("\n\n")[0] + "\n", w1, int(time.time())))
    policy = tmp_path / "witnesses.policy"
    policy.write_text(f"witness w1 {w1.verifier().key()}\nwitness w2 {w2.verifier().key()}\nquorum 2\n")
    args = ("--checkpoint", str(cosigned), "--key", verifier_key, "--witness-policy", str(policy))
    done = colibri("verify", *args, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "BROKEN" not in done.stdout and "no longer matches" not in done.stdout
    assert "witnesses:        1 of the policy's 2 cosigned it (quorum 2): w1" in done.stdout
    verdict = done.stdout.splitlines()[-1]
    assert verdict.startswith(f"result:           QUORUM NOT MET — the log holds the checkpoint's {RECORDS}")
    assert "carries 1 valid witness cosignature(s) of the 2 the policy requires" in verdict
    policy.write_text(f"witness w1 {w1.verifier().key()}\nwitness w2 {w2.verifier().key()}\nquorum 1\n")
    met = colibri("verify", *args, env=env)
    assert met.returncode == 0 and met.stdout.splitlines()[-1].startswith("result:           VALID"), (
        met.stdout
    )


def test_a_checkpoint_rejected_by_the_key_is_said_once(
    checkpointed: tuple[dict[str, str], str, str], tmp_path: Path
) -> None:
    env, _, note = checkpointed
    other_key = Signer.generate("example.com/colibri").verifier().key()  # the name, another key
    saved = tmp_path / "latest.checkpoint"
    saved.write_text(note)
    done = colibri("verify", "--checkpoint", str(saved), "--key", other_key, env=env)
    assert done.returncode == 1
    output = done.stdout + done.stderr
    assert output.count("no signature by the key") == 1 and output.count("REJECTED") == 1, output
    assert done.stdout.startswith(f"result:           REJECTED — the checkpoint {saved}: ")


def test_a_short_run_shows_no_rate(checkpointed: tuple[dict[str, str], str, str], tmp_path: Path) -> None:
    env, verifier_key, note = checkpointed
    saved = tmp_path / "latest.checkpoint"
    saved.write_text(note)
    against = colibri("verify", "--checkpoint", str(saved), "--key", verifier_key, env=env)
    whole = colibri("verify", env=env)
    assert against.returncode == 0 and whole.returncode == 0, against.stdout + whole.stdout
    assert f"log entries:      {RECORDS} checked in " in against.stdout
    assert f"records checked:  {RECORDS} in " in whole.stdout
    assert "/s" not in against.stdout and "/s" not in whole.stdout


@pytest.mark.parametrize(
    ("items", "seconds", "shown"),
    [
        (1_000_000, 3.2, ", 312,500 records/s"),
        (10_000, 1.0, ", 10,000 records/s"),
        (9_999, 30.0, ""),  # too few items: the fixed costs are most of the time
        (1_000_000, 0.99, ""),  # too short: the clock and the start-up dominate
        (0, 0.0, ""),
    ],
)
def test_a_rate_needs_one_second_and_ten_thousand_items(items: int, seconds: float, shown: str) -> None:
    assert rate(items, seconds, "records") == shown
