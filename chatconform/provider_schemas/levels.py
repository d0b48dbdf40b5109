"""The level of every provider-bound check on every provider, and why: the one table.

A failure is an *error* on a provider for one of two reasons, and the table says which:

* **rejection**: the provider answers such a body with an error. The row names the rule of
  docs/provider-rules.md that holds the error text and its source; a check whose failure is a
  rejection is an error only for the providers whose profile (``Provider.check_levels``)
  cites such a rule, and a *warning* elsewhere, whose message says why.
* **conversation**: the provider accepts the body, and the conversation it carries is not
  the stored one (a text lost, turns reordered, another call's result, a failure sent as a
  success). No provider rejects it, so no rule is cited: such a check is an error everywhere.

``schema_valid`` and ``provider_rules`` fail at the level of the rule broken, and cite it in
each failure; ``system_voice`` and ``matches_reference`` are advice (warnings everywhere).
``chatconform list --levels`` prints this table.
"""

from __future__ import annotations

from dataclasses import dataclass

from chatconform.errors import ERROR, WARNING
from chatconform.providers import PROVIDERS
from chatconform.providers.profile import CheckLevel

#: The row of a tool-call id sent twice, each time answered in its own round.
REUSED_ID = "payload.tool_pairing (a reused id)"
#: The row of an answer that holds another call's result.
OWN_RESULT = "payload.tool_pairing (another call's result)"
#: Checks whose failure the provider may reject, each provider's level in its profile.
REJECTION_CHECKS = ("payload.system_first", "payload.user_led", "payload.tool_pairing")
#: Checks of other contracts that map their result to every provider, with the payload check
#: whose levels they take.
MAPPED_CHECKS = {"compaction.user_led": "payload.user_led"}
#: Checks judged by ``validate()``: each failure at the level of the rule broken (its source).
BY_RULE_CHECKS = {"payload.schema_valid": "schema", "payload.provider_rules": "sequence"}
#: Checks whose failure the provider accepts while the conversation changes: error everywhere.
CONVERSATION_CHECKS = {
    OWN_RESULT: "the model reads another round's output as this call's result",
    "payload.error_flag_kept": "the model reads a failed tool call as a result to build on",
    "payload.order_preserved": "the model answers questions in an order they were never asked",
    "payload.nothing_lost": "the model never sees what was dropped",
    "payload.text_boundaries": "the model reads two texts run together as words no one wrote",
}
#: Checks of reasoning sent back, with the family verdict each rests on (``Provider.reasoning_families``):
#: reasoning a model requires kept, reasoning a model rejects not sent, and no signature of another
#: provider sent as this one's (the families that take reasoning back validate it: A21).
REASONING_CHECKS = {
    "payload.reasoning_kept": "required",
    "payload.no_rejected_reasoning": "rejected",
    "payload.no_foreign_signature": "signed",
}
#: The rule a provider rejects a signature it did not make by, where one is known.
SIGNATURE_RULES = {"thinking_blocks": "A21"}

#: Advice: a warning everywhere.
ADVICE_CHECKS = {
    "payload.system_voice": "the text is sent; how a model weighs a system rule given as user text is up to it",
    "payload.matches_reference": "advisory: a body can differ from the reference's and still be right",
}

#: What a row's level rests on.
REJECTION, NO_REJECTION, CONVERSATION, BY_RULE, ADVICE = (
    "rejection", "no rejection known", "conversation", "by rule", "advice")


@dataclass(frozen=True)
class LevelRow:
    """One (check, provider) pair of the table."""

    check: str
    provider: str
    level: str
    #: Rule ids of docs/provider-rules.md behind an error (several for a by-rule check).
    rules: tuple[str, ...]
    why: str
    basis: str


def check_level(check: str, provider: str) -> CheckLevel:
    """The level of a rejection check (or a row such as :data:`REUSED_ID`) for ``provider``."""
    profile = PROVIDERS[provider]
    if check == REUSED_ID:
        return profile.reused_call_id
    return profile.check_levels[MAPPED_CHECKS.get(check, check)]


def variant_levels(check: str) -> dict[str, str]:
    """Provider id -> level of a rejection check, for the providers where it is a warning
    (what ``Contract.check(levels=...)`` takes: the check's own level is error)."""
    levels = {p: check_level(check, p).level for p in PROVIDERS}
    return {p: level for p, level in levels.items() if level != ERROR}


def cite(check: str, provider: str) -> str:
    """What a failure of a rejection check says about its level on ``provider``."""
    level = check_level(check, provider)
    if level.level == ERROR:
        return f"{provider} rejects it: rule {level.rule} of docs/provider-rules.md, {level.evidence}"
    return f"a warning: no rejection known for {provider}; {level.evidence}"


def _by_rule(check: str, provider: str) -> LevelRow:
    from chatconform.provider_schemas.rules import RULES

    source = BY_RULE_CHECKS[check]
    # A model-content rule (O16, Z3) is reported with the schema's problems.
    rules = [info for info in RULES[provider].values()
             if source in info.check.split("+") or (source == "schema" and info.check == "content")]
    errors = tuple(info.id for info in rules if info.severity == ERROR)
    warnings = [info.id for info in rules if info.severity != ERROR]
    why = "the level of the rule broken" + (f"; warnings: {', '.join(warnings)}" if warnings else "")
    if not rules:
        why = f"no {source} rule known for {provider}: nothing to break"
    return LevelRow(check, provider, ERROR if errors else WARNING, errors, why, BY_RULE)


def reasoning_level(check: str, provider: str) -> CheckLevel:
    """The level of a reasoning check on ``provider``: an error citing the rule of the first
    family with that verdict, else a warning saying no rejection is known."""
    profile = PROVIDERS[provider]
    verdict = REASONING_CHECKS[check]
    if verdict == "signed":
        rule = SIGNATURE_RULES.get(profile.reasoning_slot or "")
        if rule:
            return CheckLevel(ERROR, "a signature it did not make is invalid: 'Invalid `signature` in `thinking` "
                                     "block'", rule=rule)
        return CheckLevel(WARNING, "no rejection of a foreign signature recorded")
    family = next((f for f in profile.reasoning_families if f.replay == verdict), None)
    if family is None:
        return CheckLevel(WARNING, f"no model of {provider} known to have reasoning {verdict} in its history")
    return CheckLevel(ERROR, f"{family.family} ({family.date}, {family.evidence})", rule=family.rule)


def reasoning_levels(check: str) -> dict[str, str]:
    """Provider id -> level of a reasoning check, for the providers where it is a warning."""
    return {p: level.level for p in PROVIDERS if (level := reasoning_level(check, p)).level != ERROR}


def _row(check: str, provider: str) -> LevelRow:
    if check in REASONING_CHECKS:
        level = reasoning_level(check, provider)
        rules = (level.rule,) if level.rule else ()
        return LevelRow(check, provider, level.level, rules, level.evidence,
                        REJECTION if level.level == ERROR else NO_REJECTION)
    if check in BY_RULE_CHECKS:
        return _by_rule(check, provider)
    if check in CONVERSATION_CHECKS:
        return LevelRow(check, provider, ERROR, (), CONVERSATION_CHECKS[check], CONVERSATION)
    if check in ADVICE_CHECKS:
        return LevelRow(check, provider, WARNING, (), ADVICE_CHECKS[check], ADVICE)
    level = check_level(check, provider)
    if level.level == ERROR:
        return LevelRow(check, provider, ERROR, (level.rule,) if level.rule else (), level.evidence, REJECTION)
    return LevelRow(check, provider, level.level, (), level.evidence, NO_REJECTION)


#: Every row name of the table, in the order it is printed.
CHECKS: tuple[str, ...] = (*BY_RULE_CHECKS, *REJECTION_CHECKS, REUSED_ID, *REASONING_CHECKS, *CONVERSATION_CHECKS,
                           *ADVICE_CHECKS, *MAPPED_CHECKS)


def level_table() -> list[LevelRow]:
    """Every (check, provider) pair: its level, the rules it rests on and why."""
    return [_row(check, provider) for check in CHECKS for provider in PROVIDERS]
