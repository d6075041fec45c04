"""The ``cpqa eval`` and ``cpqa bench`` command groups, registered through the ``cpqa.commands`` entry point."""
