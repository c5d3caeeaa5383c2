"""The book's own tooling (with ``utils.exercises`` and ``utils.figures``, the top layer):
``layout`` (tables and wrapped text that fit the page), ``plotting`` (heat maps),
``prose`` (numbers glued into the text), the Sphinx extension and edition builder
(``course_book``, ``editions``, ``translations``, ``french_outputs``, ``offline_math``), and the student copy
of the repository (``student_repo``, ``bash .ci/student-repo``)."""
