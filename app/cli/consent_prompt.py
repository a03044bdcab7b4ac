"""The user's consent asked in the terminal (``tapwise run``): before the first request of
a run goes to a model server that is not on this machine, the exact (redacted) text is
printed and the user answers send or not; before a step goes to the bigger model, once,
for this task, or no.  Without a terminal to ask on (input closed) the answer is no."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.prompt import Prompt

from agent.privacy.types import ConsentAnswer, ConsentKind, ConsentQuestion


class TerminalGate:
    def __init__(self, console: Console) -> None:
        self.console = console

    def ask(self, question: ConsentQuestion) -> ConsentAnswer:
        c = self.console
        try:
            if question.kind is ConsentKind.SEND:
                c.rule(f"request to {escape(question.server)} ({escape(question.model)}), not on this machine")
                c.print(escape(question.sent), soft_wrap=True, highlight=False)
                c.rule(f"replaced: {escape(question.replaced_summary() or 'nothing')}"
                       + (f"; {question.images} screenshot(s) not redacted" if question.images else ""))
                answer = Prompt.ask("Send this run's requests there, redacted like this? [y]es, [n]o",
                                    choices=["y", "n"], default="n", console=c)
                return ConsentAnswer.ONCE if answer == "y" else ConsentAnswer.NO
            c.print(f"[magenta]This step would go to the bigger model {escape(question.model)}:[/] "
                    f"{escape(question.reason)}")
            answer = Prompt.ask("Ask it? [o]nce, for this [t]ask (remembered), [n]o", choices=["o", "t", "n"],
                                default="o", console=c)
            return {"o": ConsentAnswer.ONCE, "t": ConsentAnswer.TASK}.get(answer, ConsentAnswer.NO)
        except EOFError:
            return ConsentAnswer.NO
