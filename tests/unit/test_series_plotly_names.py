"""odh.training.metrics.series: names made of Prometheus labels reach Plotly as plain text.

Plotly draws trace names (legend, hover) as its own little HTML: a `gpu` label such as
`<b>0</b>` would be drawn bold, `<a href=...>` a link. The charts get the name escaped
(`label`); the tables under them (Django escapes them) keep the plain `name`.
"""

from __future__ import annotations

from odh.training.metrics.series import parse_matrix, plotly_text

JOB = "bert-large"


def gpu_series(gpu: str) -> dict:
    return {"metric": {"pod": f"{JOB}-worker-0", "gpu": gpu},
            "values": [[1_714_557_600.0, "42"]]}


def test_plotly_markup_in_a_gpu_label_is_escaped_for_the_charts():
    [series] = parse_matrix([gpu_series('<a href="https://x.example">0</a>&<br>')], JOB,
                            gpu=True)
    chart = series.as_dict()
    assert chart["label"] == ("worker-0 GPU &lt;a href=\"https://x.example\"&gt;0&lt;/a&gt;"
                              "&amp;&lt;br&gt;")
    assert "<" not in chart["label"] and ">" not in chart["label"]
    # the tables show the label as it is (Django escapes it there)
    assert chart["name"] == 'worker-0 GPU <a href="https://x.example">0</a>&<br>'


def test_escaping_is_done_once_and_leaves_plain_names_alone():
    assert plotly_text("a & b") == "a &amp; b"
    assert plotly_text("&lt;") == "&amp;lt;"  # an entity in a label is shown, not decoded
    assert plotly_text("worker-2 GPU 0") == "worker-2 GPU 0"
    [series] = parse_matrix([gpu_series("3")], JOB, gpu=True)
    assert series.as_dict()["label"] == series.as_dict()["name"] == "worker-0 GPU 3"


def test_a_template_variable_in_a_label_stays_text():
    # the hover template names the trace with %{fullData.name} (static/js/metrics.js), so
    # a "%{y}" in the name is not read as a variable; the name itself keeps it as text
    [series] = parse_matrix([gpu_series("%{y}")], JOB, gpu=True)
    assert series.as_dict()["label"] == "worker-0 GPU %{y}"
