"""Auto: the cost model, the policy that picks k, and the choice of drafter each cycle."""
