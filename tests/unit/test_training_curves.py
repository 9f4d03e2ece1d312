"""Training curves read from logs: each framework's wording, rank 0 only, read in pieces
as the watcher reads them (each line once), bounded; shaped for charts and export."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from odh.training.logs import curves
from odh.training.logs.curves import EPOCH, STEP, CurveReader, read_curves, values
from odh.training.metrics.export import csv_text
from odh.training.metrics.training import compare_curves, export_series, training_charts

T0 = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)


def stamped(lines: list[tuple[float, str]]) -> list[str]:
    return [(T0 + timedelta(seconds=s)).strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z " + text
            for s, text in lines]


SIM_LAUNCHER = stamped([
    (0, "[1,0]<stdout>:Horovod rank 0/8 (local rank 0) started on bert-worker-0"),
    (1, "[1,0]<stdout>:Model: ResNet-50, batch size 64 per rank, 8 ranks, 2 epochs"),
    (5, "[1,0]<stdout>:Epoch 1/2 step 250/500: loss 2.3011, lr 0.198, 2734.2 img/sec"),
    (6, "[1,3]<stdout>:Epoch 1/2 step 250/500: loss 9.9999, lr 0.5, 1.0 img/sec"),
    (10, "[1,0]<stdout>:Epoch 1/2: loss 2.1012, accuracy 0.1641, 2741.0 img/sec "
         "(342.6 img/sec per rank)"),
    (15, "[1,0]<stdout>:Epoch 2/2 step 250/500: loss 1.9342, lr 0.03, 2760.9 img/sec"),
    (20, "[1,0]<stdout>:Epoch 2/2: loss 1.8120, accuracy 0.2294, 2755.3 img/sec "
         "(344.4 img/sec per rank)"),
    (21, "[1,0]<stdout>:Training complete: 2 epochs in 20.0s, final loss 1.8120"),
    (22, "[1,0]<stdout>:Total img/sec on 8 rank(s): 2748.1 +-33.0"),
])


def points(reader: CurveReader, name: str, per: str) -> list[tuple]:
    return [(q[0], q[1], q[2]) for q in reader.series[f"{name}@{per}"].points]


def test_simclusters_launcher_gives_loss_lr_accuracy_and_throughput_by_step_and_epoch():
    reader = read_curves(SIM_LAUNCHER)
    assert reader.names == ["loss", "lr", "img/sec", "accuracy", "img/sec per rank"]
    # global steps: 500 a epoch; rank 3's line and the summary lines are not points
    assert points(reader, "loss", STEP) == [(250, 0.5, 2.3011), (750, 1.5, 1.9342)]
    assert points(reader, "loss", EPOCH) == [(500, 1.0, 2.1012), (1000, 2.0, 1.8120)]
    assert points(reader, "accuracy", EPOCH) == [(500, 1.0, 0.1641), (1000, 2.0, 0.2294)]
    assert points(reader, "lr", STEP) == [(250, 0.5, 0.198), (750, 1.5, 0.03)]
    assert [q[2] for q in reader.series["img/sec per rank@epoch"].points] == [342.6, 344.4]
    assert reader.series["loss@step"].points[0][3] == (T0 + timedelta(seconds=5)).timestamp()


def test_name_value_pairs_of_each_framework_are_read():
    assert values("loss=0.31, Accuracy: 0.9 | learning rate: 1.5E-04") == [
        ("loss", 0.31), ("accuracy", 0.9), ("learning_rate", 0.00015)]
    assert values("lr=[0.0001], mom=[(0.9, 0.999)]") == [("lr", 0.0001)]
    assert values("{'loss': 0.5, 'learning_rate': 5e-05, 'epoch': 0.5}") == [
        ("loss", 0.5), ("learning_rate", 5e-05), ("epoch", 0.5)]
    assert values("12s 26ms/step - loss: 0.3 - accuracy: 0.91") == [
        ("loss", 0.3), ("accuracy", 0.91)]
    assert values("5.40it/s, loss=nan, tokens/sec: 1200") == [("it/s", 5.4),
                                                              ("tokens/sec", 1200.0)]


def test_each_frameworks_position_is_read():
    reader = read_curves([
        "Train Epoch: 3 [30000/60000 (50%)]\tLoss: 0.2",  # Horovod's PyTorch MNIST
        "Epoch 2/4",  # Keras
        "469/469 [==============================] - 12s 26ms/step - loss: 0.31 - "
        "accuracy: 0.9",
        " iteration      182/  250000 | consumed samples: 23296 | learning rate: 1.500E-04 |"
        " lm loss: 6.123E+00 |",  # Megatron
        "[Rank 0] step=120, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]",  # DeepSpeed
        "[Rank 1] step=120, skipped=0, lr=[0.5]",
        "step 40: perplexity=12.5",
        "Saving a checkpoint, no numbers",
    ])
    assert points(reader, "loss", STEP)[0] == (None, 2.5, 0.2)
    assert points(reader, "loss", EPOCH) == [(938, 2, 0.31)]
    assert points(reader, "accuracy", EPOCH) == [(938, 2, 0.9)]
    assert points(reader, "lm loss", STEP) == [(182, None, 6.123)]
    assert points(reader, "learning_rate", STEP)[0] == (182, None, 0.00015)
    assert points(reader, "lr", STEP) == [(120, None, 0.0001)]
    hugging_face = read_curves(["{'loss': 0.5, 'learning_rate': 5e-05, 'epoch': 0.5}"])
    assert points(hugging_face, "loss", STEP) == [(None, 0.5, 0.5)]
    assert points(reader, "perplexity", STEP) == [(40, None, 12.5)]
    assert "consumed samples" not in reader.names and "epoch" not in reader.names


def test_a_log_without_metrics_gives_no_charts():
    reader = read_curves(["Server listening on 0.0.0.0 port 22.", "Epoch 3/40 done",
                          "final loss 0.3"])
    assert reader.series == {}
    assert training_charts(reader) == [] and training_charts(None) == []
    assert export_series(reader) == {}


def test_read_in_pieces_each_line_counts_once_whatever_the_overlap():
    whole = read_curves(SIM_LAUNCHER)
    reader = CurveReader()
    assert reader.since_seconds(T0) is None  # the first read: from the start
    reader.feed_log("\n".join(SIM_LAUNCHER[:4]) + "\n")
    state = reader.state()
    again = CurveReader(state)  # the watcher restarted: carries on from the row
    assert again.since_seconds(T0 + timedelta(seconds=16)) == 10 + 60
    # the next read starts before the last line read (sinceSeconds with slack)
    again.feed_log("\n".join(SIM_LAUNCHER[1:]) + "\n")
    assert again.state()["series"] == whole.state()["series"]


def test_lines_of_the_same_instant_are_told_apart_by_their_count():
    same = stamped([(1, "step 1: loss=1.0"), (1, "step 2: loss=0.9")])
    reader = CurveReader()
    reader.feed_log(same[0] + "\n")
    reader.feed_log("\n".join(same) + "\n")
    assert points(reader, "loss", STEP) == [(1, None, 1.0), (2, None, 0.9)]
    reader.feed_log("\n".join(same) + "\n")  # nothing new
    assert len(reader.series["loss@step"].points) == 2


def test_a_cut_read_leaves_its_partial_last_line_for_the_next():
    reader = CurveReader()
    text = "\n".join(stamped([(1, "step 1: loss=1.0"), (2, "step 2: loss=0.")]))
    reader.feed_log(text, cut=True)
    assert points(reader, "loss", STEP) == [(1, None, 1.0)]
    reader.feed_log("\n".join(stamped([(2, "step 2: loss=0.95")])) + "\n")
    assert points(reader, "loss", STEP) == [(1, None, 1.0), (2, None, 0.95)]


def test_what_is_kept_is_bounded(monkeypatch):
    monkeypatch.setattr(curves, "MAX_POINTS", 10)
    monkeypatch.setattr(curves, "MAX_NAMES", 2)
    reader = read_curves([f"step {i}: loss={1 / i}, acc={i}, other={i}" for i in range(1, 101)])
    assert reader.names == ["loss", "acc"] and reader.left_out == 100
    kept = reader.series["loss@step"].points
    assert len(kept) <= 10 and kept[0][0] == 1 and kept[-1][0] == 100  # the whole shape
    assert [q[0] for q in kept] == sorted(q[0] for q in kept)


def test_a_restart_from_a_checkpoint_replaces_the_steps_run_again():
    reader = read_curves([f"step {i}: loss={10 - i}" for i in (1, 2, 3, 4)] +
                         [f"step {i}: loss={20 - i}" for i in (3, 4, 5)])
    assert points(reader, "loss", STEP) == [(1, None, 9), (2, None, 8), (3, None, 17),
                                            (4, None, 16), (5, None, 15)]


def test_charts_one_per_metric_by_step_with_the_epoch_summaries_on_the_same_axis():
    charts = training_charts(read_curves(SIM_LAUNCHER))
    assert [c["title"] for c in charts] == ["Loss", "Learning rate", "Images per second",
                                            "Accuracy", "Images per second per rank"]
    loss = charts[0]
    assert loss["axis"] == STEP and loss["axis_title"] == "Step"
    assert [(t["per"], t["x"], t["y"]) for t in loss["traces"]] == [
        (STEP, [250, 750], [2.3011, 1.9342]), (EPOCH, [500, 1000], [2.1012, 1.812])]
    assert loss["traces"][1]["lowest"] == 1.812 and loss["traces"][1]["count"] == 2


def test_a_metric_without_steps_is_charted_by_epoch_under_its_logged_name():
    charts = training_charts(read_curves(["Epoch 1/2: bleu=1.5", "Epoch 2/2: bleu=1"]))
    assert charts[0]["axis"] == EPOCH and charts[0]["traces"][0]["x"] == [1, 2]
    assert charts[0]["title"] == "bleu" and charts[0]["axis_title"] == "Epoch"
    assert charts[0]["traces"][0]["label"] == "End of epoch"


def test_export_and_its_csv_carry_step_epoch_value_and_time():
    data = export_series(read_curves(SIM_LAUNCHER))
    assert data["loss"][0] == {"step": 250, "epoch": 0.5, "value": 2.3011,
                               "time": "2024-05-01T10:00:05Z"}
    assert data["loss@epoch"][1]["epoch"] == 2
    rows = csv_text({"training": {"loss": data["loss"]}}).splitlines()
    assert rows == ["series,time,value,step,epoch",
                    "training/loss,2024-05-01T10:00:05Z,2.3011,250,0.5",
                    "training/loss,2024-05-01T10:00:15Z,1.9342,750,1.5"]


def test_compare_overlays_each_runs_curve_of_a_metric():
    other = read_curves(["Epoch 1/1: loss=0.7"])
    charts = compare_curves([read_curves(SIM_LAUNCHER), None, other])
    loss = charts[0]
    assert loss["title"] == "Loss" and loss["axis_title"] == "Epoch"  # run 2 has no steps
    assert [(t["run"], t["x"], t["y"]) for t in loss["traces"]] == [
        (0, [0.5, 1.5], [2.3011, 1.9342]), (2, [1], [0.7])]


# -- curves a job pushed to Prometheus (odh/training/metrics/pushed.py) -------------------------
def matrix(name: str, values: list[tuple[float, str]], **labels: str) -> dict:
    return {"metric": {"__name__": name, "namespace": "team-nlp", "job": "bert", **labels},
            "values": [[t, v] for t, v in values]}


PUSHED = [  # a query_range answer, as Prometheus gives it (values as text)
    matrix("training_step", [(100.0, "10"), (115.0, "20"), (130.0, "20"), (145.0, "30")]),
    matrix("training_epoch", [(100.0, "0.5"), (115.0, "1"), (130.0, "1"), (145.0, "1.5")]),
    matrix("training_loss", [(100.0, "2.5"), (115.0, "2.0"), (130.0, "1.9"), (145.0, "NaN")],
           instance="pushgateway:9091"),
    matrix("training_learning_rate", [(115.0, "0.01"), (145.0, "0.005")]),
    matrix("training_accuracy", [(160.0, "0.9")]),  # no step at that instant: not placed
]


def test_pushed_series_are_placed_at_the_step_pushed_beside_them():
    from odh.training.metrics.pushed import pushed_curves, pushed_query

    assert pushed_query("team-nlp", "bert") == \
        '{__name__=~"training_.+",namespace="team-nlp",job="bert"}'
    curves = pushed_curves(PUSHED)
    # step 20 sampled twice: its newest value; NaN left out
    assert curves["loss"] == [(10, 0.5, 2.5, 100.0), (20, 1.0, 1.9, 130.0)]
    assert curves["learning_rate"] == [(20, 1.0, 0.01, 115.0), (30, 1.5, 0.005, 145.0)]
    assert "accuracy" not in curves and "step" not in curves and "epoch" not in curves
    assert pushed_curves([]) == {}


def test_prometheus_series_replace_the_logs_of_the_same_name():
    from odh.training.metrics.pushed import pushed_curves, with_pushed

    log = read_curves(SIM_LAUNCHER)
    merged = with_pushed(log, pushed_curves(PUSHED))
    charts = {c["name"]: c for c in training_charts(merged)}
    assert [(t["per"], t["x"], t["y"]) for t in charts["loss"]["traces"]] == [
        (STEP, [10, 20], [2.5, 1.9])]  # both of the log's loss series replaced
    assert charts["accuracy"]["traces"][0]["y"] == [0.1641, 0.2294]  # the log's: not pushed
    assert charts["learning_rate"]["traces"][0]["x"] == [20, 30]
    assert "loss@epoch" in log.series  # the log's own reader is left as it was
    assert with_pushed(log, {}) is log
    assert training_charts(with_pushed(None, pushed_curves(PUSHED)))[0]["name"] == "loss"


def test_a_run_ends_with_each_metrics_last_value_the_well_known_first():
    from odh.training.logs.curves import CurveReader
    from odh.training.metrics.training import final_figures

    reader = CurveReader({"series": [
        {"name": "lr", "per": "step", "points": [[1, 1, 0.1, None], [2, 1, 0.05, None]]},
        {"name": "accuracy", "per": "step", "points": [[1, 1, 0.5, None], [2, 1, 0.8, None]]},
        {"name": "loss", "per": "step", "points": [[1, 1, 2.0, None], [2, 1, 0.9, None]]},
        {"name": "loss", "per": "epoch", "points": [[None, 1, 1.0, None]]}]})
    assert final_figures(reader) == [("Loss", 1), ("Accuracy", 0.8), ("Learning rate", 0.05)]
    assert final_figures(reader, most=1) == [("Loss", 1)]
    assert final_figures(None) == []
