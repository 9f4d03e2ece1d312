"""Training progress from log tails: each framework's own wording, and simcluster's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from odh.training.logs.progress import (
    EPOCH,
    STEP,
    Progress,
    parse_progress,
    split_timestamp,
    total_hint_from_args,
)

T0 = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)


def stamped(lines: list[tuple[float, str]]) -> list[str]:
    """Lines as `kubectl logs --timestamps` gives them (nanoseconds, Z)."""
    out = []
    for seconds, text in lines:
        at = T0 + timedelta(seconds=seconds)
        out.append(at.strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z " + text)
    return out


def test_split_timestamp():
    at, text = split_timestamp("2024-05-01T10:00:01.500000000Z Epoch 1/2: loss 1.0")
    assert at == T0 + timedelta(seconds=1.5)
    assert text == "Epoch 1/2: loss 1.0"
    assert split_timestamp("no time here") == (None, "no time here")


# -- simcluster's launchers and trainers (simcluster/node/training.py) ---------------------
SIM_HOROVOD = [
    (0, "Warning: Permanently added 'bert-worker-0.bert.team-nlp.svc,10.128.1.4' (ECDSA) to the "
        "list of known hosts."),
    (0, "[1,0]<stdout>:Horovod rank 0/8 (local rank 0) started on bert-worker-0.bert.team-nlp.svc"),
    (0, "[1,1]<stdout>:Horovod rank 1/8 (local rank 0) started on bert-worker-1.bert.team-nlp.svc"),
    (0, "[1,0]<stdout>:Model: BERT-base, batch size 64 per rank, 8 ranks, 40 epochs"),
    (270, "[1,0]<stdout>:Epoch 1/40 step 250/500: loss 2.3011, 2734.2 img/sec"),
    (540, "[1,0]<stdout>:Epoch 1/40: loss 2.1012, accuracy 0.1641, 2741.0 img/sec "
          "(342.6 img/sec per rank)"),
    (810, "[1,0]<stdout>:Epoch 2/40 step 250/500: loss 1.9342, 2760.9 img/sec"),
    (1080, "[1,0]<stdout>:Epoch 2/40: loss 1.8120, accuracy 0.2294, 2755.3 img/sec "
           "(344.4 img/sec per rank)"),
    (1350, "[1,0]<stdout>:Epoch 3/40 step 250/500: loss 1.6620, 2730.4 img/sec"),
]


def test_simcluster_horovod_launcher():
    p = parse_progress(stamped(SIM_HOROVOD))
    assert p is not None
    assert (p.unit, p.current, p.total) == (EPOCH, 3, 40)
    assert p.done == pytest.approx(2.5)
    assert p.fraction == pytest.approx(2.5 / 40)
    # 2 epochs in 1080 s (first point 0.5 at 270 s, last 2.5 at 1350 s): 540 s per epoch
    assert p.eta_seconds == pytest.approx(37.5 * 540)
    assert p.as_of == T0 + timedelta(seconds=1350)


def test_simcluster_horovod_without_tag_output():
    lines = [(t, text.removeprefix("[1,0]<stdout>:")) for t, text in SIM_HOROVOD]
    p = parse_progress(stamped(lines))
    assert (p.current, p.total) == (3, 40)
    assert p.eta_seconds == pytest.approx(37.5 * 540)


def test_simcluster_pytorch_master():
    lines = [
        (0, "Using distributed PyTorch with nccl backend"),
        (0, "INFO:torch.distributed.distributed_c10d:Rank 0: Completed store-based barrier for "
            "key:store_based_barrier_key:1 with 3 nodes."),
        (0.1, "Train Epoch: 1 [0/60000 (0%)]\tloss=2.3112"),
        (360, "Train Epoch: 1 [30080/60000 (50%)]\tloss=1.2001"),
        (720, "Epoch 1/10: loss=0.8123, accuracy=0.4861, 1934.2 samples/sec"),
        (720.1, "Train Epoch: 2 [0/60000 (0%)]\tloss=0.8123"),
        (1080, "Train Epoch: 2 [30080/60000 (50%)]\tloss=0.6001"),
    ]
    p = parse_progress(stamped(lines))
    # the newest line has no total; the hint (or nothing) decides
    assert (p.unit, p.current) == (EPOCH, 2)
    assert p.done == pytest.approx(1 + 30080 / 60000)
    assert p.total is None and p.fraction is None and p.eta_seconds is None
    hinted = parse_progress(stamped(lines), total_hint=10)
    assert hinted.total == 10
    assert hinted.eta_seconds == pytest.approx((10 - hinted.done) / (1.0 / 720), rel=0.01)
    # at the end of an epoch the summary line names the total
    p = parse_progress(stamped(lines[:5]))
    assert (p.current, p.total, p.done) == (1, 10, 1.0)


def test_simcluster_tensorflow_chief_is_keras():
    lines = [
        (0, "INFO:tensorflow:Using MirroredStrategy with 3 replica(s)"),
        (0.1, "Epoch 1/5"),
        (180, "469/469 [==============================] - 180s 384ms/step - loss: 0.4121 - "
              "accuracy: 0.8712"),
        (180.1, "Epoch 2/5"),
        (360, "469/469 [==============================] - 180s 384ms/step - loss: 0.2011 - "
              "accuracy: 0.9410"),
        (360.1, "Epoch 3/5"),
    ]
    p = parse_progress(stamped(lines))
    assert (p.unit, p.current, p.total) == (EPOCH, 3, 5)
    assert p.done == pytest.approx(2.0)
    assert p.fraction == pytest.approx(0.4)
    assert p.eta_seconds == pytest.approx(3 * 180, rel=0.01)


# -- the frameworks' own output ----------------------------------------------------------------
def test_keras_3_progress_bar():
    lines = [
        (0, "Epoch 7/20"),
        (5, "\x1b[1m200/938\x1b[0m \x1b[32m━━━━\x1b[0m\x1b[37m━━━━━━━━━━━━━━━━\x1b[0m \x1b[1m12s"
            "\x1b[0m 17ms/step - accuracy: 0.9612 - loss: 0.1301"),
        (16, "938/938 ━━━━━━━━━━━━━━━━━━━━ 16s 17ms/step - accuracy: 0.9633 - loss: 0.1240 - "
             "val_accuracy: 0.9701 - val_loss: 0.0981"),
    ]
    p = parse_progress(stamped(lines))
    assert (p.current, p.total) == (7, 20)
    assert p.done == pytest.approx(7.0)


def test_keras_verbose_2_and_horovod_gloo_tags():
    lines = [
        (0, "[0]<stdout>:Epoch 1/24"),
        (0, "[1]<stdout>:Epoch 1/24"),
        (30, "[0]<stdout>:500/500 - 30s - loss: 0.3500 - accuracy: 0.8915 - lr: 0.0010 - "
             "30s/epoch - 60ms/step"),
        (30.1, "[0]<stdout>:Epoch 2/24"),
        (30.1, "[1]<stdout>:Epoch 2/24"),
        (60, "[0]<stdout>:500/500 - 30s - loss: 0.1100 - accuracy: 0.9661 - 30s/epoch"),
    ]
    p = parse_progress(stamped(lines))
    assert (p.current, p.total, p.done) == (2, 24, 2.0)
    assert p.eta_seconds == pytest.approx(22 * 30, rel=0.01)


def test_keras_2_live_bar_redrawn_with_carriage_returns():
    bar = ("\r  1/469 [..............................] - ETA: 2:01 - loss: 2.3010"
           "\r 64/469 [===>..........................] - ETA: 7s - loss: 1.1031"
           "\r235/469 [==============>...............] - ETA: 3s - loss: 0.6120")
    p = parse_progress(stamped([(0, "Epoch 3/10"), (4, bar)]))
    assert (p.current, p.total) == (3, 10)
    assert p.done == pytest.approx(2 + 235 / 469)


def test_horovod_pytorch_mnist_example():
    lines = [
        (0, "[1,0]<stdout>:Train Epoch: 1 [0/15000 (0%)]\tLoss: 2.318058"),
        (0, "[1,1]<stdout>:Train Epoch: 1 [0/15000 (0%)]\tLoss: 2.297117"),
        (10, "[1,0]<stdout>:Train Epoch: 1 [7680/15000 (51%)]\tLoss: 0.552091"),
        (20, "[1,0]<stdout>:Train Epoch: 2 [0/15000 (0%)]\tLoss: 0.401200"),
        (20, "[1,1]<stdout>:Train Epoch: 2 [0/15000 (0%)]\tLoss: 0.398813"),
    ]
    p = parse_progress(stamped(lines), total_hint=10)
    assert (p.current, p.total, p.done) == (2, 10, 1.0)
    assert p.eta_seconds == pytest.approx(9 * 20, rel=0.01)


def test_horovod_imagenet_example_tqdm():
    lines = [
        (0, "[1,0]<stderr>:Train Epoch     #1:   0%|          | 0/1251 [00:00<?, ?it/s]"),
        (300, "[1,0]<stderr>:Train Epoch     #1:  45%|####4     | 563/1251 [05:00<06:06, "
              "1.88it/s, loss=6.91, accuracy=0.137]"),
    ]
    p = parse_progress(stamped(lines), total_hint=90)
    assert (p.current, p.total) == (1, 90)
    assert p.done == pytest.approx(563 / 1251)
    assert p.eta_seconds == pytest.approx((90 - 563 / 1251) / (563 / 1251 / 300), rel=0.01)


def test_pytorch_lightning_tqdm_bar_counts_epochs_from_zero():
    lines = [
        (0, "Sanity Checking DataLoader 0: 100%|██████████| 2/2 [00:00<00:00,  5.01it/s]"),
        (1, "Epoch 0:   0%|          | 0/1016 [00:00<?, ?it/s]"),
        (35, "Epoch 0:  96%|█████████▌| 971/1016 [00:34<00:01, 27.84it/s, loss=0.223, v_num=77]"),
        (36, "Validation DataLoader 0:  71%|███████   | 112/157 [00:04<00:01, 28.44it/s]"),
        (40, "Epoch 1:   6%|▌         | 61/1016 [00:02<00:34, 27.70it/s, loss=0.201, v_num=77]"),
    ]
    p = parse_progress(stamped(lines))
    assert (p.unit, p.current, p.total) == (EPOCH, 2, None)
    assert p.done == pytest.approx(1 + 61 / 1016)
    hinted = parse_progress(stamped(lines), total_hint=5)
    assert hinted.fraction == pytest.approx((1 + 61 / 1016) / 5)
    assert hinted.eta_seconds is not None


def test_pytorch_lightning_rich_bar():
    lines = [
        (0, "Epoch 3/9  ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 100/291 0:00:14 • 0:00:27 "
            "7.00it/s v_num: 0 train_loss: 0.398"),
        (14, "Epoch 3/9  ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 198/291 0:00:28 • 0:00:13 "
             "7.00it/s v_num: 0 train_loss: 0.371"),
    ]
    p = parse_progress(stamped(lines))
    assert (p.current, p.total) == (4, 10)  # epochs 0..9
    assert p.done == pytest.approx(3 + 198 / 291)
    older = parse_progress(stamped([(0, "Epoch 4    --------------- ---- 232/291 0:00:33 • "
                                        "0:00:09 7.00it/s loss: 0.398")]), total_hint=8)
    assert (older.current, older.total) == (5, 8)


def test_deepspeed_engine_steps():
    lines = [
        (0, "[2024-05-01 10:00:00,985] [INFO] [logging.py:96:log_dist] [Rank 0] step=40, "
            "skipped=2, lr=[5e-05], mom=[[0.9, 0.999]]"),
        (0, "[2024-05-01 10:00:00,985] [INFO] [timer.py:260:stop] epoch=0/micro_step=40/"
            "global_step=40, RunningAvgSamplesPerSec=83.48, CurrSamplesPerSec=83.7, "
            "MemAllocated=0.26GB, MaxMemAllocated=9.02GB"),
        (15, "[2024-05-01 10:00:15,130] [INFO] [logging.py:96:log_dist] [Rank 0] step=50, "
             "skipped=2, lr=[5e-05], mom=[[0.9, 0.999]]"),
        (30, "[2024-05-01 10:00:30,274] [INFO] [logging.py:96:log_dist] [Rank 0] step=60, "
             "skipped=2, lr=[5e-05], mom=[[0.9, 0.999]]"),
    ]
    p = parse_progress(stamped(lines))
    assert (p.unit, p.current, p.total, p.fraction) == (STEP, 60, None, None)
    hinted = parse_progress(stamped(lines), step_hint=1000)
    assert hinted.fraction == pytest.approx(0.06)
    assert hinted.eta_seconds == pytest.approx(940 * 1.5)  # 20 steps in 30 s


def test_megatron_deepspeed_iterations():
    lines = [
        (0, " iteration      182/  250000 | consumed samples:       186368 | elapsed time per "
            "iteration (ms): 1269.3 | learning rate: 1.365E-05 | global batch size:  1024 | "
            "lm loss: 2.382640E+00 | loss scale: 1.0 |"),
        (2.5, " iteration      184/  250000 | consumed samples:       188416 | elapsed time per "
              "iteration (ms): 1278.0 | learning rate: 1.380E-05 | global batch size:  1024 |"),
    ]
    p = parse_progress(stamped(lines))
    assert (p.unit, p.current, p.total) == (STEP, 184, 250000)
    assert p.eta_seconds == pytest.approx((250000 - 184) * 1.25)


# -- edge cases ------------------------------------------------------------------------------------
def test_nothing_recognised():
    assert parse_progress([]) is None
    assert parse_progress(["Server listening on 0.0.0.0 port 22.", "hello"]) is None


def test_without_timestamps_there_is_no_estimate():
    p = parse_progress(["Epoch 1/4: loss 1.0", "Epoch 2/4: loss 0.5"])
    assert (p.current, p.total, p.fraction, p.eta_seconds) == (2, 4, 0.5, None)
    assert p.as_of is None


def test_a_single_point_has_no_estimate():
    p = parse_progress(stamped([(0, "Epoch 2/4: loss 0.5")]))
    assert p.eta_seconds is None
    assert p.percent == 50


def test_a_restart_starts_the_rate_again():
    lines = [(0, "Epoch 1/10: x"), (100, "Epoch 2/10: x"), (200, "Epoch 3/10: x"),
             (1000, "Epoch 1/10: x"), (1050, "Epoch 2/10: x")]
    p = parse_progress(stamped(lines))
    assert (p.current, p.done) == (2, 2.0)
    assert p.eta_seconds == pytest.approx(8 * 50)


def test_finished_training_has_nothing_left():
    lines = [(0, "Epoch 39/40: loss 0.2"), (540, "Epoch 40/40: loss 0.19")]
    p = parse_progress(stamped(lines))
    assert p.fraction == 1.0
    assert p.eta_seconds == 0.0


def test_eta_at_counts_down_from_the_last_line():
    p = Progress(current=2, total=4, unit=EPOCH, fraction=0.5, eta_seconds=100.0,
                 done=2.0, as_of=T0)
    assert p.eta_at(T0 + timedelta(seconds=30)) == 70.0
    assert p.eta_at(T0 + timedelta(seconds=300)) == 0.0
    assert Progress(1, None, EPOCH, None, None).eta_at(T0) is None


def test_pairs_are_accepted_too():
    p = parse_progress([(T0, "Epoch 1/2: a"), (T0 + timedelta(seconds=10), "Epoch 2/2: b")])
    assert (p.current, p.eta_seconds) == (2, 0.0)


@pytest.mark.parametrize(("argv", "expected"), [
    (["horovodrun", "-np", "8", "python", "train.py", "--epochs", "12"], (12, None)),
    (["python", "train.py", "--max_epochs=5", "--max_steps", "1000"], (5, 1000)),
    (["deepspeed", "pretrain_gpt.py", "--train-iters", "500000"], (None, 500000)),
    (["python", "train.py", "--epochs", "many"], (None, None)),
    ([], (None, None)),
])
def test_total_hint_from_args(argv, expected):
    assert total_hint_from_args(argv) == expected


def test_progress_source_prefers_the_launcher_then_master_chief_then_worker_0():
    from odh.training.logs.progress import progress_source
    from odh.training.status.pods import ReplicaState

    launcher = ReplicaState("j-launcher-abcde", "Launcher")
    w0, w1 = ReplicaState("j-worker-0", "Worker", 0), ReplicaState("j-worker-1", "Worker", 1)
    master = ReplicaState("j-master-0", "Master", 0)
    assert progress_source([w1, w0, launcher]) is launcher
    assert progress_source([w0, master]) is master
    assert progress_source([w1, w0]) is w0
    assert progress_source([]) is None


def test_hints_from_job():
    from odh.training.kinds import KINDS
    from odh.training.logs.progress import hints_from_job
    job = {"spec": {"mpiReplicaSpecs": {"Launcher": {"template": {"spec": {"containers": [{
        "command": ["horovodrun", "-np", "8", "python", "/workspace/train_resnet.py",
                    "--epochs", "12"]}]}}}}}}
    assert hints_from_job(KINDS["mpijob"], job) == (12, None)
    torch = {"spec": {"pytorchReplicaSpecs": {"Worker": {"template": {"spec": {"containers": [{
        "command": ["torchrun"], "args": ["train.py", "--max_steps=900"]}]}}},
        "Master": {"template": {"spec": {"containers": [{
            "command": ["torchrun"], "args": ["train.py", "--max_steps=400"]}]}}}}}}
    assert hints_from_job(KINDS["pytorchjob"], torch) == (None, 400)  # the Master's
    assert hints_from_job(KINDS["mpijob"], {}) == (None, None)


def test_a_trainjobs_totals_come_from_its_trainer_command():
    """A TrainJob names its command in spec.trainer: a log that prints no total (Horovod's
    PyTorch example, as a torch runtime's node 0 writes it) reads "Epoch 3 of 90"."""
    from odh.training.kinds import TRAINJOB
    from odh.training.logs.progress import hints_from_job, parse_progress
    job = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
           "spec": {"runtimeRef": {"name": "torch-distributed"},
                    "trainer": {"command": ["torchrun", "/workspace/train.py"],
                                "args": ["--epochs", "90"]}}}
    epochs, steps = hints_from_job(TRAINJOB, job)
    assert (epochs, steps) == (90, None)
    progress = parse_progress(["Train Epoch: 3 [30080/60000 (50%)]\tLoss: 0.2"],
                              total_hint=epochs, step_hint=steps)
    assert progress is not None and (progress.current, progress.total) == (3, 90)
    assert hints_from_job(TRAINJOB, {"spec": {}}) == (None, None)


def test_a_trainjobs_trainer_status_is_its_progress():
    """Upstream's status.trainerStatus (progressPercentage, estimatedRemainingSeconds,
    lastUpdatedTime): the time left counts down from when the trainer said it."""
    from datetime import UTC, datetime

    from odh.training.kinds import MPIJOB, TRAINJOB
    from odh.training.logs.progress import REPORTED, reported_progress
    said = {"progressPercentage": 40, "estimatedRemainingSeconds": 5400,
            "lastUpdatedTime": "2026-01-01T10:00:00Z"}
    progress = reported_progress(TRAINJOB, {"status": {"trainerStatus": said}})
    assert progress is not None
    assert (progress.unit, progress.percent, progress.total) == (REPORTED, 40, 100)
    assert progress.eta_at(datetime(2026, 1, 1, 10, 30, tzinfo=UTC)) == 3600
    only_eta = reported_progress(TRAINJOB, {"status": {"trainerStatus": {
        "estimatedRemainingSeconds": 60, "lastUpdatedTime": "2026-01-01T10:00:00Z"}}})
    assert only_eta is not None and only_eta.percent is None and only_eta.eta_seconds == 60
    # nothing reported (the feature gate off, or not yet), or nonsense: read from the log
    for status in ({}, {"trainerStatus": {"lastUpdatedTime": "2026-01-01T10:00:00Z"}},
                   {"trainerStatus": {"progressPercentage": "40"}},
                   {"trainerStatus": {"progressPercentage": True}}):
        assert reported_progress(TRAINJOB, {"status": status}) is None, status
    assert reported_progress(MPIJOB, {"status": {"trainerStatus": said}}) is None
