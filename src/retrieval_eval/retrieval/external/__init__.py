"""Retrieval that lives outside this process.

The user's own system (``custom.py``: a Python factory hosted in a child of its
own by ``factory_host.py``, or a JSON-lines ``command.py``, both run under
``child_process.py``), and the services (``services.py`` builds them from
``services_config.py``'s tables): ``postgres.py``, ``chroma_server.py``,
``http.py`` (answers mapped by ``json_path.py``) and ``run_file.py``.
``answer_reader.py`` streams a command's answer line.
"""
