"""A model whose answer depends on the pixels: it decodes the video it is given and answers the
listed option whose colour is nearest the clip's mean colour (``..reading``). So a corruption that
moves the colours moves its score, and one that keeps them does not."""
from __future__ import annotations

from lmms_eval.api.model import lmms

from ..reading import answer


class ColourReader(lmms):
    """Answers "which colour fills the clip?" from the decoded pixels; no weights, no device."""

    def __init__(self, **kwargs) -> None:
        super().__init__()

    def generate_until(self, requests) -> list[str]:
        replies = []
        for context, _, doc_to_visual, doc_id, task, split in [r.args for r in requests]:
            visuals = doc_to_visual(self.task_dict[task][split][doc_id])
            replies.append(answer(context, [str(v) for v in visuals]))
        return replies

    def generate_until_multi_round(self, requests) -> list[str]:
        return self.generate_until(requests)

    def loglikelihood(self, requests) -> list[tuple[float, bool]]:
        raise NotImplementedError("colour_reader only generates")
