"""A scripted stand-in for an LLM client, for benchmarks that check wiring (does a
retrieved demonstration reach the planner's prompt?) without a model, and a wrapper that
keeps the text of every reply for a report.  Its success rates measure plumbing, never a
model's planning ability; benchmarks label its figures so.
"""

from __future__ import annotations


class ScriptedLLM:
    """A scripted stand-in for an LLM, for checking the PBD wiring ONLY.

    Without examples in the prompt it taps the element whose words share most with the
    goal (or gives up); with examples it follows the first example's steps one by one,
    finding each step's quoted name among the screen's elements.  Its success rates
    measure the retrieval and prompting plumbing, not any model's planning ability.
    """

    model = "scripted-fake"

    def list_models(self) -> list[str]:
        return [self.model]

    def chat(self, request, cancel=None):  # type: ignore[no-untyped-def]
        import re

        from agent.llm.base import LLMReply
        from agent.types import LLMCall

        prompt = request.prompt
        text = self._answer(prompt, re)
        return LLMReply(text=text, call=LLMCall(purpose=request.purpose, model=self.model, prompt=prompt, reply=text))

    @staticmethod
    def _elements(prompt: str, re) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
        return [(m.group(1), m.group(2).strip()) for m in re.finditer(r"\[(\w+)\][^\n]*?['\"]?([^\n\[\]]*)", prompt)]

    def _answer(self, prompt: str, re) -> str:  # type: ignore[no-untyped-def]
        goal = re.search(r"Task: (.*)", prompt)
        history = re.search(r"Actions taken so far: (.*)", prompt)
        done = 0 if not history or history.group(1).strip() == "none yet" else len(history.group(1).split(" -> "))
        screen = prompt.split("Current screen", 1)[-1]
        lines = [ln for ln in screen.splitlines() if re.search(r"\[\w+\]", ln)]
        ex = re.search(r"Examples of how similar tasks were done before:\n- (.*)", prompt)
        if ex:
            sol = ex.group(1).split("Solution: ", 1)[-1]
            steps = [s.strip() for s in sol.split(" -> ")]
            if done >= len(steps):
                return "done"
            step = steps[done]
            m = re.search(r"'([^']+)'", step)
            if step.startswith("open"):
                return f"open {m.group(1) if m else step[5:]}"
            if step.startswith("scroll"):
                return "scroll down"
            if step.startswith("type"):
                quoted = re.findall(r"'([^']+)'", step)
                field = next((ln for ln in lines if len(quoted) > 1 and quoted[1] in ln), None)
                if field is None:
                    return f"type '{quoted[0]}'" if quoted else "impossible"
                eid = re.search(r"\[(\w+)\]", field).group(1)
                return f"type '{quoted[0]}' in [{eid}] {quoted[1]}"
            if m:
                for ln in lines:
                    if m.group(1) in ln:
                        eid = re.search(r"\[(\w+)\]", ln).group(1)
                        return f"tap [{eid}] {m.group(1)}"
            return "impossible"
        words = set(re.findall(r"[a-z]+", (goal.group(1) if goal else "").lower())) - {"the", "my", "a", "to", "on", "off", "turn"}
        if done == 0 and "Settings" in screen:
            return "open Settings"
        best, best_n = None, 0
        for ln in lines:
            n = len(words & set(re.findall(r"[a-z]+", ln.lower())))
            if n > best_n:
                best, best_n = ln, n
        if best is None or done > 6:
            return "impossible"
        eid = re.search(r"\[(\w+)\]", best).group(1)
        return f"tap [{eid}] {best.split(']', 1)[-1].strip()[:40]}"


class ReplyLog:
    """Wraps an LLM client and keeps the text of every reply, for the report."""

    def __init__(self, client) -> None:  # type: ignore[no-untyped-def]
        self.client, self.model, self.replies = client, client.model, []

    def list_models(self) -> list[str]:
        return self.client.list_models()

    def chat(self, request, cancel=None):  # type: ignore[no-untyped-def]
        reply = self.client.chat(request, cancel)
        self.replies.append(reply.text.strip()[:120])
        return reply
