"""Test harness for the ACP face: the recording tee, the test client, frame validation, agent start-up."""
