"""One root: ``except ChatconformError`` catches anything chatconform raises, but the stop."""

import inspect

from chatconform import errors


def test_every_exception_of_errors_derives_from_the_root_but_the_stop():
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass)
               if issubclass(c, BaseException) and c.__module__ == errors.__name__]
    outside = sorted(c.__name__ for c in classes if not issubclass(c, errors.ChatconformError))
    assert outside == ["Interrupted"]
    # the stop stays a KeyboardInterrupt, which `except Exception` does not catch
    assert issubclass(errors.Interrupted, KeyboardInterrupt) and not issubclass(errors.Interrupted, Exception)
