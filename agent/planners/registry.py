"""The one planner catalogue: every planner a run can use, by name, with what it is
built from (planner, grounder, assessor, latent estimator).

``PLANNERS`` is the list a menu shows; ``check_planner`` turns what a user typed into a
catalogue name; ``make_planner`` builds the planner alone and ``planner_bundle`` the
whole set a run takes.  Each entry is a small factory in ``_FACTORIES`` (a registry, not
an if/elif chain): adding a planner is one entry here.  Builds objects only: no I/O,
no prompting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.llm.base import LLMClient
from agent.planners.base import Planner, Structured
from agent.types import Autonomy

if TYPE_CHECKING:
    from agent.grounding.assessment import Assessor
    from agent.grounding.base import Grounder
    from agent.latent import LatentEstimator

PROMPT2TASK = "prompt2task"
#: The planner that fits the model's speed (``auto_planner``); the settings' default.
AUTO = "auto"
#: What a step may cost the user in waiting, seconds: ``auto`` keeps to one model call per
#: step when the model's calls are slower than this allows for the six of zero-shot+.
STEP_BUDGET_S = 20.0
#: Model calls per step of ``zeroshot+`` (four estimates, the plan, the completion check).
_LATENT_CALLS = 6


@dataclass(frozen=True, slots=True)
class PlannerChoice:
    """A planner the user can pick: its name (what ``planner_bundle`` takes) and label."""

    name: str
    label: str


#: Every planner a run can use, in the order a menu shows them.
PLANNERS: tuple[PlannerChoice, ...] = (
    PlannerChoice(AUTO, "Automatic: fits the model's speed"),
    PlannerChoice("zeroshot+", "Zero-shot + latent state"),
    PlannerChoice("zeroshot-", "Zero-shot"),
    PlannerChoice("cotsc+", "Chain-of-thought self-consistency + latent state"),
    PlannerChoice("cotsc-", "Chain-of-thought self-consistency"),
    PlannerChoice("react+", "ReAct + latent state"),
    PlannerChoice("react-", "ReAct"),
    PlannerChoice("visiontasker", "VisionTasker step planner"),
    PlannerChoice("chain", "Chain-of-action"),
    PlannerChoice(PROMPT2TASK, "Prompt2Task pipeline"),
    PlannerChoice("adapter", "The model's own action format (GUI-agent models)"),
)
PLANNER_NAMES: tuple[str, ...] = tuple(p.name for p in PLANNERS)

_ALIASES = {"vt": "visiontasker", "chain-of-action": "chain", "coa": "chain", "autoui": "chain"}


def auto_planner(seconds_per_call: float | None) -> str:
    """The planner ``auto`` stands for: zero-shot with latent state when the model's calls
    are quick enough (or their speed is unknown), else VisionTasker (one call per step)."""
    if seconds_per_call is not None and seconds_per_call * _LATENT_CALLS > STEP_BUDGET_S:
        return "visiontasker"
    return "zeroshot+"


def check_planner(name: str) -> str:
    """The planner's catalogue name (``adapter:<family>`` names one adapter family);
    ``ValueError`` naming the choices when unknown."""
    n = name.strip().lower()
    n = _ALIASES.get(n, n)
    if n in PLANNER_NAMES or (n.startswith("adapter:") and n != "adapter:"):
        return n
    raise ValueError(f"unknown planner {name!r}; choose one of: {', '.join(PLANNER_NAMES)}")


@dataclass(frozen=True, slots=True)
class _Build:
    """What every factory is given."""

    client: LLMClient
    structured: Structured
    samples: int
    temperature: float


def _paper(method: str, latent: bool) -> Callable[[_Build], Planner]:
    def build(b: _Build) -> Planner:
        from agent.planners.paper import PaperPlanner

        return PaperPlanner(b.client, method, uses_latent=latent, samples=b.samples, temperature=b.temperature,
                            structured=b.structured)

    return build


def _visiontasker(b: _Build) -> Planner:
    from agent.planners.visiontasker import VisionTaskerPlanner

    return VisionTaskerPlanner(b.client, structured=b.structured)


def _chain(b: _Build) -> Planner:
    from agent.planners.chain_of_action import ChainOfActionPlanner

    return ChainOfActionPlanner(b.client, structured=b.structured)


_FACTORIES: dict[str, Callable[[_Build], Planner]] = {
    **{f"{m}{s}": _paper(m, s == "+") for m in ("zeroshot", "cotsc", "react") for s in "+-"},
    "visiontasker": _visiontasker,
    "chain": _chain,
    PROMPT2TASK: _paper("zeroshot", True),  # its planner; the ladder and assessor come in the bundle
}


def make_planner(name: str, client: LLMClient, *, samples: int = 8, temperature: float = 0.5,
                 constrained: bool = False, apps: Sequence[str] = ()) -> Planner:
    """The planner called ``name``.  ``constrained`` asks for structured replies built per
    screen (used when the client's server enforces JSON schemas); ``apps`` are the
    installed apps' names the replies may open (empty: any name)."""
    n = check_planner(name)
    if n == AUTO:
        n = auto_planner(None)
    if n == "adapter" or n.startswith("adapter:"):  # a GUI model's own format: agent.planners.adapter
        from agent.planners.adapter import make_adapter_planner

        return make_adapter_planner(n, client)
    build = _Build(client, Structured(enabled=constrained, apps=tuple(apps)), samples, temperature)
    return _FACTORIES[n](build)


@dataclass(frozen=True, slots=True)
class PlannerBundle:
    """What ``run_episode`` takes besides the device, parser and store."""

    planner: Planner
    grounder: Grounder
    assessor: Assessor | None = None
    estimator: LatentEstimator | None = None


def planner_bundle(name: str, client: LLMClient, *, autonomy: Autonomy | str = Autonomy.APPROVE,
                   samples: int = 8, temperature: float = 0.5, fused: bool = False, llm_grounder: bool = True,
                   constrained: bool = False, apps: Sequence[str] = ()) -> PlannerBundle:
    """The planner called ``name`` with its grounder, assessor and estimator.

    ``prompt2task`` is the zero-shot planner with latent state, the grounding ladder and
    the assessor.  Otherwise the assessor runs when the autonomy is ``confident`` (it
    says when to ask); ``fused`` estimates latent state in one call; ``llm_grounder``
    asks the model when no element's words match.
    """
    from agent.grounding.assessment import Assessor
    from agent.grounding.base import ElementGrounder
    from agent.grounding.llm_grounder import LLMGrounder
    from agent.latent import ChainedEstimator, FusedEstimator

    name = check_planner(name)
    if name == AUTO:
        name = auto_planner(None)
    structured = constrained  # every call of the run asks for the same kind of reply
    planner = make_planner(name, client, samples=samples, temperature=temperature, constrained=constrained,
                           apps=apps)
    if name == PROMPT2TASK:
        from agent.grounding.ladder import LadderGrounder

        return PlannerBundle(planner, LadderGrounder(client, structured=structured),
                             Assessor(client, structured=structured), ChainedEstimator(client, structured=structured))
    estimator: LatentEstimator | None = None
    if planner.uses_latent:
        estimator = (FusedEstimator(client, structured=structured) if fused
                     else ChainedEstimator(client, structured=structured))
    assessor = Assessor(client, structured=structured) if Autonomy(autonomy) is Autonomy.CONFIDENT else None
    grounder = ElementGrounder(llm=LLMGrounder(client, structured=structured) if llm_grounder else None)
    return PlannerBundle(planner, grounder, assessor, estimator)
