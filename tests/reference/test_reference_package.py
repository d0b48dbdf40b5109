"""The reference package: ``ReferenceImplementation`` gathers every contract's reference.

Each reference module names its contract methods and settings; the package makes one
implementation of them all, named ``reference``, that runs wherever an implementation
given by its spec runs (worker processes load it by ``chatconform.reference:ReferenceImplementation``).
"""

import importlib
import inspect

from chatconform.contracts import all_contracts
from chatconform.providers import PROVIDER_IDS
from chatconform.reference import ReferenceImplementation
from chatconform.runner.discovery import REFERENCE_TARGET, load, load_object, portable_spec
from chatconform.version import __version__


def test_every_contract_method_is_its_reference_module_s_function():
    reference = ReferenceImplementation()
    for contract in all_contracts().values():
        if contract.composes:  # its reference is the reference of the methods it composes
            continue
        module = importlib.import_module(contract.reference_module)
        for method in contract.wire():
            assert getattr(reference, method.name) is getattr(module, method.name), (contract.name, method.name)
            assert isinstance(inspect.getattr_static(ReferenceImplementation, method.name), staticmethod)


def test_its_settings_are_the_reference_modules_settings():
    assert ReferenceImplementation.providers == frozenset(PROVIDER_IDS)


def test_it_is_named_reference_at_the_package_version():
    assert ReferenceImplementation.name == "reference" and ReferenceImplementation.version == __version__
    assert inspect.getdoc(ReferenceImplementation) == "Defines the expected behaviour of every contract."


def test_a_worker_loads_it_by_its_spec():
    impl = load_object(ReferenceImplementation, in_process=True)
    assert portable_spec(impl) == REFERENCE_TARGET == "chatconform.reference:ReferenceImplementation"
    assert load(REFERENCE_TARGET, in_process=True).name == "reference"
