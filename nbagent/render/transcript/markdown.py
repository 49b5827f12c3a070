"""A transcript's items as Markdown: what a cell keeps after the run (tool cards as ``<details>``
HTML, which Markdown keeps).
"""

from __future__ import annotations

from nbagent.core.markup import code_markdown, html_block, plain_markdown
from nbagent.render.transcript.html import call_html, item_html
from nbagent.render.transcript.items import AnswerItem, Call, Delta, Item, Search, Tasks
from nbagent.render.transcript.summaries import TASK_MARK, delta_line, tasks_heading


def item_markdown(item: Item, verbose: bool = False) -> str:
    """Render one item as Markdown (tool cards as ``<details>`` HTML, which Markdown keeps).

    Args:
        item: The item.
        verbose: The verbose mode (for tool cards).

    Returns:
        The Markdown.
    """
    if isinstance(item, AnswerItem):
        return answer_markdown(item)
    if isinstance(item, Call):
        return html_block(call_html(item, verbose))
    if isinstance(item, Tasks):
        return tasks_markdown(item)
    if isinstance(item, Search):
        return search_markdown(item)
    if isinstance(item, Delta):
        return f"**{plain_markdown(delta_line(item))}**"
    if item.detail:
        return html_block(item_html(item))
    message = plain_markdown(item.message)
    return f"> Warning: {message}" if item.level == "warning" else f"> {message}"


def answer_markdown(answer: AnswerItem) -> str:
    """A stretch of text as Markdown; the run's answer is set apart from the narration.

    The text is rendered here (:func:`~nbagent.core.markup.model_html`: no raw HTML, web links
    only) and kept as one HTML block; the answer goes after a rule.

    Args:
        answer: The stretch.

    Returns:
        The Markdown.
    """
    if not answer.final:
        return answer.markdown
    return html_block(f'<hr class="nbagent-rule">\n{answer.markdown}')


def search_markdown(search: Search) -> str:
    """A ToolSearch as a Markdown table (``%tool_search``, or a search without a card).

    Args:
        search: The search.

    Returns:
        The Markdown.
    """
    note = f"\n\nRanked by {plain_markdown(search.fallback)}." if search.fallback else ""
    query = code_markdown(search.query)
    if not search.hits:
        return f"ToolSearch {query}: no match{note}"
    shown = search.loaded is not None
    rows = "\n".join(
        f"| {code_markdown(n)} | {s} | {plain_markdown('; '.join(r))} |"
        + (f" {search.context(n)} |" if shown else "")
        for n, s, r in search.printed_hits()
    )
    header = "| tool | score | why |" + (" context |" if shown else "")
    rule = "|---|--:|---|" + ("---|" if shown else "")
    return f"ToolSearch {query}\n\n{header}\n{rule}\n{rows}{note}"


def tasks_markdown(item: Tasks) -> str:
    """The task list as a checklist, one task a line.

    Args:
        item: The task list.

    Returns:
        E.g. ``☑ 1. Load the data`` lines under a heading (each subject shown as written).
    """
    rows = [f"{TASK_MARK[t.status]} {plain_markdown(f'{t.id}. {t.subject}')}" for t in item.tasks]
    return "  \n".join([f"**{tasks_heading(item)}**", *rows])
