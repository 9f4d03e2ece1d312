"""What training costs: the prices an administrator sets, and the arithmetic over them.

A job is charged for what it asks for, over the time it runs (how the job history counts
GPU-hours: odh.training.status.history): GPUs x hours at the price of its GPU model, plus
CPUs x hours and GiB of memory x hours, all the pods' requests (Launcher and Workers)
added up. The GPU model is the one the job's node selector names (the node label
`nvidia.com/gpu.product`); a job that names none is charged at the assumed model, the
most common priced model on the cluster's nodes (said so wherever a cost is shown).

Pure: the dashboard, the CLI and the SDK compute the same numbers. Prices travel as JSON
(`Prices.to_json` / `Prices.from_json`): the dashboard publishes them in a ConfigMap
(PRICES_CONFIGMAP) that everyone signed in may read, which is where the CLI and SDK get
them.

The parts: prices (what is set, and money), charging (one job), chargeback (a period's jobs).
"""

from __future__ import annotations

from odh.training.cost.chargeback import (
    Charge,
    Chargeback,
    Line,
    Record,
    chargeback,
    csv_rows,
)
from odh.training.cost.charging import (
    Ask,
    Cost,
    Usage,
    cost,
    describe_lines,
    expected_hours,
    gpu_models,
    gpus_by_model,
    hourly,
    job_ask,
    job_cost,
    usage,
)
from odh.training.cost.prices import (
    CENT,
    CURRENCIES,
    DEFAULT_NAMESPACE,
    GIB,
    GPU_PRODUCT_LABEL,
    HOUR,
    MAX_PRICE,
    PLACES,
    PRICES_CONFIGMAP,
    PRICES_KEY,
    ZERO,
    PriceError,
    Prices,
    assumed_model,
    money,
    parse_currency,
    parse_price,
    read_prices,
)

__all__ = [
    "CENT",
    "CURRENCIES",
    "DEFAULT_NAMESPACE",
    "GIB",
    "GPU_PRODUCT_LABEL",
    "HOUR",
    "MAX_PRICE",
    "PLACES",
    "PRICES_CONFIGMAP",
    "PRICES_KEY",
    "ZERO",
    "Ask",
    "Charge",
    "Chargeback",
    "Cost",
    "Line",
    "PriceError",
    "Prices",
    "Record",
    "Usage",
    "assumed_model",
    "chargeback",
    "cost",
    "csv_rows",
    "describe_lines",
    "expected_hours",
    "gpu_models",
    "gpus_by_model",
    "hourly",
    "job_ask",
    "job_cost",
    "money",
    "parse_currency",
    "parse_price",
    "read_prices",
    "usage",
]
