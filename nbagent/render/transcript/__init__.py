"""A run as a person reads it: a list of items, and its static renderings (HTML, Markdown,
plain text).

:class:`~nbagent.render.transcript.model.Transcript` folds :mod:`nbagent.core.events` into
items: answer text, tool-call cards, deferred-tool banners, notices, a task list and a usage
meter. The live widget view and the static outputs a cell keeps after the run are both drawn
from it, so they always agree, and a notebook read without a kernel (nbconvert, GitHub, VS
Code) shows the same transcript.

What comes from outside is redacted as it is folded in (:mod:`nbagent.core.secrets`): a call's
input, result, summary and question, a search's query, a notice, a task; so no rendering, nor
a line cut short, shows a secret or the start of one. The model's text is redacted where it is
rendered (:func:`~nbagent.core.markup.model_html`,
:attr:`~nbagent.render.transcript.items.AnswerItem.plain`): it streams in piece by piece.

Every renderer takes a mode. The quiet default shows a tool call as one line, its main
argument and its result in a few words (``✓ Read sales.csv → 42 lines``), the input and the
result inside the card; the verbose mode adds the input JSON, status, duration and permission
decision of every call, and the conversation's first announcement of the deferred tools.
Pure Python: no IPython, no widgets.

Modules, each importing only those above it:

- :mod:`~nbagent.render.transcript.items`: the items (answer, call, search, …);
- :mod:`~nbagent.render.transcript.summaries`: the one-line summaries of calls and the meter;
- :mod:`~nbagent.render.transcript.html`, :mod:`~nbagent.render.transcript.markdown`,
  :mod:`~nbagent.render.transcript.text`: the renderings of items;
- :mod:`~nbagent.render.transcript.model`: the :class:`Transcript` that folds events into items
  and renders them whole.
"""
