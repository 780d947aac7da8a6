"""Signed notes and note keys against the examples in the documentation of Go's
golang.org/x/mod/sumdb/note (note.go's package comment, example_test.go and note_test.go,
golang/mod at fe2ec04): a known key pair, text and signature."""

from __future__ import annotations

import pytest

from colibri.domains.log.note import BadKey, NoteRejected, Signer, Verifier, key_hash, open_note, sign

# From golang.org/x/mod/sumdb/note's documentation (ExampleSign / ExampleOpen).
GO_SIGNER = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
GO_VERIFIER = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
GO_TEXT = (
    "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
)
GO_NOTE = (
    GO_TEXT
    + "\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6"
    "RyyBwJnAM=\n"
)
# The doubly-signed form from the package comment: a second signature by another key.
GO_DOUBLE = (
    GO_NOTE
    + "— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1"
    "RvMc+QQ=\n"
)


def test_the_go_example_note_verifies_under_its_verifier_key() -> None:
    verifier = Verifier.parse(GO_VERIFIER)
    assert (verifier.name, f"{verifier.hash:08x}") == ("PeterNeumann", "c74f20a3")
    assert open_note(GO_NOTE, verifier) == GO_TEXT


def test_signing_the_go_text_with_the_go_key_reproduces_the_go_note_byte_for_byte() -> None:
    signer = Signer.parse(GO_SIGNER)
    assert sign(GO_TEXT, signer) == GO_NOTE  # Ed25519 is deterministic
    assert signer.verifier().key() == GO_VERIFIER
    assert signer.key() == GO_SIGNER


def test_a_second_signer_is_ignored_by_a_verifier_that_does_not_know_it() -> None:
    assert open_note(GO_DOUBLE, Verifier.parse(GO_VERIFIER)) == GO_TEXT


def test_every_single_byte_change_of_the_go_keys_is_refused() -> None:
    """As note_test.go's TestNewVerifier / TestNewSigner: each byte incremented, each must fail."""
    for key, parse in ((GO_VERIFIER, Verifier.parse), (GO_SIGNER, Signer.parse)):
        for i in range(len(key)):
            mangled = key[:i] + chr(ord(key[i]) + 1) + key[i + 1 :]
            with pytest.raises(BadKey):
                parse(mangled)
        for cut in range(1, len(key) - 1):
            with pytest.raises(BadKey):
                parse(key[:cut])


def test_the_go_test_keys_of_wrong_length_and_unknown_algorithm_are_refused() -> None:
    for key in (
        "PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==",
        "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
    ):
        with pytest.raises(BadKey):
            Verifier.parse(key)


def test_a_changed_text_or_signature_is_rejected() -> None:
    verifier = Verifier.parse(GO_VERIFIER)
    with pytest.raises(NoteRejected, match="invalid"):
        open_note(GO_NOTE.replace("cryptography", "cryptographY"), verifier)
    with pytest.raises(NoteRejected):
        open_note(GO_NOTE.replace("x08go/ZJ", "x08go/ZK"), verifier)


def test_another_keys_signature_is_not_accepted() -> None:
    other = Signer.generate("PeterNeumann")  # same name, different key: another hash
    with pytest.raises(NoteRejected, match="no signature by the key"):
        open_note(GO_NOTE, other.verifier())


def test_malformed_notes_are_rejected() -> None:
    verifier = Verifier.parse(GO_VERIFIER)
    for bad in (GO_TEXT, GO_NOTE[:-1], GO_NOTE.replace("— ", "- "), GO_NOTE.replace("\n", "\r\n"), "\n\n"):
        with pytest.raises(NoteRejected):
            open_note(bad, verifier)


def test_generated_keys_round_trip_and_sign() -> None:
    signer = Signer.generate("example.com/colibri")
    again = Signer.parse(signer.key())
    assert again == signer
    verifier = Verifier.parse(signer.verifier().key())
    assert verifier.hash == key_hash("example.com/colibri", verifier.public_key)
    text = "example.com/colibri\n3\nAAAA\n"
    assert open_note(sign(text, signer), verifier) == text


@pytest.mark.parametrize("name", ["", "has space", "a+b", "tab\tname"])
def test_key_names_with_spaces_or_plus_are_refused(name: str) -> None:
    with pytest.raises(BadKey):
        Signer.generate(name)
