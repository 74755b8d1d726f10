"""Sequential index policies: UCB1, KL-UCB, MOSS, Bayes-UCB, Thompson sampling, with
their engines (the numpy lock-step runner ``lockstep`` and the compiled trials
``kernels``).
"""
