"""What the tests share and are not tests themselves: the captured streams and the targets
(support.py), a copy of the project and the generator run on it (project.py), loopback
servers, the real clients' judges and the invariants they need, the agents' harness, the
ledger's sources, the mutation fuzzer's inputs, golden records (`python -m
tests.helpers.golden`), and setup shared by pytest-xdist workers."""
