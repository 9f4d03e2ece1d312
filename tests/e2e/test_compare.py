"""The compare page in the dark theme (issue 21, item 7): its charts' text readable (WCAG
contrast of the colours the browser computed), a sentence in place of a chart with nothing
to draw, and each setting's name in a cell apart from its values."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.e2e.conftest import SCREENSHOTS, sign_in
from tests.e2e.test_accessibility import serious_findings

# gpt2-finetune failed (OOM) after its GPUs worked for minutes, and logged no progress;
# llama-13b-pretrain waits for the project's quota: no GPU use, no progress.
COMPARE = ("/jobs/compare/?job=team-nlp/mpijob/gpt2-finetune"
           "&job=team-nlp/mpijob/llama-13b-pretrain")
RGB = re.compile(r"rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)")

# Each text of the Plotly charts: its fill, and the backgrounds under it from the nearest
# up (the chart's paper where the chart's element is, then each ancestor's computed
# background), every colour as the browser computes it (rgb() or rgba()).
CHART_TEXTS = """() => {
  const probe = document.createElement("span");
  document.body.appendChild(probe);
  const computed = colour => { probe.style.color = ""; probe.style.color = colour;
                               return getComputedStyle(probe).color; };
  const texts = [];
  document.querySelectorAll(".js-plotly-plot .main-svg text").forEach(text => {
    const box = text.getBoundingClientRect();
    if (!text.textContent.trim() || box.width === 0) return;
    const style = getComputedStyle(text);
    const layers = [];
    for (let node = text.parentElement; node; node = node.parentElement) {
      if (node.classList.contains("js-plotly-plot")) {
        layers.push(computed(node._fullLayout.paper_bgcolor));
      }
      layers.push(getComputedStyle(node).backgroundColor);
    }
    const kind = [text, text.parentElement].map(e => e.getAttribute("class") || "").join(" ");
    texts.push({text: text.textContent.trim(), kind: kind,
                fill: style.fill, alpha: parseFloat(style.fillOpacity) * parseFloat(style.opacity),
                layers: layers});
  });
  probe.remove();
  return texts;
}"""
# The same for a paragraph of the page: its colour and the backgrounds under it.
HTML_TEXT = """element => {
  const layers = [];
  for (let node = element; node; node = node.parentElement) {
    layers.push(getComputedStyle(node).backgroundColor);
  }
  return {fill: getComputedStyle(element).color, alpha: 1, layers: layers};
}"""


def _rgba(colour: str) -> tuple[float, float, float, float]:
    match = RGB.fullmatch(colour.strip())
    assert match, f"not a colour: {colour!r}"
    r, g, b, a = match.groups()
    return float(r), float(g), float(b), float(a) if a is not None else 1.0


def _over(top: tuple[float, ...], under: tuple[float, float, float]) -> tuple[float, ...]:
    """`top` (with its alpha) painted over the opaque colour `under`."""
    a = top[3]
    return tuple(top[i] * a + under[i] * (1 - a) for i in range(3))


def _background(layers: list[str]) -> tuple[float, ...]:
    """What shows under a text: the layers from the nearest down to the first opaque one
    (the browser's white canvas under them all), painted one over another."""
    stack = []
    for layer in map(_rgba, layers):
        stack.append(layer)
        if layer[3] >= 1:
            break
    colour: tuple[float, ...] = (255.0, 255.0, 255.0)
    for layer in reversed(stack):
        colour = _over(layer, colour)
    return colour


def _luminance(rgb: tuple[float, ...]) -> float:
    """WCAG 2's relative luminance of an sRGB colour (0-255 channels)."""
    def linear(channel: float) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(sample: dict) -> float:
    """WCAG 2's contrast ratio of a text's colour (over its background) to the background."""
    background = _background(sample["layers"])
    fill = _rgba(sample["fill"])
    text = _over((*fill[:3], fill[3] * sample["alpha"]), background)
    lighter, darker = sorted((_luminance(text), _luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def test_the_contrast_formula():
    assert round(contrast({"fill": "rgb(0, 0, 0)", "alpha": 1,
                           "layers": ["rgb(255, 255, 255)"]}), 1) == 21.0
    assert round(contrast({"fill": "rgb(118, 118, 118)", "alpha": 1,
                           "layers": ["rgba(0, 0, 0, 0)", "rgb(255, 255, 255)"]}), 2) == 4.54
    assert contrast({"fill": "rgb(0, 0, 0)", "alpha": 1, "layers": ["rgba(0, 0, 0, 0.5)"]}) < 6


def test_in_the_dark_theme_the_compare_page_is_readable(browser, live_dashboard):
    # bypass_csp: axe is added as a script of the page, which the Content-Security-Policy
    # would refuse
    context = browser.new_context(color_scheme="dark", viewport={"width": 1440, "height": 900},
                                  bypass_csp=True)
    page = context.new_page()
    try:
        sign_in(page, live_dashboard, "alice", COMPARE)
        expect(page.locator("html")).to_have_class(re.compile(r"\bpf-v6-theme-dark\b"))

        # the GPU chart is drawn; every text in it reads at 4.5:1 or more
        gpu = page.locator("#compare-chart-gpu")
        expect(gpu.locator(".legendtext")).to_have_text(["gpt2-finetune"])
        texts = page.evaluate(CHART_TEXTS)
        kinds = " ".join(t["kind"] for t in texts)
        for kind in ("xtick", "ytick", "xtitle", "ytitle", "legendtext"):
            assert kind in kinds, f"no {kind} text among {kinds}"
        low = [f"{t['text']!r} ({t['kind']}): {contrast(t):.2f}:1 ({t['fill']} on "
               f"{t['layers'][:3]})" for t in texts if contrast(t) < 4.5]
        assert not low, "chart text under 4.5:1 in the dark theme:\n" + "\n".join(low)
        # the job without GPU use is named under the chart
        gpu_card = page.locator(".dash-chart-card", has=page.get_by_role(
            "heading", name="GPU utilization (%)"))
        expect(gpu_card).to_contain_text("llama-13b-pretrain has not started: no GPU "
                                          "utilization yet.")

        # no job has progress: a sentence for each, and no empty chart
        progress = page.locator(".dash-chart-card", has=page.get_by_role(
            "heading", name="Training done (%)"))
        empty = progress.locator(".dash-chart-empty")
        expect(empty).to_contain_text("No progress was read from the logs of gpt2-finetune.")
        expect(empty).to_contain_text("llama-13b-pretrain has not started: no progress yet.")
        expect(progress.locator(".js-plotly-plot")).to_have_count(0)
        said = page.evaluate(HTML_TEXT, empty.locator("p").first.element_handle())
        assert contrast(said) >= 4.5, said

        # a setting's name and its values: a row header and cells of their own, apart
        name = page.get_by_role("rowheader", name="Memory per worker")
        expect(name).to_contain_text("(differs)")  # an icon and a word, not colour alone
        expect(name.locator(".fa-not-equal")).to_be_visible()
        row = page.get_by_role("row").filter(has=name)
        expect(row.get_by_role("cell")).to_have_text(["48Gi", "700Gi"])
        expect(name).not_to_contain_text("Gi")
        for width in (1440, 390):  # side by side; stacked on a phone (PatternFly's grid)
            page.set_viewport_size({"width": width, "height": 900})
            name.scroll_into_view_if_needed()
            label, value = name.bounding_box(), row.get_by_role("cell").first.bounding_box()
            assert (value["x"] >= label["x"] + label["width"]
                    or value["y"] >= label["y"] + label["height"]), (width, label, value)

        page.set_viewport_size({"width": 1440, "height": 900})
        assert serious_findings(page, COMPARE) == []
        SCREENSHOTS.mkdir(exist_ok=True)
        page.locator(".dash-charts").screenshot(path=str(SCREENSHOTS / "compare-charts-dark.png"))
    finally:
        context.close()
