"""German to English translation, chapter 16: ``data`` (the sentence pairs, the splits and the
subword vocabulary), ``train`` (the model, its training, shipping, decoding and scoring).
``python -m utils.tasks.translation`` runs its commands."""
