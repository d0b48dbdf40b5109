"""The installed version of chatconform (``0+unknown`` when run from a source tree)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("chatconform")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"
