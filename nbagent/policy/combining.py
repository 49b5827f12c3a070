"""One decision for a call: a tool's ``check_permission`` hook and the agent's policy combined.

Deny wins over ask, ask over allow; the user's explicit allow (a rule, bypass mode) beats a
tool's default ask; with no opinion at all a call is allowed. An ``ask`` goes to the agent's
asker (a prompt on the kernel's stdin, a test's answer); with no asker it is denied.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from nbagent.policy.decisions import RANK, PermissionDecision, Policy, allow, deny
from nbagent.policy.permissions import PermissionPolicy

if TYPE_CHECKING:
    from nbagent.core.tool import Tool


def _as_decision(value: Any, rule: str) -> PermissionDecision | None:
    """Accept a decision, a bool (allow / deny) or None from a hook."""
    if value is None or isinstance(value, PermissionDecision):
        return value
    if value is True:
        return allow(rule)
    if value is False:
        return deny("Permission to use this tool was denied.", rule)
    raise TypeError(f"A permission hook returned {value!r}; return a PermissionDecision.")


def decide(tool: Tool, tool_input: Mapping[str, Any], policy: Policy | None) -> PermissionDecision:
    """Combine the tool's hook and the agent's policy into one decision.

    A tool that declares what it touches is still judged by :meth:`PermissionPolicy.baseline`
    (credentials, private addresses, the working folder) when the agent has no policy.

    Args:
        tool: The tool called.
        tool_input: Its input.
        policy: The agent's policy, if any.

    Returns:
        A deny if anyone denies; else the user's explicit allow (a rule, bypass mode) if there
        is one; else the strictest (ask over allow); allow when nobody has an opinion. A
        question carries the words of a hook that only explains
        (:func:`~nbagent.policy.decisions.explain`) after the policy's reason.

    Raises:
        ToolError: The tool's hook found that the call cannot be made (no such cell, say): it
            fails with that message, an error rather than a refusal, and nobody is asked.
    """
    hook = (
        _as_decision(tool.check_permission(tool_input), f"{tool.name}.check_permission")
        if tool.check_permission
        else None
    )
    words = None
    if hook is not None and hook.explains:
        words, hook = hook, None  # words for the question, no opinion
    if policy is None and tool.touches is not None:
        policy = PermissionPolicy().baseline
    given = [d for d in (hook, policy(tool, tool_input) if policy else None) if d is not None]
    if not given:
        return allow()
    strictest = max(given, key=lambda d: RANK[d.behavior])
    if strictest.behavior == "deny":
        return strictest
    chosen = next((d for d in given if d.explicit), strictest)
    if chosen.behavior == "ask" and words is not None:
        message = "\n\n".join(part for part in (chosen.message, words.message) if part)
        chosen = replace(chosen, message=message, request=chosen.request or words.request)
    if chosen.behavior == "ask" and not chosen.always:
        offered = next((d.always for d in given if d.always), "")
        chosen = replace(chosen, always=offered or ("" if tool.touches else tool.name))
    return chosen
