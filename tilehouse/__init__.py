"""The ``tilehouse`` namespace for the optional parts named after the distribution: ``tilehouse.agents``
(``pip install 'tilehouse[agents]'``: PettingZoo environments).  The server itself lives in the
top-level packages ``engine``, ``ai`` and ``service``; importing this package imports none of the extras."""
