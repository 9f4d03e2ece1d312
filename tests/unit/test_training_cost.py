"""What training costs (odh.training.cost): prices as typed, what a job asks for, its cost
per hour and over its run, and the chargeback adding up to the history's GPU-hours."""

from __future__ import annotations

from decimal import Decimal

import pytest

from odh.training import cost
from odh.training.kinds import MPIJOB
from odh.training.kinds.mpijob.model import MPIJobSpec
from odh.training.spec import build_manifest

A100 = "NVIDIA-A100-SXM4-80GB"
H100 = "NVIDIA-H100-80GB-HBM3"
PRICES = cost.Prices(currency="USD", gpu={A100: Decimal("2.50"), H100: Decimal("4")},
                     cpu_hour=Decimal("0.05"), gib_hour=Decimal("0.01"))


def _manifest(gpu_product: str = "", workers: int = 2, gpus: int = 4) -> dict:
    spec = MPIJobSpec(name="bert", namespace="team-nlp", image="quay.io/x/bert:1",
                      command=["horovodrun", "python", "t.py"], workers=workers,
                      cpu_per_worker="8", memory_per_worker="32Gi", gpus_per_worker=gpus,
                      launcher_cpu="2", launcher_memory="8Gi")
    manifest = build_manifest(spec)
    if gpu_product:
        worker = manifest["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
        worker["nodeSelector"] = {cost.GPU_PRODUCT_LABEL: gpu_product}
    return manifest


@pytest.mark.parametrize("typed, value", [("2.5", Decimal("2.5")), (" 0 ", Decimal(0)),
                                          ("2,75", Decimal("2.75")), ("", None),
                                          ("0.0000004", Decimal(0))])
def test_a_price_is_read_as_typed(typed, value):
    assert cost.parse_price(typed, "cpu") == value


@pytest.mark.parametrize("typed, words", [("abc", "is not a number"),
                                          ("NaN", "is not a number"),
                                          ("1e400000", "at most"),
                                          ("-1", "cannot be negative"),
                                          ("2.5.1", "is not a number")])
def test_a_bad_price_is_refused_with_the_reason(typed, words):
    with pytest.raises(cost.PriceError) as refused:
        cost.parse_price(typed, "cpu")
    assert words in refused.value.message
    assert refused.value.field == "cpu"


def test_a_currency_is_an_iso_4217_code():
    assert cost.parse_currency(" eur ") == "EUR"
    for bad in ("EURO", "XYZ", "", "$"):
        with pytest.raises(cost.PriceError, match="ISO 4217"):
            cost.parse_currency(bad)


def test_prices_survive_their_published_json():
    assert cost.Prices.from_json(PRICES.to_json()) == PRICES
    assert not cost.Prices.from_json("not json").is_set
    assert not cost.Prices.from_json('{"currency": "ZZZ", "gpu": {"x": "1"}}').is_set
    assert not cost.Prices().is_set


def test_a_job_asks_for_every_pod_of_it():
    ask = cost.job_ask(MPIJOB, _manifest(A100))
    assert ask.gpus == 8
    assert ask.cpus == 2 * 8 + 2
    assert ask.gib == 2 * 32 + 8
    assert ask.gpu_model == A100


def test_an_hour_costs_each_resource_at_its_price():
    per_hour = cost.hourly(cost.job_ask(MPIJOB, _manifest(H100)), PRICES)
    # 8 GPUs x 4 + 18 CPUs x 0.05 + 72 GiB x 0.01
    assert per_hour.total == Decimal("32") + Decimal("0.90") + Decimal("0.72")
    assert per_hour.text == "33.62 USD"
    assert not per_hour.assumed


def test_a_job_naming_no_model_is_charged_at_the_most_common_priced_one():
    on_nodes = {A100: 40, H100: 8, "Tesla-T4": 100}
    assumed = cost.assumed_model(PRICES, on_nodes)
    assert assumed == A100  # T4 has no price
    per_hour = cost.hourly(cost.job_ask(MPIJOB, _manifest()), PRICES, assumed)
    assert per_hour.assumed and per_hour.gpu_model == A100
    assert per_hour.gpu == 8 * Decimal("2.50")
    assert A100 in per_hour.basis
    # no node known: the cheapest priced model
    assert cost.assumed_model(PRICES, {}) == A100


def test_no_price_no_cost():
    ask = cost.job_ask(MPIJOB, _manifest(A100))
    assert cost.hourly(ask, cost.Prices()) is None
    unpriced = cost.chargeback([_record("team-nlp", "alice", "a", 16.0, 7200)], cost.Prices())
    assert not unpriced.priced and unpriced.gpu_hours == 16  # the hours, without a cost
    assert cost.describe_lines(cost.Prices(), MPIJOB, _manifest(A100), 3600, True) == []


def test_a_model_without_a_price_costs_only_its_cpus_and_memory():
    per_hour = cost.hourly(cost.job_ask(MPIJOB, _manifest("Tesla-T4")), PRICES, A100)
    assert per_hour.gpu == 0 and not per_hour.assumed
    assert per_hour.total == Decimal("0.90") + Decimal("0.72")


def _record(project, person, name, gpu_hours, seconds, model=A100):
    return cost.Record(project=project, person=person, kind=MPIJOB, name=name,
                       uid=f"uid-{name}", spec=_manifest(model), seconds=seconds,
                       gpu_hours=gpu_hours)


def test_the_chargeback_adds_up_to_the_histories_gpu_hours_times_the_prices():
    records = [_record("team-nlp", "alice", "a", 16.0, 7200),
               _record("team-nlp", "bob", "b", 4.0, 1800, H100),
               _record("team-cv", "alice", "c", 8.0, 3600)]
    result = cost.chargeback(records, PRICES, A100)
    assert result.gpu_hours == 28
    cpu_gib = (Decimal(2) + Decimal("0.5") + 1) * (18 * Decimal("0.05") + 72 * Decimal("0.01"))
    expected = (16 + 8) * Decimal("2.50") + 4 * 4 + cpu_gib
    assert result.total == expected
    assert [(ln.key, ln.jobs) for ln in result.by_project] == [("team-nlp", 2), ("team-cv", 1)]
    assert sum(ln.amount for ln in result.by_person) == expected
    rows = cost.csv_rows(result)
    assert rows[0][7] == "gpu_hours" and rows[0][10] == "cost"
    assert sum(Decimal(r[7]) for r in rows[1:-1]) == Decimal(rows[-1][7]) == 28
    assert Decimal(rows[-1][10]) == expected.quantize(Decimal("0.0001"))


def test_money_reads_plainly():
    assert cost.money(Decimal("1234.567"), "EUR") == "1,234.57 EUR"
    assert cost.money(Decimal("0.001"), "USD") == "under 0.01 USD"
    assert cost.money(Decimal(0), "USD") == "0.00 USD"


def test_expected_hours():
    assert cost.expected_hours("6") == 6
    assert cost.expected_hours("") is None
    for bad in ("soon", "0", "-2", "100000"):
        with pytest.raises(cost.PriceError):
            cost.expected_hours(bad)


def test_the_gpu_models_are_the_nodes_labels():
    nodes = [{"metadata": {"labels": {cost.GPU_PRODUCT_LABEL: A100}},
              "status": {"allocatable": {"nvidia.com/gpu": "8"}}},
             {"metadata": {"labels": {cost.GPU_PRODUCT_LABEL: A100}},
              "status": {"allocatable": {"nvidia.com/gpu": "8"}}},
             {"metadata": {"labels": {}}, "status": {"allocatable": {"cpu": "32"}}}]
    assert cost.gpus_by_model(nodes) == {A100: 16}
    assert cost.gpu_models(nodes) == [A100]
