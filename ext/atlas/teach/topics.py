"""The problems' topics: a controlled vocabulary, so that the Chinese edition can translate them.

A problem's ``:topic:`` shows beside its title and in the problem bank's topic filter. As free
text it could not be translated (each page spelled its own) and near-duplicates split the
filter; here every topic is one line, marked with ``N_`` so that Babel extracts it into
``atlas.po`` (``tests/i18n/test_i18n_ui.py`` fails until its Chinese is written there), and shown
with ``_``. A topic not listed is an error at the problem's line that names the closest topics
and this fix (CONTRIBUTING "Problems with checked answers").

To add a topic: one line ``N_("the topic"),`` below, in alphabetical order, and its ``msgid`` /
``msgstr`` pair in ``ext/atlas/i18n/locale/zh_CN/LC_MESSAGES/atlas.po``.
"""

from __future__ import annotations

import difflib

from atlas.ui import N_

# fmt: off
TOPICS: tuple[str, ...] = (
    N_("accuracy"),
    N_("algorithms"),
    N_("attention"),
    N_("batch at the compute/bandwidth crossover"),
    N_("batching"),
    N_("beyond"),
    N_("bubble"),
    N_("capacity at an SLO"),
    N_("capacity planning"),
    N_("checkpoints"),
    N_("choosing a mesh"),
    N_("communication"),
    N_("compute"),
    N_("context"),
    N_("cost"),
    N_("CUDA graphs"),
    N_("disaggregation"),
    N_("encoders"),
    N_("environments"),
    N_("formats"),
    N_("kernels"),
    N_("KV-cache capacity"),
    N_("layouts"),
    N_("load balance"),
    N_("memory"),
    N_("nsight"),
    N_("occupancy"),
    N_("open and closed loops"),
    N_("parallelism"),
    N_("placement"),
    N_("precision"),
    N_("preemption"),
    N_("prefix-cache savings"),
    N_("quantization"),
    N_("reduction"),
    N_("reliability"),
    N_("roofline"),
    N_("routing"),
    N_("scaling"),
    N_("serving"),
    N_("speculation"),
    N_("synchronisation"),
    N_("systems"),
    N_("tail latency"),
    N_("throughput"),
    N_("tokens"),
    N_("torch.profiler"),
    N_("traffic"),
    N_("TTFT under chunked prefill"),
)
# fmt: on

HOW_TO_ADD = (
    'to add it, write the line N_("{topic}"), in TOPICS in ext/atlas/teach/topics.py and its '
    'Chinese in ext/atlas/i18n/locale/zh_CN/LC_MESSAGES/atlas.po (msgid "{topic}" / msgstr '
    '"..."); tests/i18n/test_i18n_ui.py checks both'
)


def closest(topic: str, count: int = 3) -> list[str]:
    """The listed topics nearest to ``topic`` in spelling (case-insensitive), best first."""
    by_lower = {t.lower(): t for t in TOPICS}
    near = difflib.get_close_matches(topic.lower(), by_lower, n=count, cutoff=0.5)
    return [by_lower[t] for t in near]


def unknown_topic_message(title: str, topic: str) -> str:
    """Why ``topic`` is refused, the nearest topics, and the one-line fix."""
    near = closest(topic)
    suggest = f"the closest are {', '.join(near)}; " if near else ""
    return (
        f'problem "{title}": :topic: {topic!r} is not a topic of the book ({suggest}the '
        f"{len(TOPICS)} topics are in ext/atlas/teach/topics.py). Use one of them, or, if none "
        f"fits, {HOW_TO_ADD.format(topic=topic)}"
    )


__all__ = ["HOW_TO_ADD", "TOPICS", "closest", "unknown_topic_message"]
