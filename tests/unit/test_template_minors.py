"""Three of the third review's minors, in the template (issue 29): StreamFunction's concurrency
cap (n2), multi-Region keys (n7), and versions named only after what Lambda snapshots (n13)."""

from __future__ import annotations

import re

from tests.sam_translate import _translate, source, translate, versions

MRK = "arn:aws:kms:us-east-1:123456789012:key/mrk-1234abcd12ab34cd56ef1234567890ab"


def test_the_streaming_function_holds_at_most_its_cap_of_calls() -> None:
    """Nothing tells a streaming function that its client went away: a held call is billed to
    its end. StreamFunction's reserved concurrency caps how many it holds at once (n2)."""
    stream = source()["Resources"]["StreamFunction"]["Properties"]
    assert stream.get("ReservedConcurrentExecutions") is not None, "no cap on StreamFunction"
    resolved = translate({"StreamingApi": "true"})["Resources"]["StreamFunction"]["Properties"]
    assert resolved["ReservedConcurrentExecutions"] == {
        "Fn::If": ["StreamingApiDefaultCap", 10, {"Ref": "StreamingApi"}]
    }
    # The preflight counts it with the worker's reservation.
    preflight = source()["Resources"]["AccountPreflight"]["Properties"]
    assert "StreamReservedConcurrency" in preflight


def test_a_multi_region_key_is_accepted() -> None:
    """Multi-Region keys (mrk-...) encrypt like any other (n7)."""
    pattern = source()["Parameters"]["KmsKeyArn"]["AllowedPattern"]
    assert re.fullmatch(pattern, MRK), pattern
    assert re.fullmatch(
        pattern, "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    )
    assert not re.fullmatch(pattern, "arn:aws:kms:us-east-1:123456789012:alias/mine")


def test_a_property_lambda_does_not_snapshot_names_no_version() -> None:
    """AutoPublishAliasAllProperties named a version after every property as written, the
    reserved concurrency too: an edit of one made a new version with nothing to publish, and
    the deploy failed as in N1 (n13). A version is named after what Lambda snapshots."""
    before = versions(translate())
    edited = source()
    edited["Resources"]["WorkerFunction"]["Properties"]["ReservedConcurrentExecutions"] = 7
    edited["Resources"]["WorkerFunction"]["Properties"]["Tags"] = {"team": "tools"}
    assert versions(_translate({}, edited)) == before
