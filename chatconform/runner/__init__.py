"""Loading and hosting the implementation under test: entry points, ``module:attr``, files,
and each implementation's own process (the built-in host, or an ``exec:`` program)."""
