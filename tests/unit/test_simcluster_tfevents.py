"""simcluster's event files are real ones: TensorBoard's own reader reads back the scalars
they were written with (the simulated programs' curves, docs/artifacts.md)."""

from __future__ import annotations

import zlib

import pytest

from simcluster.node import tfevents


def test_crc32c_matches_the_published_check_values():
    # RFC 3720 B.4 and the usual "123456789" check value of CRC-32C
    assert tfevents.crc32c(b"123456789") == 0xE3069283
    assert tfevents.crc32c(bytes(32)) == 0x8A9136AA
    assert tfevents.crc32c(b"123456789") != zlib.crc32(b"123456789")


def test_tensorboards_own_loader_reads_the_file_version_and_the_scalars(tmp_path):
    loader_module = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader")
    path = tmp_path / "events.out.tfevents.1700000000.host.1.0"
    content = tfevents.file_start(1_700_000_000.5)
    written = [(500, 2.3456), (1000, 1.25), (1500, 0.5)]
    for i, (step, loss) in enumerate(written):
        content += tfevents.scalars_record(1_700_000_060.0 + i, step,
                                           [("train/loss", loss),
                                            ("train/learning_rate", 0.1 / (i + 1))])
    path.write_bytes(content)
    events = list(loader_module.EventFileLoader(str(path)).Load())
    assert events[0].file_version == "brain.Event:2"
    assert events[0].wall_time == 1_700_000_000.5
    read = [(e.step, {v.tag: v for v in e.summary.value}) for e in events[1:]]
    assert [step for step, _ in read] == [500, 1000, 1500]
    for (_step, loss), (_, values) in zip(written, read, strict=True):
        # the loader turns a simple_value into the scalars plugin's tensor
        assert values["train/loss"].tensor.float_val[0] == pytest.approx(loss, abs=1e-6)
        assert values["train/loss"].metadata.plugin_data.plugin_name == "scalars"
    assert events[2].wall_time == 1_700_000_061.0


def test_a_negative_step_and_a_large_one_are_encoded_as_protobuf_does():
    proto = pytest.importorskip("tensorboard.compat.proto.event_pb2")
    for step in (1, 300, 2**40, -5):
        e = proto.Event.FromString(tfevents.event(1.0, step, scalars=[("a", 1.5)]))
        assert e.step == step and e.summary.value[0].simple_value == 1.5
