"""A turn over the agent's parts (``parts.TurnParts``): ``turn.py`` from the user's message to the result,
``rounds.py`` the state machine, and one module per phase."""
