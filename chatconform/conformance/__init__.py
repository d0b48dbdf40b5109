"""The conformance tests pytest collects: ``pytest --pyargs chatconform.conformance
--chatconform-impl=NAME``, one test item per (implementation, check) (the plugin,
:mod:`chatconform.plugin`, makes them)."""
