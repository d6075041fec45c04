"""English function words: they carry no concept of a question (rewrite) and no name (safety)."""

STOPWORDS = frozenset(
    """
a about above after again against all also am an and any are aren't as at be because been before being below
between both but by can cannot could did didn't do does doesn't doing don't down during each either else ever
every few for from further had has have having he her here hers herself him himself his how however i if in
into is isn't it it's its itself just least less let like may me might more most much must my myself neither
no nor not now of off on once only or other ought our ours ourselves out over own per rather really same shall
she should so some such than that the their theirs them themselves then there these they this those through
thus to too under until up upon us very via was we were what whatever when where whether which while who whom
whose why will with within without would yes yet you your yours yourself yourselves
""".split()
)
