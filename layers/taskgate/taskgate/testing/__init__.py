"""Testing taskgate, and tools on it, without AWS: in-memory ports (``taskgate.testing.memory``)
for the composition root. Never in the built layer (layers/Makefile removes it, as ``local``)."""
