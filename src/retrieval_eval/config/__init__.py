"""The option table: every setting, built from its one declaration on the settings model.

``table`` lists the settings (key, type, default, line of documentation, where each may
come from, which commit a pull request's run reads it from); ``split`` takes each from the
commit the table names; ``flags`` and ``markdown`` make the command-line options and the
documentation's tables from it.
"""
