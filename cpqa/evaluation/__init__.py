"""The evaluation harness, outside the product: ``data`` (gold and question sets), ``stats`` (metrics,
significance), ``evaluations`` (``cpqa eval``), ``benchmarks`` (``cpqa bench``) and ``cli`` (both command groups,
registered through the ``cpqa.commands`` entry point). It runs the product's own objects, never copies of them."""
