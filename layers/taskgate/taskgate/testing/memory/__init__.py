"""In-memory ports: the domain's ports (``taskgate.domain.ports``, ``taskgate.domain.sessions``)
over plain dicts, one module per port, for tests and the bench. No DynamoDB item encoding, no
botocore, no network. ``MemoryTaskStore`` honours the domain's transition table, as the
DynamoDB store's condition expressions do (tests/integration/test_transitions.py runs one
matrix against both); it and ``MemorySessionStore`` refuse an item DynamoDB would refuse
(400 KB). ``Memory().ports()`` hands them to the composition root (``taskgate.root.Taskgate``).
"""

from .blobs import MemoryBlobs
from .clock import FakeClock
from .jobs import MemoryJobs
from .ports import Memory
from .sessions import MemorySessionStore
from .sign_in import MemorySignInStore
from .store import DYNAMODB_ITEM_BYTES, MemoryTaskStore
from .workflow import MemoryWorkflow

__all__ = [
    "DYNAMODB_ITEM_BYTES",
    "FakeClock",
    "Memory",
    "MemoryBlobs",
    "MemoryJobs",
    "MemorySessionStore",
    "MemorySignInStore",
    "MemoryTaskStore",
    "MemoryWorkflow",
]
