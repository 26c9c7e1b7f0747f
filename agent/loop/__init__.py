"""The turn state machine (``turn.py``) and its phases, one module each."""
