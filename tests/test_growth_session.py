"""A request late in a long session costs the client about what one early in it costs.

Each request used to serialise (and the SDK to walk) the whole history again: at turn 400 a request cost
the client 17 times what it cost at turn 10. The bound is a ratio, measured in the same run (the client's
CPU time per request, the scripted server excluded), so it holds on any machine.
"""

from __future__ import annotations

from bench.growth_session import request_costs


async def test_a_request_at_turn_400_costs_about_what_one_at_turn_10_costs() -> None:
    ratios = []
    for _ in range(3):
        costs = await request_costs((10, 400), samples=5)
        ratios.append(min(costs[400]) / min(costs[10]))
        if ratios[-1] < 3:
            break
    assert min(ratios) < 3, f"per-request client cost at turn 400 / turn 10: {ratios}"
