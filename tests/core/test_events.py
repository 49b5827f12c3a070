"""Tests of nbagent.core.events: the stop reasons match the SDK's."""

from __future__ import annotations

from typing import get_args

from anthropic.types import StopReason as SdkStopReason
from anthropic.types.beta import BetaStopReason

from nbagent.core.events import RunStopReason, StopReason


def test_the_stop_reasons_are_the_apis_beta_ones_included() -> None:
    assert set(get_args(StopReason)) == set(get_args(BetaStopReason)) | set(get_args(SdkStopReason))


def test_a_run_ends_for_a_stop_reason_of_the_api_or_for_its_own() -> None:
    own = set(get_args(RunStopReason)) - set(get_args(StopReason))
    assert own == {"max_turns", "interrupted", "budget"}
