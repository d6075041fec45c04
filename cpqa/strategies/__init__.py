"""Answer-quality strategies from the medical RAG literature, each a switchable pipeline option (issue 10).

One module per strategy: ``adaptive`` (decide whether to retrieve), ``expansion`` (HyDE / Query2Doc
pseudo-responses, multi-query fusion), ``small_to_big`` (give the model the enclosing section or neighbouring
passages), ``repack`` (against "lost in the middle"), ``restructure`` (topics, TextRank, reranked topics),
``refine`` (COT-Refine). ``options.StrategyOptions`` holds the switches (all off by default);
``runner.Strategies`` applies them inside the pipeline.
"""
