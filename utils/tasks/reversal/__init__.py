"""The toy task of chapters 10, 11 and 13: reverse a short sequence of letters.

``task`` (the data, the training run, exact match, the tiny model's shipped checkpoints),
``reference_run`` (the shipped log of chapter 10's run). ``python -m utils.tasks.reversal``
makes both again."""
