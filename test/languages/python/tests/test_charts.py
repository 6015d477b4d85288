"""A Python user's unit tests of kruise-ha charts: a snapshot test (the synthesized YAML against a file kept with
the tests; UPDATE_SNAPSHOTS=1 rewrites it) and a synth-time validation error."""

import os
import pathlib

import pytest
import yaml
import cdk8s

import app as examples
from kruise_ha import KruiseManager

SNAPSHOTS = pathlib.Path(__file__).parent / "__snapshots__"


def test_log_shipper_matches_snapshot() -> None:
    chart = cdk8s.Chart(cdk8s.Testing.app(), "test")
    examples.log_shipper(chart)
    manifest = yaml.safe_dump_all(cdk8s.Testing.synth(chart), sort_keys=True)
    snapshot = SNAPSHOTS / "log_shipper.yaml"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        snapshot.write_text(manifest)
    assert manifest == snapshot.read_text()


def test_a_bad_prop_fails_synth_naming_it_as_written() -> None:
    chart = cdk8s.Chart(cdk8s.App(), "test")
    with pytest.raises(Exception) as error:
        KruiseManager(chart, "Kruise", replicas=3, expected_nodes=2)
    message = str(error.value)
    assert "expected_nodes" in message, message
    assert "Fix:" in message, message
