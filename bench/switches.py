"""A method's switched-off configuration: the settings under which the paper's mechanism is absent.

Each method file declares, at its top level, one literal `SWITCHED_OFF`:

* a mapping {switch name: what runs in the method's place}, for a method whose mechanism a setting removes. What
  runs is either the method's own config overrides (`{"alpha": 0.0}`), or a pair `("dpo", {"source": "off"})`: another
  registered method and its config, which the method equals bit for bit at that setting (a test in
  tests/methods/<family>/ shows the equality, so the claim is judged on cells the reproduction already ran);
* a string, the reason no setting removes the mechanism (a baseline or an oracle of the paper has none to remove; a
  method whose mechanism is its whole definition says so).

`bench reproduce --controls` judges every claim a second time with each credited method (one that declares switches)
replaced by each of its switches: a claim that still holds is uninformative (leaderboard/claims.py). The conformance
suite checks that every registered method declares one or the other, and `bench list methods` shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.errors import BenchError


@dataclass(frozen=True)
class Switch:
    """One way to switch a method's mechanism off: `method` (the method itself or its bit-identical baseline) run
    with `config` in the switched method's place."""

    name: str
    method: str
    config: dict[str, Any] = field(default_factory=dict)

    def label(self) -> str:
        cfg = ", ".join(f"{k}={v}" for k, v in self.config.items())
        return f"{self.name}: {self.method}" + (f"({cfg})" if cfg else "")


def parse_switches(method: str, declared: Any) -> tuple[Switch, ...] | str:
    """A method's SWITCHED_OFF as switches, or its reason; a malformed declaration is a one-line error."""
    if isinstance(declared, str):
        if not declared.strip():
            raise BenchError(f"method {method}: SWITCHED_OFF is an empty reason; say why no setting removes "
                             "its mechanism, or map switch names to configs")
        return declared.strip()
    if not isinstance(declared, dict) or not declared:
        raise BenchError(f"method {method}: SWITCHED_OFF must be a non-empty mapping {{name: config overrides or "
                         f"(method, config)}} or a string giving the reason there is none, got {declared!r}")
    switches = []
    for name, target in declared.items():
        if isinstance(target, dict):
            switches.append(Switch(str(name), method, dict(target)))
        elif (isinstance(target, (tuple, list)) and len(target) == 2 and isinstance(target[0], str)
              and isinstance(target[1], dict)):
            switches.append(Switch(str(name), target[0], dict(target[1])))
        else:
            raise BenchError(f"method {method}: switch {name!r} must be config overrides {{key: value}} or a pair "
                             f"(method, {{key: value}}), got {target!r}")
    return tuple(switches)
