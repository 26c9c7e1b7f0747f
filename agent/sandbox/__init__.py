"""The OS sandbox for the commands agentls runs itself: bubblewrap, Landlock, Seatbelt.

``session.CommandSandbox`` decides per command (confined, unconfined or refused), ``wrap.confine`` builds
the command line, ``detect.detect`` finds what works here, once; ``denial`` reads a refusal from a failed
command's output. Nothing is imported here, so ``host`` can name ``policy.Confinement`` cheaply.
See docs/reliability.md, "Sandbox".
"""
