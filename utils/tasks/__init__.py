"""Layer 4, the course's tasks, each on its own: ``reversal`` (the toy task of chapter 10),
``g2p`` (pronunciation from spelling, chapter 15), ``translation`` (German to English,
chapter 16). A task imports the layers below, never another task."""
