"""The rules: one module per code (``al201_write_through_view.py``), each declaring its
``RULE`` and the checks that find it; ``common`` holds what several rules share.
``aliaslint.registry`` collects them."""
