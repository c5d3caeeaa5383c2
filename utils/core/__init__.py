"""Layer 1, the ground floor: what every other layer uses and nothing of the course's own.

``checks`` (input checks with clear messages), ``numerics`` (the three kinds of printed
numbers and the replay tolerance), ``env`` (seeds, threads, where the shipped files are),
``masks`` (the special ids and the masks of section 3.2.3). These modules import only
each other."""
