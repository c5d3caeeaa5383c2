"""Layer 3, training as paper section 5 describes it, for any task.

``batching`` (5.1: batches by length), ``recipe`` (5.3-5.4: the schedule, Adam, label
smoothing, one training step), ``checkpoints`` (files of weights: read, list, average),
``loop`` (the one loop every task runs). They import ``utils.model`` and ``utils.core``,
never a task."""
