"""What a host process and the process that starts it agree on, in a module of its own so
that neither imports the other for it: the host's exit statuses when an implementation does
not load, the start of the stderr line that says why, and the memory cap it reads."""

from __future__ import annotations

#: The host's exit status when the spec does not load, and when its library is missing;
#: the start of its stderr line that says why.
LOAD_FAILED, MISSING_LIBRARY = 2, 3
LOAD_ERROR = "chatconform host: "
#: The memory a host may map, in MiB, unless the run sets another (``run --memory-limit``,
#: which sets this variable; 0: no cap).
DEFAULT_MEMORY_MIB = 4096
MEMORY_VARIABLE = "CHATCONFORM_HOST_MEMORY_MIB"
